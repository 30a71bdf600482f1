"""A glossary's entries as a user sends them: a JSON list, or a TSV or CSV table, read and
checked before anything is stored.

Tables follow DeepL's glossary formats: one entry a line, ``source<TAB>target`` (TSV) or
``source,target`` with CSV quoting, optionally followed by the two language codes
(``source,target,en,es``, as DeepL's website exports it); empty lines are skipped, and a
first line ``source,target`` (a spreadsheet's header) too. Each term is stripped of outer
whitespace. Every mistake is one ``ClientError`` that says where it is (``entries[3]`` or
``line 4``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from dragoman.errors import BadEncoding, ClientError, InvalidRequest, PayloadTooLarge
from dragoman.glossaries.matching import Entry

FORMATS = ("tsv", "csv")
# C0 and C1 controls (tab and line breaks included), Unicode's line separators and lone
# surrogates: none belongs in a term, TSV could not hold them, a database cannot store some.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True, slots=True)
class Limits:
    max_entries: int
    max_term_bytes: int  # UTF-8, as DeepL counts


@dataclass(frozen=True, slots=True)
class Row:
    """An entry as given, with where it was (``entries[0]``, ``line 3``)."""

    where: str
    source: str
    target: str


def from_table(
    content: bytes, fmt: str, *, check_languages: Callable[[str, str], None]
) -> list[Row]:
    """The rows of an uploaded TSV or CSV table; ``check_languages`` refuses a CSV line
    whose language columns are not the glossary's."""
    # UTF-16 only with its byte-order mark (as spreadsheets save "Unicode text"); UTF-8
    # with or without one.
    codec = "utf-16" if content[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"
    try:
        text = content.decode(codec)
    except UnicodeDecodeError as exc:
        label = "UTF-16" if codec == "utf-16" else "UTF-8"
        raise BadEncoding(f"entries: byte {exc.start} is not valid {label}") from None
    return from_tsv(text) if fmt == "tsv" else from_csv(text, check_languages)


def from_tsv(text: str) -> list[Row]:
    rows: list[Row] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise InvalidRequest(
                f"line {number}: expected a source and a target separated by one tab, "
                f"found {len(fields) - 1} tabs"
            )
        rows.append(Row(f"line {number}", fields[0], fields[1]))
    return rows


def from_csv(text: str, check_languages: Callable[[str, str], None]) -> list[Row]:
    rows: list[Row] = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        for fields in reader:
            number = reader.line_num
            if not any(field.strip() for field in fields):
                continue
            if len(fields) not in (2, 4):
                raise InvalidRequest(
                    f"line {number}: expected 2 columns (source, target) or 4 (source, "
                    f"target, source language, target language), found {len(fields)}"
                )
            if not rows and [f.strip().lower() for f in fields[:2]] == ["source", "target"]:
                continue  # a header
            if len(fields) == 4:
                try:
                    check_languages(fields[2].strip(), fields[3].strip())
                except ClientError as exc:
                    raise InvalidRequest(f"line {number}: {exc.message}") from None
            rows.append(Row(f"line {number}", fields[0], fields[1]))
    except csv.Error as exc:
        raise InvalidRequest(f"line {reader.line_num}: not valid CSV ({exc})") from None
    return rows


def from_json(entries: Iterable[tuple[str, str]]) -> list[Row]:
    return [Row(f"entries[{i}]", source, target) for i, (source, target) in enumerate(entries)]


def checked(rows: Sequence[Row], limits: Limits) -> list[Entry]:
    """The entries, stripped, or the first mistake: none at all, too many, an empty or too
    long term, a control character, a source given twice."""
    if not rows:
        raise InvalidRequest("entries: a glossary needs at least one entry")
    if len(rows) > limits.max_entries:
        raise PayloadTooLarge(
            f"entries: {len(rows)} exceed the limit of {limits.max_entries} per glossary"
        )
    first: dict[str, str] = {}
    entries = []
    for row in rows:
        source, target = row.source.strip(), row.target.strip()
        _check_term(row.where, "source", source, limits)
        _check_term(row.where, "target", target, limits)
        key = _key(source)
        if key in first:
            raise InvalidRequest(
                f"{row.where}: the source term {source!r} duplicates {first[key]}'s"
            )
        first[key] = row.where
        entries.append(Entry(source, target))
    return entries


def merged(current: Sequence[Entry], rows: Sequence[Row], limits: Limits) -> list[Entry]:
    """``current`` with ``rows`` merged in (DeepL's ``PATCH``): a source given again takes
    its new target where it stands, a new one comes last; ``rows`` checked as ``checked``
    does, and the result against the limit of entries."""
    found = list(current)
    at = {_key(entry.source): i for i, entry in enumerate(found)}
    for entry in checked(rows, limits):
        i = at.setdefault(_key(entry.source), len(found))
        if i == len(found):
            found.append(entry)
        else:
            found[i] = entry
    if len(found) > limits.max_entries:
        raise PayloadTooLarge(
            f"entries: {len(found)} once merged exceed the limit of {limits.max_entries}"
        )
    return found


def _key(source: str) -> str:
    """What makes two sources the same term: their words, whatever the spaces between."""
    return " ".join(source.split())


def _check_term(where: str, side: str, term: str, limits: Limits) -> None:
    if not term:
        raise InvalidRequest(f"{where}: the {side} term is empty")
    control = _CONTROL.search(term)
    if control is not None:
        raise InvalidRequest(
            f"{where}: the {side} term has a character not allowed in a term "
            f"(U+{ord(control.group()):04X}: a control character or a line break)"
        )
    size = len(term.encode("utf-8", "surrogatepass"))
    if size > limits.max_term_bytes:
        raise InvalidRequest(
            f"{where}: the {side} term is {size} bytes; the limit is {limits.max_term_bytes}"
        )


def check_name(name: str, max_bytes: int) -> str:
    """A glossary's name, stripped: not empty, no control character, at most ``max_bytes``."""
    name = name.strip()
    if not name:
        raise InvalidRequest("name: must not be empty")
    if _CONTROL.search(name):
        raise InvalidRequest("name: must not contain a control character or a line break")
    if len(name.encode("utf-8", "surrogatepass")) > max_bytes:
        raise InvalidRequest(f"name: longer than {max_bytes} bytes")
    return name


def to_tsv(entries: Iterable[Entry]) -> str:
    """The entries as DeepL gives them back: ``source<TAB>target`` lines."""
    return "\n".join(f"{entry.source}\t{entry.target}" for entry in entries)
