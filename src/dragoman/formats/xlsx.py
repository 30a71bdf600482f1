"""Excel (XLSX) workbooks: the text of their cells and comments.

An XLSX file is a zip package of XML parts. What is translated, in this order:

- each ``<si>`` of ``xl/sharedStrings.xml`` with text (the strings of ``t="s"`` cells;
  one shared string is one unit, so every cell showing it gets the same translation);
- each inline string ``<c t="inlineStr"><is>…</is></c>`` of ``xl/worksheets/sheet*.xml``;
- the text of each legacy comment (``xl/comments*.xml``, ``xl/comments/comment*.xml``)
  and of each threaded comment (``xl/threadedComments/*.xml``).

A plain string (``<si><t>``) is a unit of text; Excel's ``_xHHHH_`` escapes in it (a
carriage return is ``_x000D_``) are standalone codes. A rich string (``<si><r>…</r></si>``)
has its runs read like Word's (``ooxml_paragraph``): the run properties covering most of
the text are the base, every stretch with other properties is a paired code. Phonetic runs
(``<rPh>``) and ``<phoneticPr>`` are kept as they are.

What is kept: formulas (``<f>``), numbers, booleans, errors and formula results
(``t="str"`` cells, which Excel recomputes), sheet names (renaming a sheet would break
every formula and defined name that refers to it), defined names, number formats, charts,
drawings, data validation, and every member that holds no translated text, byte for byte.
Parts are written again only when one of their units changed. Strict Open XML is refused
rather than passed through untranslated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from dragoman.errors import InvalidFile
from dragoman.formats.markup import Builder, Marked, translated_units
from dragoman.formats.ooxml_paragraph import Dialect, Paragraphs, RunStyle
from dragoman.formats.safety import parse_xml, read_zip, serialize_xml, write_zip

S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
THREADED = "http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments"
STRICT = "http://purl.oclc.org/ooxml/spreadsheetml/main"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
ESCAPE = re.compile(r"_x[0-9A-Fa-f]{4}_")

SHEET = Dialect(
    ns=S,
    head=frozenset(),
    tail=frozenset({"rPh", "phoneticPr"}),
    containers=frozenset(),
    dropped=frozenset(),
    noise=frozenset(),
    preserve_space=True,
)
RICH = Paragraphs(SHEET)

PARTS = (
    r"xl/sharedStrings\.xml",
    r"xl/worksheets/sheet\d*\.xml",
    r"xl/comments\d*\.xml",
    r"xl/comments/comment\d*\.xml",
    r"xl/threadedComments/threadedComment\d*\.xml",
)


def _q(local: str) -> str:
    return f"{{{S}}}{local}"


@dataclass(frozen=True, slots=True)
class _Unit:
    part: str
    holder: Any  # <si>, <is>, comment <text>: a string of SpreadsheetML (CT_Rst)
    marked: Marked
    natives: dict[int, Any]
    base: RunStyle | None  # None for a plain string


@dataclass(frozen=True, slots=True)
class _Workbook:
    members: dict[str, bytes]
    trees: dict[str, etree._ElementTree]
    units: list[_Unit]


def _number(name: str) -> int:
    found = re.search(r"(\d+)\.xml$", name)
    return int(found.group(1)) if found else 0


def _parts(members: dict[str, bytes]) -> list[str]:
    found: list[str] = []
    for pattern in PARTS:
        matching = [m for m in members if re.fullmatch(pattern, m)]
        found += sorted(matching, key=lambda m: (_number(m), m))
    return found


def _holders(tree: etree._ElementTree) -> list[Any]:
    root = tree.getroot()
    if root.tag == _q("sst"):
        return list(root.iter(_q("si")))
    if root.tag == _q("worksheet"):
        return [
            cell.find(_q("is"))
            for cell in root.iter(_q("c"))
            if cell.get("t") == "inlineStr" and cell.find(_q("is")) is not None
        ]
    if root.tag == _q("comments"):
        return list(root.iter(_q("text")))
    return list(root.iter(f"{{{THREADED}}}text"))


def _plain(text: str) -> tuple[Marked, dict[int, Any]]:
    builder = Builder()
    pos = 0
    for match in ESCAPE.finditer(text):
        builder.text(text[pos : match.start()])
        builder.ph(match.group())
        pos = match.end()
    builder.text(text[pos:])
    return builder.build(), builder.natives


def _read_unit(part: str, holder: Any) -> _Unit:
    if holder.tag == f"{{{THREADED}}}text":
        marked, natives = _plain(holder.text or "")
        return _Unit(part, holder, marked, natives, None)
    if holder.find(_q("r")) is None:
        t = holder.find(_q("t"))
        marked, natives = _plain("" if t is None else t.text or "")
        return _Unit(part, holder, marked, natives, None)
    marked, natives, base = RICH.extract(holder)
    return _Unit(part, holder, marked, natives, base)


def _write_plain(unit: _Unit, marked: Marked) -> None:
    text = "".join(
        token if isinstance(token, str) else str(unit.natives[token.id]) for token in marked.tokens
    )
    if unit.holder.tag == f"{{{THREADED}}}text":
        unit.holder.text = text
        return
    t = unit.holder.find(_q("t"))
    t.text = text
    if text != text.strip():
        t.set(XML_SPACE, "preserve")


def _read(data: bytes, filename: str) -> _Workbook:
    members = read_zip(data, filename)
    if "xl/workbook.xml" not in members:
        raise InvalidFile(f"{filename}: no xl/workbook.xml in the archive: not an xlsx")
    trees: dict[str, etree._ElementTree] = {}
    units: list[_Unit] = []
    for part in _parts(members):
        tree = parse_xml(members[part], f"{filename}: {part}")
        if etree.QName(tree.getroot()).namespace == STRICT:
            raise InvalidFile(
                f"{filename}: {part} is Strict Open XML, which is not supported; "
                "save it as an ordinary Excel Workbook (.xlsx)"
            )
        trees[part] = tree
        for holder in _holders(tree):
            unit = _read_unit(part, holder)
            if unit.marked.has_text():
                units.append(unit)
    return _Workbook(members, trees, units)


class XlsxFormat:
    name: str = "xlsx"
    extensions: tuple[str, ...] = (".xlsx",)
    media_type: str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        return [unit.marked for unit in _read(data, filename).units]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        book = _read(data, filename)
        changed: set[str] = set()
        for source, unit in translated_units(book.units, units, filename):
            if unit == source.marked:
                continue
            if source.base is None:
                _write_plain(source, unit)
            else:
                RICH.write(source.holder, unit, source.natives, source.base)
            changed.add(source.part)
        replaced = {part: serialize_xml(book.trees[part], book.members[part]) for part in changed}
        return write_zip(data, replaced)


FORMAT = XlsxFormat()
