from __future__ import annotations

from pathlib import Path

import pytest

from dragoman.errors import InvalidFile
from dragoman.formats import by_name, for_file
from dragoman.formats.markup import Marked
from dragoman.formats.text import FORMAT
from tests.formats.helpers import BACK, changed_runs, letters, pseudo, run, units

DATA = Path(__file__).parent.parent / "data" / "formats" / "text"
NOTES = (DATA / "notes.txt").read_bytes()


def test_registered() -> None:
    assert by_name("text") is FORMAT and for_file("README.txt") is FORMAT
    assert FORMAT.media_type == "text/plain"


def test_units_are_the_lines_with_text() -> None:
    assert [u.stored() for u in units(FORMAT, NOTES)] == [
        "First line of notes.",
        "Indented line with <x1/> placeholder.",
        "Visit <x1/> today.",
        "Last line without newline",
    ]


@pytest.mark.parametrize("segmentation", [True, False])
@pytest.mark.parametrize(
    "encode",
    [
        lambda t: t.encode(),
        lambda t: t.replace("\n", "\r\n").encode(),
        lambda t: t.replace("\n", "\r").encode(),
        lambda t: b"\xef\xbb\xbf" + t.encode(),
        lambda t: t.encode("utf-16"),
        lambda t: b"\xfe\xff" + t.encode("utf-16-be"),
    ],
    ids=["lf", "crlf", "cr", "utf8-bom", "utf16", "utf16-be"],
)
def test_identity_round_trip_is_byte_exact(segmentation: bool, encode: object) -> None:
    data = encode(NOTES.decode())  # type: ignore[operator]
    assert run(FORMAT, data, segmentation=segmentation) == data


def test_only_the_text_changes() -> None:
    out = run(FORMAT, NOTES, letters).decode()
    assert out.translate(BACK) == NOTES.decode()
    assert changed_runs(NOTES.decode(), out) == (
        "First line of notes Indented line with placeholder Visit today Last line without newline"
    )


def test_pseudo_translation_keeps_lines_blank_lines_and_placeholders() -> None:
    big_endian = b"\xfe\xff" + NOTES.decode().encode("utf-16-be")
    for data in (NOTES, NOTES.replace(b"\n", b"\r\n"), big_endian):
        out = run(FORMAT, data, pseudo)
        utf16 = data.startswith(b"\xfe\xff")
        text = out.decode("utf-16" if utf16 else "utf-8")
        assert out.startswith(b"\xfe\xff") == utf16
        assert [line.strip() == "" for line in text.splitlines()] == [
            line.strip() == "" for line in NOTES.decode().splitlines()
        ]
        assert "%s" in text and "https://example.com" in text
        indented = text.splitlines()[2]
        assert indented == "   ẇīŧħ ŀīƞḗ Īƞḋḗƞŧḗḋ %s ƥŀȧċḗħǿŀḋḗř.   "
    before, after = units(FORMAT, NOTES), units(FORMAT, run(FORMAT, NOTES, pseudo))
    for source_unit, target in zip(before, after, strict=True):
        assert target.plain != source_unit.plain and target.codes == source_unit.codes


def test_a_translation_cannot_add_lines() -> None:
    def with_newline(unit: Marked) -> Marked:
        return Marked.of([*unit.tokens, "\nmore\r\n"])

    out = run(FORMAT, NOTES, with_newline, segmentation=False).decode()
    assert len(out.splitlines()) == len(NOTES.decode().splitlines())


def test_partial_translates_the_first_line_only() -> None:
    out = run(FORMAT, NOTES, pseudo, partial=1).decode().splitlines()
    source = NOTES.decode().splitlines()
    assert out[0] != source[0] and out[1:] == source[1:]


def test_wrong_encoding_is_refused_with_its_line() -> None:
    with pytest.raises(InvalidFile, match=r"a\.txt: line 2 is not UTF-8"):
        FORMAT.extract(b"fine\ncaf\xe9\n", filename="a.txt")
    with pytest.raises(InvalidFile, match=r"a\.txt: not valid UTF-16"):
        FORMAT.extract(b"\xff\xfeA\x00\x00\xd8", filename="a.txt")


@pytest.mark.timeout(120)  # a hang, not a speed: fails only far beyond its normal time
def test_a_megabyte_on_one_line_does_not_hang() -> None:
    data = b"Hello world, this is %s and {name}. " * 30_000
    out = run(FORMAT, data, pseudo)
    assert out.count(b"%s") == 30_000 and out.count(b"{name}") == 30_000
