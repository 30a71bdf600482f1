"""OpenDocument text (ODT): the text of its paragraphs and headings.

An ODT is a zip package. ``content.xml`` holds the body and ``styles.xml`` the page
headers and footers; both are read, in that order, and only a part whose paragraphs
changed is written again. Every other member (``mimetype``, first and stored as the
format requires, pictures, ``meta.xml``, settings) is copied byte for byte, in order.

Each ``text:p`` and ``text:h`` with text is a unit, wherever it is: a table cell, a list,
a frame's text box, a note's body, a comment. Inside one, ``text:span``, ``text:a`` and
``text:meta`` are paired codes (their element and attributes kept, their content
translated). Everything else is a standalone code for the element itself, moved whole:
spaces (``text:s``), tabs, line breaks, bookmarks and reference marks, fields (page
numbers, dates), frames, comments, and notes — a note's citation and body stand in the
sentence as one code, the body's paragraphs being units of their own, so no text counts
twice. Nothing else is set: the document's language attributes stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from dragoman.errors import InvalidFile
from dragoman.formats.markup import Builder, Marked, translated_units, walk
from dragoman.formats.safety import parse_xml, read_zip, serialize_xml, write_zip

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
PARAGRAPHS = (f"{{{TEXT}}}p", f"{{{TEXT}}}h")
PAIRED = frozenset({f"{{{TEXT}}}span", f"{{{TEXT}}}a", f"{{{TEXT}}}meta"})
PARTS = ("content.xml", "styles.xml")


@dataclass(frozen=True, slots=True)
class _Unit:
    part: str
    paragraph: Any
    marked: Marked
    natives: dict[int, Any]


@dataclass(frozen=True, slots=True)
class _Package:
    members: dict[str, bytes]
    trees: dict[str, etree._ElementTree]
    units: list[_Unit]


def _emit(element: Any, builder: Builder) -> None:
    if element.text:
        builder.text(element.text)
    for child in element:
        if child.tag in PAIRED:
            builder.open(child)
            _emit(child, builder)
            builder.close()
        else:
            builder.ph(child)
        if child.tail:
            builder.text(child.tail)


def _append_text(parent: Any, text: str) -> None:
    if len(parent):
        parent[-1].tail = (parent[-1].tail or "") + text
    else:
        parent.text = (parent.text or "") + text


def _write(paragraph: Any, marked: Marked, natives: dict[int, Any]) -> None:
    for child in list(paragraph):
        paragraph.remove(child)
    paragraph.text = None
    parents = [paragraph]
    pushed: list[int] = []
    for token, _ in walk(marked):
        if isinstance(token, str):
            _append_text(parents[-1], token)
            continue
        native = natives[token.id]
        if token.kind == "open":
            parents.append(etree.SubElement(parents[-1], native.tag, dict(native.attrib)))
            pushed.append(token.id)
        elif token.kind == "close":
            if pushed and pushed[-1] == token.id:
                pushed.pop()
                parents.pop()
        elif isinstance(native, str):
            _append_text(parents[-1], native)
        else:
            native.tail = None
            parents[-1].append(native)


class OdtFormat:
    name = "odt"
    extensions = (".odt",)
    media_type = "application/vnd.oasis.opendocument.text"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        return [unit.marked for unit in _read(data, filename).units]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        package = _read(data, filename)
        changed: set[str] = set()
        for source, unit in translated_units(package.units, units, filename):
            if unit == source.marked:
                continue
            _write(source.paragraph, unit, source.natives)
            changed.add(source.part)
        replaced = {
            part: serialize_xml(package.trees[part], package.members[part]) for part in changed
        }
        return write_zip(data, replaced)


def _read(data: bytes, filename: str) -> _Package:
    members = read_zip(data, filename)
    if "content.xml" not in members:
        raise InvalidFile(f"{filename}: no content.xml in the archive: not an OpenDocument file")
    trees: dict[str, etree._ElementTree] = {}
    units: list[_Unit] = []
    for part in (p for p in PARTS if p in members):
        tree = parse_xml(members[part], f"{filename}: {part}")
        trees[part] = tree
        for paragraph in tree.iter(*PARAGRAPHS):
            builder = Builder()
            _emit(paragraph, builder)
            marked = builder.build()
            if marked.has_text():
                units.append(_Unit(part, paragraph, marked, builder.natives))
    return _Package(members, trees, units)


FORMAT = OdtFormat()
