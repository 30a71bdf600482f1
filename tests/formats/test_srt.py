from __future__ import annotations

from pathlib import Path

import pytest
import srt

from dragoman.errors import InvalidFile
from dragoman.formats import by_name, for_file
from dragoman.formats.markup import Code, Marked
from dragoman.formats.srt import FORMAT
from tests.formats.helpers import BACK, changed_runs, letters, pseudo, run, units

DATA = Path(__file__).parent.parent / "data" / "formats" / "srt"
MOVIE = (DATA / "movie.srt").read_bytes()


def test_registered() -> None:
    assert by_name("srt") is FORMAT and for_file("film.en.srt") is FORMAT
    assert FORMAT.media_type == "application/x-subrip"


def test_units_are_cues_with_line_breaks_and_tags_as_codes() -> None:
    assert [u.stored() for u in units(FORMAT, MOVIE)] == [
        "<g1>Hello there,</g1><x2/>my old friend.",
        "<x1/>Look up!",
        "<g1>Yellow words</g1> and <g2>bold</g2><x3/>second line<x4/>third line",
    ]


@pytest.mark.parametrize("segmentation", [True, False])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_identity_round_trip_is_byte_exact(segmentation: bool, newline: bytes) -> None:
    data = MOVIE.replace(b"\n", newline)
    assert run(FORMAT, data, segmentation=segmentation) == data
    bom = b"\xef\xbb\xbf" + data
    assert run(FORMAT, bom, segmentation=segmentation) == bom


def test_only_cue_text_changes() -> None:
    out = run(FORMAT, MOVIE, letters).decode()
    assert out.translate(BACK) == MOVIE.decode()
    assert changed_runs(MOVIE.decode(), out) == (
        "Hello there my old friend Look up Yellow words and bold second line third line"
    )


def test_pseudo_translation_changes_every_cue_and_keeps_its_codes() -> None:
    before = units(FORMAT, MOVIE)
    after = units(FORMAT, run(FORMAT, MOVIE, pseudo))
    for source, target in zip(before, after, strict=True):
        assert target.plain != source.plain and target.codes == source.codes


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_timings_numbering_and_line_counts_are_kept(newline: str) -> None:
    data = MOVIE.replace(b"\n", newline.encode())
    out = run(FORMAT, data, pseudo).decode()
    source, target = list(srt.parse(data.decode())), list(srt.parse(out))
    assert [(s.index, s.start, s.end, s.proprietary) for s in target] == [
        (s.index, s.start, s.end, s.proprietary) for s in source
    ]
    assert [s.content.count("\n") for s in target] == [s.content.count("\n") for s in source]
    assert "{\\an8}" in out and '<font color="#ffff00">' in out and "</font>" in out
    assert out.count("\r\n") == data.decode().count("\r\n")


def test_a_translation_cannot_add_lines() -> None:
    def with_newline(unit: Marked) -> Marked:
        return Marked.of([*unit.tokens, "\nextra\n\n9\n00:00:00,000 --> 00:00:01,000"])

    out = run(FORMAT, MOVIE, with_newline, segmentation=False).decode()
    assert len(list(srt.parse(out))) == 3
    assert [s.content.count("\n") for s in srt.parse(out)] == [1, 0, 2]


def test_unpaired_tags_are_standalone() -> None:
    data = b"1\n00:00:01,000 --> 00:00:02,000\n<i>Open only\n\n"
    assert units(FORMAT, data)[0].tokens[0] == Code("ph", 1)


def test_partial_translates_the_first_cue_only() -> None:
    out = run(FORMAT, MOVIE, pseudo, partial=1).decode()
    cues, source = list(srt.parse(out)), list(srt.parse(MOVIE.decode()))
    assert cues[0].content != source[0].content
    assert [c.content for c in cues[1:]] == [c.content for c in source[1:]]


def test_broken_timing_line_is_refused_with_its_line() -> None:
    first = b"1\n00:00:01,000 -> 00:00:02,000\nHi\n\n"
    with pytest.raises(InvalidFile, match=r"x\.srt: line 1: not a subtitle cue"):
        FORMAT.extract(first, filename="x.srt")
    later = MOVIE + b"4\n00:00:10,000 --> 00:0x:11,000\nBroken\n\n"
    with pytest.raises(InvalidFile, match=r"x\.srt: line 16: not a subtitle cue"):
        FORMAT.extract(later, filename="x.srt")
    swallowed = b"1\n00:00:01,000 --> 00:00:02,000\nHi\n\n2\n00:0x:01,000 --> 00:00:02,000\nHo\n"
    with pytest.raises(InvalidFile, match=r"x\.srt: cue 1: malformed timing line '00:0x"):
        FORMAT.extract(swallowed, filename="x.srt")
    with pytest.raises(InvalidFile, match=r"x\.srt: line 1: not a subtitle cue"):
        FORMAT.extract(b"just some text\n", filename="x.srt")


def test_non_utf8_is_refused_with_its_line() -> None:
    data = b"1\n00:00:01,000 --> 00:00:02,000\nCaf\xe9\n\n"
    with pytest.raises(InvalidFile, match=r"x\.srt: line 3 is not UTF-8"):
        FORMAT.extract(data, filename="x.srt")
