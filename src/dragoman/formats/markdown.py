"""Markdown (CommonMark with GFM tables and strikethrough): the inline text of each block is
a unit; every other byte is kept.

markdown-it-py finds the blocks (paragraphs, including those of list items and blockquotes;
headings; table cells) and their inline tokens; each token is then located in the source,
and translations are spliced into the original text, so an identity translation gives the
same bytes.

Codes: emphasis, strong emphasis and strikethrough (``*``, ``_``, ``**``, ``~~``) are paired
codes whose natives are their markers; a link ``[text](url "title")`` is a paired code
opened by ``[`` and closed by ``](url "title")`` (or ``][ref]``), so its text is translated
and its destination and title never are. A shortcut or collapsed reference link (``[ref]``,
``[ref][]``), whose text is the reference's label, is one standalone code, as are code
spans, images, autolinks, inline HTML, entity references and line breaks; a line break's
code carries the newline and the next line's prefix (indentation, ``>``), so wrapped lines
stay wrapped. A backslash escape is the character it stands for, escaped again on output.

Kept untouched: list markers, heading ``#`` and setext underlines, blockquote ``>``
prefixes, indentation, fenced and indented code blocks, HTML blocks, link reference
definitions, table delimiter rows, and a YAML front matter block (``---`` on the first
line up to the next ``---`` or ``...`` line). Translated text is written with Markdown's
special characters (``\\ ` * _ | [ ] <``) backslash-escaped, and so is what would start a
heading, list, quote or rule at the start of a line (``#``, ``-``, ``+``, ``>``, ``1.``).
A construct that cannot be located in the source leaves its block untranslated.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.image import image as image_rule
from markdown_it.rules_inline.link import link as link_rule
from markdown_it.token import Token

from dragoman.formats.markup import Builder, Code, Marked, translated_units
from dragoman.formats.safety import decode_text
from dragoman.formats.text import encode_as, single_line

_BREAKS = re.compile(r"\r\n|\r|\n")
_SPECIAL = re.compile(r"([\\`*_|\[\]<])")
_MARKER = re.compile(r"^([-+=#>~])")
_ORDERED = re.compile(r"^(\d{1,9})([.)])")
_PAIRED = {"em", "strong", "s"}
_Part = tuple[str, int, int, str]  # kind (text, ph, open, close), start, end, text


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("text_join")


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int
    end: int
    marked: Marked
    natives: dict[int, Any]


@dataclass(frozen=True, slots=True)
class _Source:
    text: str  # the original, line endings as they are
    lines: list[str]  # normalized as markdown-it sees them, without line endings
    starts: list[int]  # offset in ``text`` of each line

    @classmethod
    def of(cls, text: str) -> _Source:
        starts = [0] + [m.end() for m in _BREAKS.finditer(text)]
        lines = _BREAKS.split(text.replace("\0", "\ufffd"))
        return cls(text, lines, starts)

    def without_front_matter(self) -> str:
        lines = list(self.lines)
        if lines and lines[0].rstrip() == "---":
            ends = (i for i, line in enumerate(lines) if i and line.rstrip() in ("---", "..."))
            end = next(ends, 0)
            lines[: end + 1] = [""] * (end + 1) if end else lines[:1]
        return "\n".join(lines)


# A locator maps an offset in an inline token's content to one in the original text.
@dataclass(frozen=True, slots=True)
class _Locator:
    content_starts: list[int]  # offset in the content of each of its lines
    origins: list[int]  # offset in the original text of each line's first kept character
    leads: list[int]  # characters at each content line's start that are not in the source

    def __call__(self, offset: int) -> int:
        line = bisect.bisect_right(self.content_starts, offset) - 1
        column = offset - self.content_starts[line] - self.leads[line]
        return self.origins[line] + max(column, 0)


def _lines_locator(source: _Source, content: str, first: int) -> _Locator | None:
    """For a paragraph's content: each content line ends its source line (the last one
    before trailing blanks), after the prefixes markdown-it stripped."""
    pieces = content.split("\n")
    starts, origins, leads = [], [], []
    offset = 0
    for index, piece in enumerate(pieces):
        if first + index >= len(source.lines):
            return None
        line = source.lines[first + index]
        if index == len(pieces) - 1:
            line = line.rstrip()
        core = piece.lstrip(" \t") if index else piece
        if not line.endswith(core):
            return None
        starts.append(offset)
        origins.append(source.starts[first + index] + len(line) - len(core))
        leads.append(len(piece) - len(core))
        offset += len(piece) + 1
    return _Locator(starts, origins, leads)


def _find_locator(source: _Source, content: str, line: int, start: int) -> _Locator | None:
    at = source.lines[line].find(content, start) if line < len(source.lines) else -1
    return None if at < 0 or "\n" in content else _Locator([0], [source.starts[line] + at], [0])


def _break_end(content: str, pos: int) -> int | None:
    while pos < len(content) and content[pos] in " \t":
        pos += 1
    if content.startswith("\\\n", pos):
        pos += 1
    if not content.startswith("\n", pos):
        return None
    pos += 1
    while pos < len(content) and content[pos] in " \t":
        pos += 1
    return pos


def _code_end(content: str, pos: int, marker: str) -> int | None:
    fence = re.compile(rf"(?<!`){re.escape(marker)}(?!`)")
    found = fence.search(content, pos + len(marker))
    return found.end() if content.startswith(marker, pos) and found else None


def _link_end(md: MarkdownIt, env: dict[str, Any], content: str, pos: int, image: bool) -> int:
    state = StateInline(content, md, env, [])
    state.pos = pos
    ok = (image_rule if image else link_rule)(state, True)
    return state.pos if ok else -1


def _label_end(md: MarkdownIt, env: dict[str, Any], content: str, pos: int) -> int:
    end: int = md.helpers.parseLinkLabel(StateInline(content, md, env, []), pos, True)
    return end


def _walk(md: MarkdownIt, env: dict[str, Any], content: str, children: list[Token]) -> list[_Part]:
    """Each inline token as a part with its span in ``content``; ``ValueError`` when a token
    cannot be found where it should be."""
    parts: list[_Part] = []
    links: list[tuple[int, int]] = []
    pos = 0
    whole = False

    def take(kind: str, end: int | None, text: str = "") -> None:
        nonlocal pos
        if end is None or end < pos:
            raise ValueError(pos)
        parts.append((kind, pos, end, text))
        pos = end

    def literal(expected: str) -> int:
        if not content.startswith(expected, pos):
            raise ValueError(pos)
        return pos + len(expected)

    for token in children:
        kind, base = token.type, token.type.rsplit("_", 1)[0]
        if whole:  # inside a link kept whole
            whole = kind != "link_close"
        elif kind == "text":
            take("text", literal(token.content), token.content)
        elif kind == "text_special":
            is_escape = token.info == "escape"
            take("text" if is_escape else "ph", literal(token.markup), token.content)
        elif kind in ("softbreak", "hardbreak"):
            take("ph", _break_end(content, pos))
        elif kind == "code_inline":
            take("ph", _code_end(content, pos, token.markup))
        elif base in _PAIRED and kind.endswith(("_open", "_close")):
            take(kind.rsplit("_", 1)[1], literal(token.markup))
        elif kind == "link_open" and token.markup == "autolink":
            whole = True
            take("ph", content.find(">", pos) + 1 or None)
        elif kind == "link_open":
            label_end = _label_end(md, env, content, pos)
            end = _link_end(md, env, content, pos, False)
            whole = content[label_end:end] in ("]", "][]")  # its text is a reference label
            if whole:
                take("ph", end)
            else:
                links.append((label_end, end))
                take("open", literal("["))
        elif kind == "link_close":
            label_end, end = links.pop()
            if label_end != pos:
                raise ValueError(pos)
            take("close", end)
        elif kind == "image":
            take("ph", _link_end(md, env, content, pos, True))
        elif kind == "html_inline":
            take("ph", literal(token.content))
        else:
            raise ValueError(pos)
    if pos != len(content):
        raise ValueError(pos)
    return parts


def _unit(source: _Source, parts: list[_Part], locate: _Locator) -> _Unit | None:
    if not parts:
        return None
    builder = Builder()
    opened: list[list[str]] = []
    for kind, start, end, text in parts:
        native = source.text[locate(start) : locate(end)]
        if kind == "text":
            builder.text(text)
        elif kind == "open":
            opened.append([native, ""])
            builder.open(opened[-1])
        elif kind == "close":
            opened.pop()[1] = native
            builder.close()
        else:
            builder.ph(native)
    marked = builder.build()
    if not marked.has_text():
        return None
    return _Unit(locate(parts[0][1]), locate(parts[-1][2]), marked, builder.natives)


def _cells(line: str) -> list[tuple[int, str]]:
    """Each cell of a table row: its offset in ``line`` and its trimmed source text."""
    body_start = len(line) - len(line.lstrip(" \t>"))
    body = line[body_start:].rstrip()
    if body.startswith("|"):
        body_start, body = body_start + 1, body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells, pos = [], 0
    for match in re.finditer(r"(?<!\\)\||$", body):
        raw = body[pos : match.start()]
        cells.append((body_start + pos + len(raw) - len(raw.lstrip()), raw.strip()))
        pos = match.end()
    return cells


class _Reader:
    def __init__(self, text: str) -> None:
        self.source = _Source.of(text)
        self.md = _parser()
        self.env: dict[str, Any] = {}
        self.units: list[_Unit] = []

    def read(self) -> list[_Unit]:
        tokens = self.md.parse(self.source.without_front_matter(), self.env)
        row: list[tuple[int, str]] = []
        row_line = 0
        for index, token in enumerate(tokens):
            if token.type == "tr_open" and token.map:
                row_line = token.map[0]
                row = _cells(self.source.lines[row_line])
            if token.type != "inline" or not token.map or index == 0:
                continue
            parent = tokens[index - 1]
            if parent.type in ("th_open", "td_open"):
                self.cell(row, row_line, token)
            elif parent.type == "heading_open" and parent.markup.startswith("#"):
                line = self.source.lines[token.map[0]]
                after = len(line) - len(line.lstrip(" ").lstrip("#"))
                self.add(token, _find_locator(self.source, token.content, token.map[0], after))
            else:
                self.add(token, _lines_locator(self.source, token.content, token.map[0]))
        return self.units

    def cell(self, row: list[tuple[int, str]], line: int, token: Token) -> None:
        if not row:
            return
        offset, raw = row.pop(0)
        if raw.replace("\\|", "|") != token.content:
            return
        inline = self.md.parseInline(raw, self.env)[0]
        locate = _Locator([0], [self.source.starts[line] + offset], [0])
        self.add(inline, locate, raw)

    def add(self, token: Token, locate: _Locator | None, content: str | None = None) -> None:
        if locate is None or not token.children:
            return
        try:
            parts = _walk(
                self.md, self.env, token.content if content is None else content, token.children
            )
        except ValueError:
            return  # a construct not located in the source: left as it is
        unit = _unit(self.source, parts, locate)
        if unit is not None:
            self.units.append(unit)


def _escape(text: str, line_start: bool) -> str:
    text = _SPECIAL.sub(r"\\\1", single_line(text))
    if line_start:  # what would start a heading, list, quote or rule there is escaped
        text = _ORDERED.sub(r"\1\\\2", _MARKER.sub(r"\\\1", text.lstrip()))
    return text


def _render(unit: Marked, natives: dict[int, Any]) -> str:
    out: list[str] = []
    line_start = True
    for token in unit.tokens:
        if not isinstance(token, Code):
            out.append(_escape(token, line_start))
            line_start = line_start and not token.strip()
            continue
        native = natives[token.id]
        if isinstance(native, list):
            native = native[0] if token.kind == "open" else native[1]
        out.append(str(native))
        line_start = "\n" in str(native)
    return "".join(out)


class MarkdownFormat:
    name = "markdown"
    extensions: tuple[str, ...] = (".md", ".markdown")
    media_type = "text/markdown"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        text, _ = decode_text(data, filename)
        return [unit.marked for unit in _Reader(text).read()]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        text, encoding = decode_text(data, filename)
        sources = _Reader(text).read()
        out: list[str] = []
        pos = 0
        for source, unit in translated_units(sources, units, filename):
            if unit == source.marked:
                continue
            out += [text[pos : source.start], _render(unit, source.natives)]
            pos = source.end
        out.append(text[pos:])
        return encode_as("".join(out), encoding, data)


FORMAT = MarkdownFormat()
