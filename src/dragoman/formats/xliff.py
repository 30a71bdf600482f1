"""XLIFF 1.2 and 2.x (2.0, 2.1, 2.2): the version is told by the root's namespace and
``version``.

What is translated: in 1.2 each ``<trans-unit>`` whose ``<target>`` is absent or empty, in
2.x each ``<segment>`` whose ``<target>`` is absent or empty; the unit is its ``<source>``.
Anything under ``translate="no"`` (on the unit or an enclosing group or file) is skipped,
and units that already have a target are kept as they are: a file is never re-translated.

Inline markup: 1.2 ``<g>`` and 2.x ``<pc>`` are paired codes, their content translated
and the element written back with all its attributes; ``<mrk>`` is paired too, except a
protected one (1.2 ``mtype="protected"``, 2.x ``translate="no"``), which is kept whole.
Every other inline element (1.2 ``<x/> <bx/> <ex/> <ph> <bpt> <ept> <it>``, 2.x ``<ph/>
<sc/> <ec/> <sm/> <em/> <cp/>``), and any comment, is a standalone code whose element is
copied verbatim, content included, into the target. Placeholders in the text (``%s``,
``{name}``) are protected.

What is written: a ``<target>`` right after ``<source>`` (after ``<seg-source>`` in 1.2),
with the whitespace that preceded ``<source>`` before it, or the existing empty target
filled. Machine translation (from the engine or the segment cache) is marked the way each
version says it: in 1.2 ``state="needs-review-translation" state-qualifier="mt-suggestion"``
on the ``<target>``; in 2.x ``state="translated" subState="dragoman:mt"`` on the
``<segment>`` (2.x states are ``initial``/``translated``/``reviewed``/``final``;
``subState`` values take a prefix). An exact translation-memory match (every segment of the
unit) is marked as CAT tools read one: in 1.2 ``state="translated"
state-qualifier="exact-match"``, and an ``<alt-trans match-quality="100"
origin="dragoman:tm">`` with the same target after it (Okapi reads it as a leveraged
match); in 2.x ``state="translated" subState="dragoman:tm"``. A unit a model scored carries its
origin and lowest confidence as metadata, and under the job's ``review_below`` says whether
it is to be reviewed (``merge_reviewed``: ``_review``, ``_describe``). The
target language goes into ``target-language`` on each 1.2 ``<file>``, or ``trgLang`` on the
2.x root. Notes, ``<alt-trans>``, ``<ignorable>``, ``<originalData>``, metadata and every
other element are kept. When no unit gets a translation the file comes back unchanged.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from dragoman.errors import InvalidFile
from dragoman.formats import Review
from dragoman.formats.markup import Builder, Marked, translated_units
from dragoman.formats.safety import parse_xml, serialize_xml
from dragoman.models import Origin

XLIFF_2_NS = "urn:oasis:names:tc:xliff:document:2.0"
MDA_NS = "urn:oasis:names:tc:xliff:metadata:2.0"


@dataclass(frozen=True, slots=True)
class _Dialect:
    version: int
    unit: str  # the element holding one source and its target
    paired: frozenset[str]
    protected_mrk: tuple[str, str]  # the attribute and value of a <mrk> kept whole


_V1 = _Dialect(1, "trans-unit", frozenset({"g", "mrk"}), ("mtype", "protected"))
_V2 = _Dialect(2, "segment", frozenset({"pc", "mrk"}), ("translate", "no"))


@dataclass(slots=True)
class _Unit:
    element: etree._Element  # <trans-unit> or <segment>
    source: etree._Element
    target: etree._Element | None  # an existing, empty target
    marked: Marked
    natives: dict[int, Any]


@dataclass(slots=True)
class _Document:
    tree: etree._ElementTree
    ns: str | None
    dialect: _Dialect
    units: list[_Unit]

    def q(self, local: str) -> str:
        return f"{{{self.ns}}}{local}" if self.ns else local


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def _read(data: bytes, filename: str) -> _Document:
    tree = parse_xml(data, filename)
    root = tree.getroot()
    if _local(root) != "xliff":
        raise InvalidFile(f"{filename}: not an XLIFF file (the root element is <{_local(root)}>)")
    ns = etree.QName(root).namespace
    v2 = ns == XLIFF_2_NS or (root.get("version") or "").startswith("2")
    doc = _Document(tree, ns, _V2 if v2 else _V1, [])
    for element in root.iter(doc.q(doc.dialect.unit)):
        unit = _unit(doc, element)
        if unit is not None:
            doc.units.append(unit)
    return doc


def _unit(doc: _Document, element: etree._Element) -> _Unit | None:
    source = element.find(doc.q("source"))
    if source is None or _skipped(element):
        return None
    target = element.find(doc.q("target"))
    if target is not None and _has_content(target):
        return None
    builder = Builder()
    _fill(builder, source, doc)
    return _Unit(element, source, target, builder.build(), builder.natives)


def _skipped(element: etree._Element) -> bool:
    return any(node.get("translate") == "no" for node in element.iterancestors()) or (
        element.get("translate") == "no"
    )


def _has_content(element: etree._Element) -> bool:
    return len(element) > 0 or bool((element.text or "").strip())


def _fill(builder: Builder, element: etree._Element, doc: _Document) -> None:
    if element.text:
        builder.text(element.text)
    for child in element:
        if _is_paired(child, doc.dialect):
            builder.open(child)
            _fill(builder, child, doc)
            builder.close()
        else:
            builder.ph(child)
        if child.tail:
            builder.text(child.tail)


def _is_paired(element: etree._Element, dialect: _Dialect) -> bool:
    local = _local(element)
    if local not in dialect.paired:
        return False
    attribute, value = dialect.protected_mrk
    return not (local == "mrk" and element.get(attribute) == value)


def _append_text(parent: etree._Element, text: str) -> None:
    if len(parent):
        last = parent[-1]
        last.tail = (last.tail or "") + text
    else:
        parent.text = (parent.text or "") + text


def _render(target: etree._Element, unit: Marked, natives: dict[int, Any]) -> None:
    """Writes a well-formed unit (``same_codes`` checked) into ``target``."""
    stack = [target]
    for token in unit.tokens:
        parent = stack[-1]
        if isinstance(token, str):
            _append_text(parent, token)
        elif token.kind == "open":
            native = natives[token.id]
            stack.append(etree.SubElement(parent, native.tag, dict(native.attrib)))
        elif token.kind == "close":
            stack.pop()
        else:
            _append_standalone(parent, natives[token.id])


def _append_standalone(parent: etree._Element, native: Any) -> None:
    if isinstance(native, str):
        _append_text(parent, native)
        return
    clone = copy.deepcopy(native)
    clone.tail = None
    parent.append(clone)


def _whitespace_before(element: etree._Element) -> str | None:
    previous = element.getprevious()
    parent = element.getparent()
    before = previous.tail if previous is not None else parent.text if parent is not None else None
    return before if before is not None and not before.strip() else None


def _new_target(doc: _Document, unit: _Unit) -> etree._Element:
    if unit.target is not None:
        for child in list(unit.target):
            unit.target.remove(child)
        unit.target.text = None
        return unit.target
    anchor = unit.source
    seg_source = unit.element.find(doc.q("seg-source"))
    if seg_source is not None and doc.dialect.version == 1:
        anchor = seg_source
    target = etree.Element(doc.q("target"))
    unit.element.insert(unit.element.index(anchor) + 1, target)
    target.tail = anchor.tail
    anchor.tail = _whitespace_before(unit.source)
    return target


def _mark(doc: _Document, unit: _Unit, target: etree._Element, origin: Origin | None) -> None:
    memory = origin is Origin.TM
    if doc.dialect.version == 2:
        unit.element.set("state", "translated")
        unit.element.set("subState", "dragoman:tm" if memory else "dragoman:mt")
        return
    if not memory:
        target.set("state", "needs-review-translation")
        target.set("state-qualifier", "mt-suggestion")
        return
    target.set("state", "translated")
    target.set("state-qualifier", "exact-match")
    alt = etree.Element(doc.q("alt-trans"), {"match-quality": "100", "origin": "dragoman:tm"})
    copied = copy.deepcopy(target)
    for name in ("state", "state-qualifier"):
        copied.attrib.pop(name, None)
    copied.tail = None
    alt.append(copied)
    unit.element.insert(unit.element.index(target) + 1, alt)
    alt.tail, target.tail = target.tail, target.tail


def _review(doc: _Document, unit: _Unit, target: etree._Element, review: Review) -> None:
    """A unit scored against the job's threshold: in 1.2, one at or above it gets
    ``state="translated"`` (still ``mt-suggestion``); in 2.x, one below it
    ``subState="dragoman:review"``. Below it, 1.2 keeps ``needs-review-translation``."""
    if doc.dialect.version == 2:
        if review.review:
            unit.element.set("subState", "dragoman:review")
    elif review.review is False:
        target.set("state", "translated")


def _describe(
    doc: _Document, unit: _Unit, target: etree._Element, origin: Origin, confidence: float
) -> None:
    """The origin and the confidence as metadata: a 1.2 ``<context-group>`` of ``x-``
    context types after the ``<target>``; a 2.x Metadata module group in the ``<unit>``."""
    facts = {"origin": origin.value, "confidence": f"{confidence:.4f}"}
    if doc.dialect.version == 1:
        group = etree.Element(doc.q("context-group"), name="dragoman", purpose="information")
        for name, value in facts.items():
            context = etree.SubElement(group, doc.q("context"))
            context.set("context-type", f"x-dragoman-{name}")
            context.text = value
        unit.element.insert(unit.element.index(target) + 1, group)
        group.tail, target.tail = target.tail, _whitespace_before(target) or target.tail
        return
    holder = unit.element.getparent()
    if holder is None:
        return
    segments = holder.findall(doc.q("segment"))
    facts["segment"] = unit.element.get("id") or str(segments.index(unit.element) + 1)
    group = etree.SubElement(
        _metadata(holder), f"{{{MDA_NS}}}metaGroup", category="dragoman", appliesTo="target"
    )
    for name in ("segment", "origin", "confidence"):
        etree.SubElement(group, f"{{{MDA_NS}}}meta", type=name).text = facts[name]


def _metadata(holder: etree._Element) -> etree._Element:
    """The ``<mda:metadata>`` of a 2.x ``<unit>``, added first where it has none (module
    elements come before its notes and segments)."""
    found = holder.find(f"{{{MDA_NS}}}metadata")
    if found is not None:
        return found
    metadata = etree.Element(f"{{{MDA_NS}}}metadata", nsmap={"mda": MDA_NS})
    holder.insert(0, metadata)
    metadata.tail = holder.text
    return metadata


def _set_language(doc: _Document, target_lang: str) -> None:
    root = doc.tree.getroot()
    if doc.dialect.version == 2:
        root.set("trgLang", target_lang)
        return
    for file_element in root.iter(doc.q("file")):
        file_element.set("target-language", target_lang)


class XliffFormat:
    name: str = "xliff"
    extensions: tuple[str, ...] = (".xlf", ".xliff")
    media_type: str = "application/xliff+xml"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        return [unit.marked for unit in _read(data, filename).units]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        origins = [None if unit is None else Origin.MT for unit in units]
        return self.merge_origins(data, units, origins, filename=filename, target_lang=target_lang)

    def merge_origins(
        self,
        data: bytes,
        units: Sequence[Marked | None],
        origins: Sequence[Origin | None],
        *,
        filename: str,
        target_lang: str,
    ) -> bytes:
        reviews = [None] * len(units)
        return self.merge_reviewed(
            data, units, origins, reviews, filename=filename, target_lang=target_lang
        )

    def merge_reviewed(
        self,
        data: bytes,
        units: Sequence[Marked | None],
        origins: Sequence[Origin | None],
        reviews: Sequence[Review | None],
        *,
        filename: str,
        target_lang: str,
    ) -> bytes:
        doc = _read(data, filename)
        came = {
            id(unit): (origin, review)
            for unit, origin, review in zip(doc.units, origins, reviews, strict=False)
        }
        written = translated_units(doc.units, units, filename)
        if not written:
            return data
        for source, translated in written:
            target = _new_target(doc, source)
            _render(target, translated, source.natives)
            origin, review = came.get(id(source), (None, None))
            _mark(doc, source, target, origin)
            if review is not None and origin is not Origin.TM and origin is not None:
                _review(doc, source, target, review)
            if review is not None and review.confidence is not None and origin is not None:
                _describe(doc, source, target, origin, review.confidence)
        _set_language(doc, target_lang)
        return serialize_xml(doc.tree, data)


FORMAT = XliffFormat()
