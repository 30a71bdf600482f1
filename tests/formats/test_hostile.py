"""Small files that once crashed a reader or held a CPU for minutes: each must now give a
document or a client error, within the per-test timeout (no timing is asserted)."""

from __future__ import annotations

import contextlib

import pytest

from dragoman.errors import ClientError, InvalidFile
from dragoman.formats import FORMATS, Format
from dragoman.formats.markup import Code, Marked
from tests.formats import test_docx, test_xlsx
from tests.formats.helpers import letters, run, units

CUE = b"1\n00:00:01,000 --> 00:00:02,000\n"


def read_or_refuse(fmt: Format, data: bytes) -> None:
    with contextlib.suppress(ClientError):
        run(fmt, data, letters)


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "data",
    [
        b"0" * 20_000,  # the srt library's pattern: cubic in a run of digits
        b"1." + b"0" * 5_000 + b"\n" * 5_000,
        CUE + b"x" + b"\n" * 50_000 + b"y\n",
        CUE + b"0\n" * 20_000,
        (CUE + b"x\n") * 5_000,
    ],
)
def test_srt_reading_is_linear(data: bytes) -> None:
    read_or_refuse(FORMATS["srt"], data)


@pytest.mark.parametrize(
    "timing",
    [b"99999999999999999999:00:00,000 --> 00:00:01,000", b"0:0:0 --> 0:99999999999999999999:0"],
)
def test_srt_overflowing_timestamp_is_a_client_error(timing: bytes) -> None:
    with pytest.raises(InvalidFile, match=r"x\.srt: line 1: not a subtitle cue"):
        FORMATS["srt"].extract(b"1\n" + timing + b"\nHi\n\n", filename="x.srt")


def test_srt_cues_without_blank_lines_and_with_blank_lines_inside() -> None:
    data = CUE + b"One\n2\n00:00:03,000 --> 00:00:04,000\nTwo\n\nstill two\n\n"
    assert [u.plain for u in units(FORMATS["srt"], data)] == ["One", "Twostill two"]
    assert run(FORMATS["srt"], data) == data


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "data",
    [
        b"<p>" + b"a<!-- c -->" * 20_000 + b"</p>",
        b"<div>" * 20_000 + b"x" + b"</div>" * 20_000,
        b"<p>" + b"<b>" * 20_000 + b"x" + b"</b>" * 20_000,
        b"<p>" + b"<b>x" * 20_000,
        b"<p>" + b"&amp;x" * 20_000,
    ],
)
def test_html_comments_and_nesting_take_linear_time(data: bytes) -> None:
    read_or_refuse(FORMATS["html"], data)


@pytest.mark.timeout(20)
def test_marked_units_of_many_pieces_are_built_in_linear_time() -> None:
    pieces = ["word " * 40] * 20_000
    assert Marked.of(pieces).plain == "".join(pieces)
    mixed = Marked.of([*pieces, Code("ph", 1), *pieces])
    assert len(mixed.tokens) == 3


@pytest.mark.parametrize("name", ["docx", "pptx", "odt", "xlsx"])
def test_damaged_zip_offsets_are_a_client_error(name: str) -> None:
    data = test_docx.sample() if name != "xlsx" else test_xlsx.package()
    with pytest.raises(InvalidFile):
        FORMATS[name].extract(data[1:], filename=f"x.{name}")  # every offset one too far
