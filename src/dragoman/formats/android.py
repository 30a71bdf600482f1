"""Android string resources (``res/values/strings.xml`` and the like).

The format is chosen by the extension ``.xml`` (no other format claims it) or by name;
the root must be ``<resources>``, so any other XML file is refused, not passed through.

What is translated: each ``<string>``, each ``<item>`` of a ``<string-array>`` and each
``<item>`` of a ``<plurals>`` (every quantity the source has: a language needing other
quantities, ``few`` or ``many``, needs a translator to add them). Kept: anything marked
``translatable="false"`` (on the string or its array), strings that are references
(``@string/other``, ``?attr/x``), every other resource (dimensions, colours, styles), and
every comment, attribute (``name``, ``tools:*``, ``formatted``…) and byte of layout.

Android's own escapes: ``\\'``, ``\\"``, ``\\\\``, ``\\@`` and ``\\?`` are the characters
they stand for in the unit's text, so an engine sees ``don't``; ``\\n``, ``\\t`` and
``\\uXXXX`` are standalone codes, written back as they were, and so is each bare ``"``
(Android's quoting, which keeps whitespace; ``"`` in text stands for it too as
``&quot;``). Text written back is escaped for Android and XML: ``\\`` → ``\\\\``, ``"`` →
``\\"``, ``'`` → ``\\'`` outside a quoted stretch, ``@`` or ``?`` first → ``\\@``,
``\\?``, and ``& < >`` as entities. Inline markup (``<b>``, ``<i>``, ``<u>``, ``<font>``,
``<a>``, ``<annotation>`` …) is paired codes, their tags written back verbatim;
``<xliff:g>`` marks text not to translate (a placeholder and its example) and is a
standalone code with the whole element, as are comments and CDATA sections inside a
string (their content is kept untranslated). Placeholders (``%1$s``, ``%d``) are
protected.

The file is written by splicing: only the content of translated elements changes, so a
diff against the source shows the strings alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lxml import etree

from dragoman.errors import InvalidFile
from dragoman.formats.markup import Builder, Marked, translated_units
from dragoman.formats.safety import decode_text, parse_xml

XLIFF_12 = "urn:oasis:names:tc:xliff:document:1.2"
ARRAYS = frozenset({"string-array", "plurals"})

# Tokens of a document already checked well formed by ``parse_xml``.
_TOKEN = re.compile(
    r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<!DOCTYPE[^\[>]*(?:\[.*?\])?\s*>"
    r"|</(?P<end>[^\s>]+)\s*>"
    r"|<(?P<start>[^\s/>!?]+)(?:\s+[^\s=/>]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*\s*(?P<empty>/?)>",
    re.S,
)
_ENTITY = re.compile(r"&(lt|gt|amp|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);")
_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_ESCAPE = re.compile(r'\\u[0-9a-fA-F]{4}|\\.|\\|"', re.S)
_LITERAL = {"\\'": "'", '\\"': '"', "\\\\": "\\", "\\@": "@", "\\?": "?"}


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # text, start, end, empty, other (comment, CDATA, PI, DOCTYPE)
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Raw:
    """Source XML written back verbatim: an ``<xliff:g>``, a comment, CDATA, ``<br/>``."""

    xml: str


@dataclass(frozen=True, slots=True)
class _Quote:
    """A bare ``"``: Android's quoting."""

    xml: str


@dataclass(frozen=True, slots=True)
class _Tag:
    start: str
    end: str


@dataclass(frozen=True, slots=True)
class _Unit:
    span: tuple[int, int]  # offsets of the element's content in the text
    marked: Marked
    natives: dict[int, Any]


@dataclass(frozen=True, slots=True)
class _Resources:
    text: str
    units: list[_Unit]


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos = 0
    for match in _TOKEN.finditer(text):
        if match.start() > pos:
            out.append(_Tok("text", pos, match.start()))
        if match["end"]:
            kind = "end"
        elif match["start"]:
            kind = "empty" if match["empty"] else "start"
        else:
            kind = "other"
        out.append(_Tok(kind, match.start(), match.end()))
        pos = match.end()
    if pos < len(text):
        out.append(_Tok("text", pos, len(text)))
    return out


def _pairs(tokens: list[_Tok]) -> dict[int, int]:
    """The index of each start tag's end tag."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for i, tok in enumerate(tokens):
        if tok.kind == "start":
            stack.append(i)
        elif tok.kind == "end":
            pairs[stack.pop()] = i
    return pairs


def _local(element: Any) -> str:
    return str(etree.QName(element).localname)


def _wanted(element: Any, root: Any) -> bool:
    parent = element.getparent()
    if element.get("translatable") == "false" or parent is None:
        return False
    if _local(element) == "string":
        return parent is root
    return (
        _local(element) == "item"
        and parent.getparent() is root
        and _local(parent) in ARRAYS
        and parent.get("translatable") != "false"
    )


def _decode_entities(raw: str) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("#x"):
            return chr(int(name[2:], 16))
        if name.startswith("#"):
            return chr(int(name[1:]))
        return _ENTITIES[name]

    return _ENTITY.sub(one, raw)


class _Reader:
    def __init__(self, text: str, tokens: list[_Tok], elements: dict[int, Any]) -> None:
        self.text = text
        self.tokens = tokens
        self.elements = elements
        self.pairs = _pairs(tokens)
        self.pending: list[str] = []

    def raw(self, tok: _Tok, until: _Tok | None = None) -> str:
        return self.text[tok.start : (until or tok).end]

    def unit(self, i: int) -> _Unit | None:
        j = self.pairs.get(i)
        if j is None or j == i + 1:
            return None
        first = self.tokens[i + 1]
        if first.kind == "text" and self.raw(first).lstrip()[:1] in ("@", "?"):
            return None
        builder = Builder()
        self._emit(i + 1, j, builder)
        self._flush(builder)
        span = (self.tokens[i].end, self.tokens[j].start)
        return _Unit(span, builder.build(), builder.natives)

    def _emit(self, lo: int, hi: int, b: Builder) -> None:
        k = lo
        while k < hi:
            tok = self.tokens[k]
            if tok.kind == "text":
                self._text(self.raw(tok), b)
            elif tok.kind == "start":
                end = self.pairs[k]
                element = self.elements[k]
                self._flush(b)
                if _local(element) == "g" and etree.QName(element).namespace == XLIFF_12:
                    b.ph(_Raw(self.raw(tok, self.tokens[end])))
                else:
                    b.open(_Tag(self.raw(tok), self.raw(self.tokens[end])))
                    self._emit(k + 1, end, b)
                    self._flush(b)
                    b.close()
                k = end
            else:
                self._flush(b)
                b.ph(_Raw(self.raw(tok)))
            k += 1

    def _text(self, raw: str, b: Builder) -> None:
        text = _decode_entities(raw)
        pos = 0
        for match in _ESCAPE.finditer(text):
            self.pending.append(text[pos : match.start()])
            pos = match.end()
            escape = match.group()
            if escape in _LITERAL:
                self.pending.append(_LITERAL[escape])
                continue
            self._flush(b)
            b.ph(_Quote(escape) if escape == '"' else escape)
        self.pending.append(text[pos:])

    def _flush(self, b: Builder) -> None:
        b.text("".join(self.pending))
        self.pending.clear()


def _read(data: bytes, filename: str) -> _Resources:
    tree = parse_xml(data, filename)
    root = tree.getroot()
    if _local(root) != "resources":
        raise InvalidFile(
            f"{filename}: not an Android string resource file (the root element is "
            f"<{_local(root)}>, not <resources>); set the format for other XML files"
        )
    text, _ = decode_text(data, filename)
    tokens = _tokens(text)
    starts = [i for i, tok in enumerate(tokens) if tok.kind in ("start", "empty")]
    found = list(root.iter(etree.Element))
    if len(starts) != len(found):
        raise InvalidFile(f"{filename}: the XML cannot be read as Android resources")
    elements = dict(zip(starts, found, strict=True))
    reader = _Reader(text, tokens, elements)
    units: list[_Unit] = []
    for i, element in elements.items():
        if _wanted(element, root):
            unit = reader.unit(i)
            if unit is not None and unit.marked.has_text():
                units.append(unit)
    return _Resources(text, units)


def _escape(text: str, *, quoted: bool, first: bool) -> str:
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    if not quoted:
        out = out.replace("'", "\\'")
    if first:
        out = re.sub(r"^(\s*)([@?])", r"\1\\\2", out)
    return _xml(out)


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _render(marked: Marked, natives: dict[int, Any]) -> str:
    out: list[str] = []
    quoted = False
    first = True
    for token in marked.tokens:
        if isinstance(token, str):
            out.append(_escape(token, quoted=quoted, first=first))
            first = first and not token.strip()
            continue
        native = natives[token.id]
        if isinstance(native, _Tag):
            out.append(native.start if token.kind == "open" else native.end)
        elif isinstance(native, _Quote):
            quoted = not quoted
            out.append(native.xml)
        else:
            out.append(native.xml if isinstance(native, _Raw) else _xml(native))
    return "".join(out)


def _encode(text: str, data: bytes) -> bytes:
    if data.startswith(b"\xff\xfe"):
        return data[:2] + text.encode("utf-16-le")
    if data.startswith(b"\xfe\xff"):
        return data[:2] + text.encode("utf-16-be")
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    return bom + text.encode("utf-8")


class AndroidFormat:
    name: str = "android"
    extensions: tuple[str, ...] = (".xml",)
    media_type: str = "application/xml"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        return [unit.marked for unit in _read(data, filename).units]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        doc = _read(data, filename)
        pieces: list[str] = []
        pos = 0
        for source, unit in translated_units(doc.units, units, filename):
            if unit == source.marked:
                continue
            start, end = source.span
            pieces += [doc.text[pos:start], _render(unit, source.natives)]
            pos = end
        if not pieces:
            return data
        return _encode("".join([*pieces, doc.text[pos:]]), data)


FORMAT = AndroidFormat()
