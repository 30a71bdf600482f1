"""TMX 1.4, the exchange format of translation memories: read (``read_tmx``) and written
(``write_tmx``). Not a file format of jobs: a memory is imported, never translated.

Read: ``<tmx version="1.4">`` with a ``<header srclang>`` (a language, or ``*all*``: any
variant may be the source) and a ``<body>`` of ``<tu>``, each with ``<tuv>`` (``xml:lang``,
or TMX 1.1's ``lang``), each with one ``<seg>``. A ``<tu>`` with fewer than two languages,
or none in ``srclang``, is skipped and counted (``Memory.skipped``).
Languages are reduced to their base code: ``en-US``, ``EN_gb`` and ``eng`` are ``en``.
Inline elements become codes that link a variant's markup to the other variants': ``bpt``/
``ept`` (paired by ``i``, linked by ``x`` or else ``i``), ``hi`` (paired, its content is
text), ``ph``, ``it`` and ``ut`` (standalone, linked by ``x`` or else by their order); the
native code inside them (and any ``sub``) is not kept. Anything else is refused with the
line that has it. The XML goes through ``safety.parse_xml``: no entities, no DTD, no network.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from lxml import etree

from dragoman.errors import InvalidFile, InvalidRequest
from dragoman.formats.markup import Code, CodeKind, Marked
from dragoman.formats.safety import parse_xml
from dragoman.languages import canonical

VERSIONS = ("1.4", "1.4b")
ALL = "*all*"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_STANDALONE = ("ph", "it", "ut")
MEDIA_TYPE = "application/x-tmx+xml"


@dataclass(frozen=True, slots=True)
class Inline:
    """A TMX inline element as a code; ``link`` ties it to its counterpart in another
    variant of the unit."""

    kind: CodeKind
    link: str


Piece = str | Inline


@dataclass(frozen=True, slots=True)
class Variant:
    lang: str  # the base language, canonical: "en"
    pieces: tuple[Piece, ...]
    changed: str  # changedate, "YYYYMMDDThhmmssZ" (sorts as time), or ""

    @property
    def has_codes(self) -> bool:
        return any(isinstance(p, Inline) for p in self.pieces)

    @property
    def text(self) -> str:
        return "".join(p for p in self.pieces if isinstance(p, str))


@dataclass(frozen=True, slots=True)
class Unit:
    variants: dict[str, Variant]  # by language; the first variant of a language is kept
    line: int


@dataclass(frozen=True, slots=True)
class Memory:
    source_lang: str | None  # None: ``*all*``, any variant may be the source
    units: list[Unit]
    # Units left out, each why: fewer than two languages (a unit not translated yet, as
    # CAT tools export them), or none in the header's source language.
    skipped: tuple[str, ...] = ()

    @property
    def languages(self) -> list[str]:
        return sorted({lang for unit in self.units for lang in unit.variants})


def base_language(tag: str) -> str:
    """``en-US``, ``EN_gb`` or ``eng`` → ``en``; ``InvalidRequest`` for what is no language."""
    return canonical(tag.replace("_", "-").split("-", 1)[0])


def _local(element: etree._Element) -> str:
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def _child(parent: etree._Element, name: str) -> etree._Element | None:
    return next((c for c in parent if _local(c) == name), None)


def read_tmx(data: bytes, filename: str) -> Memory:
    """The memory in ``data``; ``InvalidFile`` naming what is wrong (and where)."""
    root = parse_xml(data, filename).getroot()
    if _local(root) != "tmx":
        raise InvalidFile(f"{filename}: not a TMX file (the root element is <{_local(root)}>)")
    version = root.get("version")
    if version not in VERSIONS:
        shown = f"version {version!r}" if version else "no version"
        raise InvalidFile(f"{filename}: TMX {shown} is not supported; export it as TMX 1.4")
    header, body = _child(root, "header"), _child(root, "body")
    if header is None or body is None:
        missing = "<header>" if header is None else "<body>"
        raise InvalidFile(f"{filename}: the TMX has no {missing}")
    srclang = header.get("srclang")
    if not srclang:
        raise InvalidFile(f"{filename}: line {header.sourceline}: <header> has no srclang")
    source = None if srclang.lower() == ALL else _language(srclang, header, filename)
    units: list[Unit] = []
    skipped: list[str] = []
    for tu in (c for c in body if _local(c) == "tu"):
        unit = _unit(tu, filename)
        why = _unusable(unit, source)
        if why:
            skipped.append(f"line {tu.sourceline}: the <tu> {why}")
        else:
            units.append(unit)
    if not units and skipped:
        raise InvalidFile(f"{filename}: no <tu> can be used; {skipped[0]}")
    if not units:
        raise InvalidFile(f"{filename}: the TMX <body> has no <tu>")
    return Memory(source, units, tuple(skipped))


def _language(tag: str, element: etree._Element, filename: str) -> str:
    try:
        return base_language(tag)
    except InvalidRequest:
        raise InvalidFile(
            f"{filename}: line {element.sourceline}: {tag!r} is not a language"
        ) from None


def _unit(tu: etree._Element, filename: str) -> Unit:
    variants: dict[str, Variant] = {}
    for tuv in (c for c in tu if _local(c) == "tuv"):
        tag = tuv.get(_XML_LANG) or tuv.get("lang")
        if not tag:
            raise InvalidFile(f"{filename}: line {tuv.sourceline}: <tuv> has no xml:lang")
        lang = _language(tag, tuv, filename)
        seg = _child(tuv, "seg")
        if seg is None:
            raise InvalidFile(f"{filename}: line {tuv.sourceline}: <tuv> has no <seg>")
        changed = tuv.get("changedate") or tu.get("changedate") or ""
        variants.setdefault(lang, Variant(lang, tuple(_pieces(seg, filename)), changed))
    return Unit(variants, tu.sourceline or 0)


def _unusable(unit: Unit, source: str | None) -> str | None:
    """Why ``unit`` cannot serve as a memory's unit, or None."""
    if len(unit.variants) < 2:
        found = ", ".join(unit.variants) or "none"
        return f"has fewer than two languages ({found}); it needs two"
    if source is not None and source not in unit.variants:
        return f"has no variant in the source language {source}"
    return None


def _pieces(seg: etree._Element, filename: str) -> list[Piece]:
    out: list[Piece] = []
    counts: dict[str, int] = {}
    paired: dict[str, str] = {}  # bpt's i -> its link

    def walk(element: etree._Element) -> None:
        if element.text:
            out.append(element.text)
        for child in element:
            _inline(child)
            if child.tail:
                out.append(child.tail)

    def unnamed(tag: str) -> str:
        counts[tag] = counts.get(tag, 0) + 1
        return f"{tag}#{counts[tag]}"

    def _inline(child: etree._Element) -> None:
        tag, x = _local(child), child.get("x")
        if tag == "bpt":
            link = f"x{x}" if x else f"i{child.get('i')}"
            paired[child.get("i") or ""] = link
            out.append(Inline("open", link))
        elif tag == "ept" and (child.get("i") or "") in paired:
            out.append(Inline("close", paired.pop(child.get("i") or "")))
        elif tag in (*_STANDALONE, "ept"):
            out.append(Inline("ph", f"x{x}" if x else unnamed(tag)))
        elif tag == "hi":
            link = f"x{x}" if x else unnamed(tag)
            out.append(Inline("open", link))
            walk(child)
            out.append(Inline("close", link))
        elif isinstance(child.tag, str):
            raise InvalidFile(
                f"{filename}: line {child.sourceline}: <{tag}> is not a TMX inline element"
            )

    walk(seg)
    # A bpt whose ept is missing stands alone.
    opened = set(paired.values())
    return [
        Inline("ph", p.link)
        if isinstance(p, Inline) and p.kind == "open" and p.link in opened
        else p
        for p in out
    ]


@dataclass(frozen=True, slots=True)
class Translation:
    """One translation unit to write: a source and a target in the stored form of codes."""

    source_lang: str
    source: Marked
    target_lang: str
    target: Marked
    note: str = ""  # written as <prop type="x-origin">


def write_tmx(
    translations: Iterable[Translation],
    *,
    source_lang: str | None,
    tool_version: str,
    when: datetime,
) -> bytes:
    """TMX 1.4 of ``translations``; codes become empty ``bpt``/``ept`` (``i`` and ``x`` = the code's
    id) and ``ph`` (``x``), so that the same structure matches again on import."""
    root = etree.Element("tmx", version="1.4")
    header = {
        "creationtool": "dragoman",
        "creationtoolversion": tool_version,
        "segtype": "sentence",
        "o-tmf": "dragoman",
        "adminlang": "en",
        "srclang": source_lang or ALL,
        "datatype": "plaintext",
        "creationdate": when.strftime("%Y%m%dT%H%M%SZ"),
    }
    etree.SubElement(root, "header", header)
    body = etree.SubElement(root, "body")
    for pair in translations:
        tu = etree.SubElement(body, "tu")
        if pair.note:
            etree.SubElement(tu, "prop", type="x-origin").text = pair.note
        for lang, marked in ((pair.source_lang, pair.source), (pair.target_lang, pair.target)):
            tuv = etree.SubElement(tu, "tuv", {_XML_LANG: lang})
            _write_seg(etree.SubElement(tuv, "seg"), marked.tokens)
    out: bytes = etree.tostring(root, encoding="UTF-8", xml_declaration=True, pretty_print=True)
    return out


# What XML 1.0 cannot carry. Segments are checked on the way in, so only text stored before
# a check existed can hold one: it is written as U+FFFD rather than failing the export.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _write_seg(seg: etree._Element, tokens: Sequence[str | Code]) -> None:
    last: etree._Element | None = None
    for token in tokens:
        if isinstance(token, str):
            token = _NOT_XML.sub("\ufffd", token)
            if last is None:
                seg.text = (seg.text or "") + token
            else:
                last.tail = (last.tail or "") + token
            continue
        ident = str(token.id)
        if token.kind == "open":
            last = etree.SubElement(seg, "bpt", i=ident, x=ident)
        elif token.kind == "close":
            last = etree.SubElement(seg, "ept", i=ident)
        else:
            last = etree.SubElement(seg, "ph", x=ident)
