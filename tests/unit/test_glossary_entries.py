"""A glossary's entries read from JSON, TSV and CSV: every mistake refused, saying where."""

from __future__ import annotations

import re

import pytest

from dragoman.errors import ClientError, InvalidRequest, PayloadTooLarge
from dragoman.glossaries import Entry
from dragoman.glossaries.entries import (
    Limits,
    check_name,
    checked,
    from_json,
    from_table,
    merged,
    to_tsv,
)

LIMITS = Limits(max_entries=3, max_term_bytes=16)


def no_languages(source: str, target: str) -> None:
    if (source, target) != ("en", "es"):
        raise InvalidRequest(f"languages {source}-{target} are not the glossary's")


def table(content: bytes, fmt: str) -> list[Entry]:
    return checked(from_table(content, fmt, check_languages=no_languages), LIMITS)


@pytest.mark.parametrize(
    ("rows", "error", "says"),
    [
        ([], InvalidRequest, "at least one entry"),
        ([("a", "b")] * 4, PayloadTooLarge, "4 exceed the limit of 3"),
        ([("a", "b"), (" ", "c")], InvalidRequest, "entries[1]: the source term is empty"),
        ([("a", "")], InvalidRequest, "entries[0]: the target term is empty"),
        ([("a\tb", "c")], InvalidRequest, "entries[0]: the source term has a character"),
        ([("a", "b\nc")], InvalidRequest, "U+000A"),
        ([("a", "b\u2028c")], InvalidRequest, "U+2028"),
        ([("a\x85b", "b")], InvalidRequest, "U+0085"),
        ([("a", "\ud800")], InvalidRequest, "U+D800"),
        ([("ñññññññññ", "b")], InvalidRequest, "entries[0]: the source term is 18 bytes"),
        ([("cat", "gato"), ("dog", "perro"), (" cat ", "gata")], InvalidRequest, "entries[2]"),
        ([("log in", "x"), ("log   in", "y")], InvalidRequest, "duplicates entries[0]"),
    ],
)
def test_bad_entries_are_refused_naming_the_entry(
    rows: list[tuple[str, str]], error: type[ClientError], says: str
) -> None:
    with pytest.raises(error) as found:
        checked(from_json(rows), LIMITS)
    assert says in found.value.message


def test_entries_are_stripped_and_case_variants_are_not_duplicates() -> None:
    entries = checked(from_json([(" Apple ", " Apple "), ("apple", "manzana")]), LIMITS)
    assert entries == [Entry("Apple", "Apple"), Entry("apple", "manzana")]


@pytest.mark.parametrize(
    ("content", "fmt", "says"),
    [
        (b"a\tb\tc\n", "tsv", "line 1: expected a source and a target separated by one tab"),
        (b"a\tb\nno tab here\n", "tsv", "line 2:"),
        (b"a\tcaf\xe9\n", "tsv", "byte 5 is not valid UTF-8"),
        (b"\xff\xfea\x00\t\x00\x00\xd8", "tsv", "is not valid UTF-16"),
        (b'a,b\n"unclosed,b\n', "csv", "not valid CSV"),
        (b"a,b,c\n", "csv", "line 1: expected 2 columns"),
        (b"a,b,en,fr\n", "csv", "languages en-fr are not the glossary's"),
        (b"\n\n", "csv", "at least one entry"),
        (b"a,b\nc,d\ne,f\ng,h\n", "csv", "4 exceed the limit of 3"),
    ],
)
def test_bad_tables_are_refused_naming_the_line(content: bytes, fmt: str, says: str) -> None:
    with pytest.raises(ClientError) as found:
        table(content, fmt)
    assert says in found.value.message


def test_tsv_as_deepl_and_weblate_write_it() -> None:
    content = "\ufeffserver\tservidor\r\n\nDragoman\tDragoman\n".encode()
    entries = table(content, "tsv")
    assert entries == [Entry("server", "servidor"), Entry("Dragoman", "Dragoman")]
    assert to_tsv(entries) == "server\tservidor\nDragoman\tDragoman"


def test_tsv_in_utf16_with_its_byte_order_mark_as_spreadsheets_save_it() -> None:
    for codec in ("utf-16-le", "utf-16-be"):
        bom = "\ufeff".encode(codec)
        content = bom + "café\tKaffee ☕\r\n".encode(codec)
        assert table(content, "tsv") == [Entry("café", "Kaffee ☕")]


def test_csv_with_a_header_quotes_and_language_columns() -> None:
    content = b'source,target\n"log in","iniciar sesi\xc3\xb3n"\n"a, b",c,en,es\n'
    assert table(content, "csv") == [Entry("log in", "iniciar sesión"), Entry("a, b", "c")]


def test_a_name_is_checked() -> None:
    assert check_name("  terms ", 8) == "terms"
    for bad, says in (("", "empty"), ("a\nb", "control"), ("ñññññ", "longer than 8 bytes")):
        with pytest.raises(InvalidRequest, match=says):
            check_name(bad, 8)


def test_merged_entries_take_new_targets_in_place_and_new_sources_last() -> None:
    current = [Entry("server", "servidor"), Entry("disk", "disco")]
    rows = from_json([("a  disk", "x"), ("server", "nodo"), ("cat", "gato")])
    assert merged(current, rows, Limits(max_entries=4, max_term_bytes=16)) == [
        Entry("server", "nodo"),
        Entry("disk", "disco"),
        Entry("a  disk", "x"),
        Entry("cat", "gato"),
    ]
    spaced = from_json([("server ", "nodo"), (" disk", "unidad")])
    assert merged(current, spaced, LIMITS) == [Entry("server", "nodo"), Entry("disk", "unidad")]


@pytest.mark.parametrize(
    ("rows", "error", "says"),
    [
        ([("a", "b"), ("c", "d")], PayloadTooLarge, "4 once merged exceed the limit of 3"),
        ([("a", "b"), ("a", "c")], InvalidRequest, "entries[1]: the source term 'a' duplicates"),
        ([("a", "")], InvalidRequest, "entries[0]: the target term is empty"),
    ],
)
def test_merged_entries_are_checked_and_counted(
    rows: list[tuple[str, str]], error: type[ClientError], says: str
) -> None:
    current = [Entry("server", "servidor"), Entry("disk", "disco")]
    with pytest.raises(error, match=re.escape(says)):
        merged(current, from_json(rows), LIMITS)
