"""HTML: the text of each block, and a few attributes, are units; every other byte is kept.

The document is tokenized with the standard library's ``html.parser`` (which gives each
tag's exact source text and position) and written back by splicing the original text, so
an identity translation gives the same bytes. Fragments without a doctype are HTML too.

Units:

- the text of each block: a run of text and inline elements between any two other tags
  (``p``, ``h1``-``h6``, ``li``, ``td``, ``th``, ``dt``, ``dd``, ``caption``, ``figcaption``,
  ``blockquote``, ``title``, ``option``, ``button``, ``label``, the direct text of a
  ``div``, ...); edge whitespace and comments stay outside;
- the attributes ``title``, ``alt``, ``placeholder`` and ``aria-label`` of any element, and
  ``content`` of ``<meta name="description">``, each a unit of its own.

Codes: inline elements (``b``, ``i``, ``em``, ``strong``, ``a``, ``span``, ``u``, ``sub``,
``sup``, ``small``, ``mark``, ``abbr``, ...) are paired codes whose natives are the exact
source tags (standalone when they do not pair up within the block); ``br``, ``img``,
``wbr``, ``input``, comments, and entity or character references (``&amp;``, ``&nbsp;``,
``&#233;``) are standalone, so references keep their source form and ``&lt;b&gt;`` never
turns into a tag. An inline ``<code>``, ``<kbd>`` or ``<samp>`` element is one standalone
code: its content is kept verbatim.

Kept untouched: ``<script>``, ``<style>``, ``<textarea>``, ``<pre>``, ``<svg>`` and ``<math>``
content, comments, the doctype, every other attribute, and any element marked
``translate="no"`` or ``class="notranslate"`` with all it contains. Translated text is
written escaped (``&amp;``, ``&lt;``, ``&gt;``; in attributes the quote too). When any unit is
translated, the ``lang`` attribute of ``<html>``, if present, becomes the target language.

The text must be UTF-8 (or UTF-16 with a BOM); a ``<meta charset>`` declaring anything
else is refused.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dragoman.errors import InvalidFile
from dragoman.formats.html_tokens import Event, Span, tokenize
from dragoman.formats.markup import CONTROL, Builder, Code, Marked, translated_units
from dragoman.formats.safety import decode_text, line_of
from dragoman.formats.text import encode_as

_PHRASING = "a abbr b bdi bdo big cite data del dfn em font i ins mark nobr q s small span"
INLINE = frozenset((*_PHRASING.split(), "strike", "strong", "sub", "sup", "time", "tt", "u"))
STANDALONE = frozenset({"br", "img", "wbr", "input"})
VERBATIM_INLINE = frozenset({"code", "kbd", "samp"})
UNTOUCHED = frozenset({"script", "style", "textarea", "pre", "svg", "math"})
ATTRIBUTES = frozenset({"title", "alt", "placeholder", "aria-label"})
_REFERENCE = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[a-zA-Z][a-zA-Z0-9]*;?)")
_UNFINISHED = re.compile(r"<[a-zA-Z/!?]")
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([^\s\"';]+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _TagPair:
    open: Span
    close: Span


@dataclass(frozen=True, slots=True)
class _Unit:
    span: Span
    marked: Marked
    natives: dict[int, Any]
    quote: str | None = None  # for an attribute: its quote, "" when unquoted


@dataclass(frozen=True, slots=True)
class _Part:
    kind: str  # "text", "ph" or "tag"
    span: Span
    text: str = ""
    tag: tuple[str, bool] | None = None  # (name, is_end) of a paired tag


def pair(tags: Sequence[tuple[str, bool] | None]) -> dict[int, int]:
    """Index of each start tag → index of its end tag, for ``(name, is_end)`` tags in order
    (``None`` for what is not a tag); tags left out do not pair up in a well-formed way."""
    stack: list[tuple[str, int]] = []
    pairs: dict[int, int] = {}
    for index, tag in enumerate(tags):
        if tag is None:
            continue
        name, is_end = tag
        if not is_end:
            stack.append((name, index))
            continue
        depth = next((d for d in range(len(stack) - 1, -1, -1) if stack[d][0] == name), None)
        if depth is not None:
            pairs[stack[depth][1]] = index
            del stack[depth:]
    return pairs


def _blank(part: _Part) -> bool:
    return (part.kind == "text" and not part.text.strip()) or part.kind == "comment"


def _trim(parts: list[_Part]) -> list[_Part]:
    while parts and _blank(parts[0]):
        parts.pop(0)
    while parts and _blank(parts[-1]):
        parts.pop()
    if parts and parts[0].kind == "text":
        first = parts[0]
        cut = len(first.text) - len(first.text.lstrip())
        parts[0] = _Part("text", Span(first.span.start + cut, first.span.end), first.text[cut:])
    if parts and parts[-1].kind == "text":
        last = parts[-1]
        cut = len(last.text) - len(last.text.rstrip())
        parts[-1] = _Part("text", Span(last.span.start, last.span.end - cut), last.text.rstrip())
    return parts


def _block_unit(run: list[_Part]) -> _Unit | None:
    parts = _trim(run)
    if not any(p.kind == "text" for p in parts):
        return None
    pairs = pair([p.tag for p in parts])
    closes = set(pairs.values())
    builder = Builder()
    for index, part in enumerate(parts):
        if part.kind == "text":
            builder.text(part.text)
        elif index in pairs:
            builder.open(_TagPair(part.span, parts[pairs[index]].span))
        elif index in closes:
            builder.close()
        else:
            builder.ph(part.span)
    marked = builder.build()
    if not marked.has_text():
        return None
    return _Unit(Span(parts[0].span.start, parts[-1].span.end), marked, builder.natives)


def _decoded(reference: str) -> str | None:
    """The text a character reference stands for, which is what an engine must read
    (``&amp;`` is ``&``, ``&lt;b&gt;`` is ``<b>`` and no tag); ``None`` for one that is
    better kept as written: unknown, or a control character no engine is given."""
    text = html.unescape(reference)
    return None if text == reference or CONTROL.search(text) else text


def _attribute_unit(text: str, span: Span, quote: str) -> _Unit | None:
    value = text[span.start : span.end]
    builder = Builder()
    pos = 0
    for match in _REFERENCE.finditer(value):
        builder.text(value[pos : match.start()])
        decoded = _decoded(match.group())
        if decoded is None:
            builder.ph(match.group())
        else:
            builder.text(decoded)
        pos = match.end()
    builder.text(value[pos:])
    marked = builder.build()
    return _Unit(span, marked, builder.natives, quote) if marked.has_text() else None


def _untranslatable(event: Event) -> bool:
    attrs = event.attrs
    return (attrs.get("translate") or "").lower() == "no" or "notranslate" in (
        attrs.get("class") or ""
    ).split()


@dataclass(slots=True)
class _Reader:
    text: str
    filename: str
    encoding: str
    units: list[_Unit]
    run: list[_Part]
    lang: Span | None = None
    declared: bool = False  # a <meta> declares the charset
    head: int | None = None  # where the <head> start tag ends
    inside: tuple[str, int, int] | None = None  # (tag, depth, start) of a verbatim element
    inline: bool = False  # the verbatim element becomes a code of the run around it

    def flush(self) -> None:
        unit = _block_unit(self.run)
        if unit is not None:
            self.units.append(unit)
        self.run = []

    def verbatim(self, event: Event) -> bool:
        if self.inside is None:
            return False
        tag, depth, start = self.inside
        if event.tag == tag and event.kind == "start":
            depth += 1
        elif event.tag == tag and event.kind == "end":
            depth -= 1
        self.inside = (tag, depth, start) if depth else None
        if not depth and self.inline:
            self.run.append(_Part("ph", Span(start, event.span.end)))
        return True

    def attributes(self, event: Event) -> None:
        if event.tag == "meta":
            self.charset(event)
        elif event.tag == "head" and event.kind == "start" and self.head is None:
            self.head = event.span.end
        for name, (span, quote) in event.values.items():
            if name in ATTRIBUTES or (
                name == "content"
                and event.tag == "meta"
                and (event.attrs.get("name") or "").lower() == "description"
            ):
                unit = _attribute_unit(self.text, span, quote)
                if unit is not None:
                    self.units.append(unit)
            if name == "lang" and event.tag == "html" and self.lang is None:
                self.lang = span

    def reference(self, span: Span) -> None:
        decoded = _decoded(self.text[span.start : span.end])
        if decoded is None or not decoded.strip():
            self.run.append(_Part("ph", span))  # whitespace too: kept out of the unit edges
        else:
            self.run.append(_Part("text", span, decoded))

    def charset(self, event: Event) -> None:
        declared = event.attrs.get("charset")
        if declared is None and (event.attrs.get("http-equiv") or "").lower() == "content-type":
            found = _CHARSET.search(event.attrs.get("content") or "")
            declared = found.group(1) if found else None
        if declared is None:
            return
        self.declared = True
        family = declared.strip().lower().replace("_", "-")
        utf16 = family.startswith("utf-16") and self.encoding == "utf-16"
        if family in ("utf-8", "utf8") or utf16:
            return
        line = line_of(self.text, event.span.start)
        raise InvalidFile(
            f"{self.filename}: line {line}: declares charset {declared!r}; "
            "HTML files must be UTF-8 (or UTF-16 with a byte-order mark)"
        )

    def start(self, event: Event) -> None:
        tag = event.tag
        opens = event.kind == "start"
        if _untranslatable(event) or tag in VERBATIM_INLINE or tag in UNTOUCHED:
            self.inline = tag in INLINE or tag in VERBATIM_INLINE or tag in STANDALONE
            if not self.inline:
                self.flush()
            if opens and tag not in STANDALONE:
                self.inside = (tag, 1, event.span.start)
            elif self.inline:
                self.run.append(_Part("ph", event.span))
            return
        self.attributes(event)
        if tag in STANDALONE or (tag in INLINE and not opens):
            self.run.append(_Part("ph", event.span))
        elif tag in INLINE:
            self.run.append(_Part("tag", event.span, tag=(tag, False)))
        else:
            self.flush()

    def feed(self, event: Event) -> None:
        if self.verbatim(event):
            return
        kind = event.kind
        if kind in ("start", "startend"):
            self.start(event)
        elif kind == "end" and event.tag in INLINE:
            self.run.append(_Part("tag", event.span, tag=(event.tag, True)))
        elif kind == "end" and event.tag in STANDALONE:
            self.run.append(_Part("ph", event.span))
        elif kind == "data" and _UNFINISHED.match(event.data):
            self.flush()  # a tag or comment left open at the end: kept as it is
        elif kind == "data":
            self.run.append(_Part("text", event.span, event.data))
        elif kind == "reference":
            self.reference(event.span)
        elif kind == "comment":
            self.run.append(_Part("comment", event.span))
        else:
            self.flush()


def _read(text: str, encoding: str, filename: str) -> _Reader:
    reader = _Reader(text, filename, encoding, [], [])
    for event in tokenize(text, filename):
        reader.feed(event)
    reader.flush()
    reader.units.sort(key=lambda unit: unit.span.start)
    return reader


def _escape(text: str, quote: str | None = None) -> str:
    """Text as HTML that means the same; a no-break space as ``&nbsp;``, as authors write
    it, since the character itself cannot be told from a space."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\xa0", "&nbsp;")
    if quote == "'":
        return text.replace("'", "&#39;")
    return text.replace('"', "&quot;") if quote is not None else text


@dataclass(frozen=True, slots=True)
class _Writer:
    text: str
    replaced: dict[int, tuple[int, str]]  # start -> (end, new text), never nested
    starts: list[int]

    def range(self, span: Span) -> str:
        out: list[str] = []
        pos = span.start
        for at in self.starts[bisect.bisect_left(self.starts, span.start) :]:
            end, new = self.replaced[at]
            if end > span.end:
                break
            out += [self.text[pos:at], new]
            pos = end
        out.append(self.text[pos : span.end])
        return "".join(out)

    def unit(self, unit: Marked, natives: dict[int, Any], quote: str | None) -> str:
        out: list[str] = []
        for token in unit.tokens:
            if not isinstance(token, Code):
                out.append(_escape(token, quote if quote is None else quote or '"'))
                continue
            native = natives[token.id]
            if isinstance(native, _TagPair):
                native = native.open if token.kind == "open" else native.close
            out.append(self.range(native) if isinstance(native, Span) else str(native))
        rendered = "".join(out)
        return f'"{rendered}"' if quote == "" else rendered


class HtmlFormat:
    name = "html"
    extensions: tuple[str, ...] = (".html", ".htm", ".xhtml")
    media_type = "text/html"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        text, encoding = decode_text(data, filename)
        return [unit.marked for unit in _read(text, encoding, filename).units]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        text, encoding = decode_text(data, filename)
        reader = _read(text, encoding, filename)
        changed = [
            (source, unit)
            for source, unit in translated_units(reader.units, units, filename)
            if unit != source.marked
        ]
        replaced: dict[int, tuple[int, str]] = {}
        if reader.lang is not None and any(unit is not None for unit in units):
            replaced[reader.lang.start] = (reader.lang.end, _escape(target_lang, '"'))
        head = _undeclared_head(reader, data, changed)
        if head is not None:
            replaced[head] = (head, '<meta charset="utf-8">')
        for source, unit in changed:
            if source.quote is not None:
                new = _Writer(text, {}, []).unit(unit, source.natives, source.quote)
                replaced[source.span.start] = (source.span.end, new)
        writer = _Writer(text, replaced, sorted(replaced))
        out: list[str] = []
        pos = 0
        for source, unit in changed:
            if source.quote is None:
                out.append(writer.range(Span(pos, source.span.start)))
                out.append(writer.unit(unit, source.natives, None))
                pos = source.span.end
        out.append(writer.range(Span(pos, len(text))))
        return encode_as("".join(out), encoding, data)


def _undeclared_head(
    reader: _Reader, data: bytes, changed: Sequence[tuple[_Unit, Marked]]
) -> int | None:
    """Where a page that was all ASCII, with a ``<head>`` but no charset, says it is UTF-8
    once it gets characters beyond ASCII (a browser or parser left to guess reads it as
    Windows-1252); None for any other page."""
    undeclared = not reader.declared and reader.encoding == "utf-8" and data.isascii()
    if undeclared and any(not unit.plain.isascii() for _, unit in changed):
        return reader.head
    return None


FORMAT = HtmlFormat()
