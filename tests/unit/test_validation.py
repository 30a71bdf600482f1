import pytest

from dragoman.errors import InvalidRequest, InvalidSegment, PayloadTooLarge
from dragoman.models import Document
from dragoman.validation import check_segments


def check(*segments: str, max_segments: int = 10, max_chars: int = 20) -> int:
    return check_segments(
        [Document("d", list(segments))], max_segments=max_segments, max_chars=max_chars
    )


def test_counts_segments_of_all_documents() -> None:
    docs = [Document("a", ["x", "y"]), Document("b", ["z"])]
    assert check_segments(docs, max_segments=10, max_chars=10) == 3


def test_a_job_without_segments_is_refused() -> None:
    with pytest.raises(InvalidRequest):
        check()


def test_too_many_segments_is_413() -> None:
    with pytest.raises(PayloadTooLarge):
        check("a", "b", "c", max_segments=2)


def test_a_segment_too_long_is_named() -> None:
    with pytest.raises(PayloadTooLarge, match=r"segments\[1\]"):
        check("ok", "x" * 21)


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x1b", "\x7f", "\x85", "\ud800"])
def test_control_characters_are_refused_naming_the_segment(char: str) -> None:
    with pytest.raises(InvalidSegment, match=r"documents\[0\]\.segments\[1\]"):
        check("fine", f"a{char}b")


@pytest.mark.parametrize("text", ["tab\there", "cr\rlf\n", "^$[]{}\\/@*#<>", "ñ 漢字 🙂"])
def test_tab_newlines_and_stream_characters_are_accepted(text: str) -> None:
    assert check(text, max_chars=100) == 1
