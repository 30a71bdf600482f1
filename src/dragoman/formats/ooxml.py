"""Word (DOCX) and PowerPoint (PPTX) documents: the text of their paragraphs.

Both are zip packages of XML parts; only the parts holding the document's own text are
read, and only those whose paragraphs changed are written again. Every other member
(images, media, styles, relationships, settings) is copied byte for byte, in order.

DOCX parts, in this order: ``word/document.xml`` (body, tables, text boxes), then
``word/header*.xml``, ``word/footer*.xml``, ``word/footnotes.xml``, ``word/endnotes.xml``
and ``word/comments.xml``. The glossary (building blocks) is not the document's text and
is kept. Each ``w:p`` with text is a unit, wherever it is (a table cell, a text box, a
note); a paragraph nested in another one's drawing is a unit of its own and stands in its
parent as part of the drawing's code, so no text counts twice. Field results (the shown
text of a ``w:fldChar`` field) are translated, field instructions are not; a
``w:fldSimple`` is kept whole, as Word recomputes its text.

PPTX parts: ``ppt/slides/slide*.xml`` then ``ppt/notesSlides/notesSlide*.xml`` (speaker
notes are translated too). Each ``a:p`` with text is a unit (shapes, tables). Line breaks
and fields (slide numbers, dates) are standalone codes. Layouts and masters hold the
prompt text of empty placeholders, which never shows in a presentation, and are kept;
charts and SmartArt keep their text too.

How runs become codes is in ``ooxml_paragraph``. Languages (``w:lang``, ``lang``) are
left as they are: the file's own proofing settings are the user's. Strict Open XML (other
namespaces, rarely written) is refused rather than passed through untranslated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from dragoman.errors import InvalidFile
from dragoman.formats.markup import Marked, translated_units
from dragoman.formats.ooxml_paragraph import Dialect, Paragraphs, RunStyle
from dragoman.formats.safety import parse_xml, read_zip, serialize_xml, write_zip

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
STRICT = frozenset(
    {
        "http://purl.oclc.org/ooxml/wordprocessingml/main",
        "http://purl.oclc.org/ooxml/presentationml/main",
    }
)

WORD = Dialect(
    ns=W,
    head=frozenset({"pPr"}),
    tail=frozenset(),
    containers=frozenset({"hyperlink", "ins", "moveTo", "smartTag", "customXml", "dir", "bdo"}),
    dropped=frozenset({"proofErr", "lastRenderedPageBreak"}),
    noise=frozenset(),
    noise_prefix="rsid",
    preserve_space=True,
)

DRAWING = Dialect(
    ns=A,
    head=frozenset({"pPr"}),
    tail=frozenset({"endParaRPr"}),
    containers=frozenset(),
    dropped=frozenset(),
    noise=frozenset({"lang", "altLang", "dirty", "err", "smtClean", "smtId"}),
)


@dataclass(frozen=True, slots=True)
class _Unit:
    part: str
    paragraph: Any
    marked: Marked
    natives: dict[int, Any]
    base: RunStyle | None


@dataclass(frozen=True, slots=True)
class _Package:
    members: dict[str, bytes]
    trees: dict[str, etree._ElementTree]
    units: list[_Unit]


def _number(name: str) -> int:
    found = re.search(r"(\d+)\.xml$", name)
    return int(found.group(1)) if found else 0


class _OoxmlFormat:
    name: str
    extensions: tuple[str, ...]
    media_type: str
    required: str  # the member every such package has
    parts: tuple[str, ...]  # patterns of the translated parts, in reading order
    dialect: Dialect

    def __init__(self) -> None:
        self.paragraphs = Paragraphs(self.dialect)

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        return [unit.marked for unit in self._read(data, filename).units]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        package = self._read(data, filename)
        changed: set[str] = set()
        for source, unit in translated_units(package.units, units, filename):
            if unit == source.marked or source.base is None:
                continue
            self.paragraphs.write(source.paragraph, unit, source.natives, source.base)
            changed.add(source.part)
        replaced = {
            part: serialize_xml(package.trees[part], package.members[part]) for part in changed
        }
        return write_zip(data, replaced)

    def _read(self, data: bytes, filename: str) -> _Package:
        members = read_zip(data, filename)
        if self.required not in members:
            raise InvalidFile(f"{filename}: no {self.required} in the archive: not a {self.name}")
        trees: dict[str, etree._ElementTree] = {}
        units: list[_Unit] = []
        for part in self._parts(members):
            tree = parse_xml(members[part], f"{filename}: {part}")
            if etree.QName(tree.getroot()).namespace in STRICT:
                raise InvalidFile(
                    f"{filename}: {part} is Strict Open XML, which is not supported; "
                    f"save it as a Transitional (ordinary) {self.name.upper()} file"
                )
            trees[part] = tree
            for paragraph in tree.iter(self.dialect.q("p")):
                marked, natives, base = self.paragraphs.extract(paragraph)
                if marked.has_text():
                    units.append(_Unit(part, paragraph, marked, natives, base))
        return _Package(members, trees, units)

    def _parts(self, members: dict[str, bytes]) -> list[str]:
        found: list[str] = []
        for pattern in self.parts:
            matching = [m for m in members if re.fullmatch(pattern, m)]
            found += sorted(matching, key=lambda m: (_number(m), m))
        return found


class DocxFormat(_OoxmlFormat):
    name = "docx"
    extensions = (".docx",)
    media_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    required = "word/document.xml"
    parts = (
        r"word/document\.xml",
        r"word/header\d*\.xml",
        r"word/footer\d*\.xml",
        r"word/footnotes\.xml",
        r"word/endnotes\.xml",
        r"word/comments\.xml",
    )
    dialect = WORD


class PptxFormat(_OoxmlFormat):
    name = "pptx"
    extensions = (".pptx",)
    media_type = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    required = "ppt/presentation.xml"
    parts = (r"ppt/slides/slide\d+\.xml", r"ppt/notesSlides/notesSlide\d+\.xml")
    dialect = DRAWING


FORMATS = {"docx": DocxFormat(), "pptx": PptxFormat()}
