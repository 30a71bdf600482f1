"""YAML scalars written back in their source's style, for ``yaml_i18n``.

Plain scalars stay plain only where the new text reads back as the same string (no
indicator first, no ``: `` or `` #``, no flow indicators inside a flow collection, nothing
that resolves to a number, boolean, null or date); single-quoted stay single-quoted
unless the text needs escapes. Double quotes fit any text: they are the fallback. Block
scalars keep their header and indentation: a literal block's lines and line breaks are
written where they were; a folded block's paragraphs are wrapped at the source's width.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import yaml

_STR = "tag:yaml.org,2002:str"
_resolve: Callable[[type[yaml.Node], str, tuple[bool, bool]], str] = (
    yaml.resolver.Resolver().resolve
)
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_PRINTABLE = re.compile("[\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_NON_ASCII_ESCAPE = re.compile(
    r"(?<!\\)(?:\\\\)*\\(?:x[89a-fA-F][0-9a-fA-F]|u(?!00[0-7])[0-9a-fA-F]{4}|U)"
)
_NOT_INLINE = frozenset("\n\r\x85\u2028\u2029")
_LINE_START = re.compile(r"\n(?=[^\n])")
_FOLD_SPACE = re.compile(r"(?<=\S) (?=\S)")
_ESCAPES = {
    "\0": "\\0",
    "\x07": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\x0b": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}


def printable(value: str) -> bool:
    return _PRINTABLE.fullmatch(value) is not None


def plain_ok(value: str, flow: bool) -> bool:
    """Whether ``value`` written plain reads back as this string at this place."""
    if not value or value != value.strip() or value[0] in _INDICATORS:
        return False
    if single_quoted(value) is None or "\t" in value or "\ufeff" in value:
        return False
    if ": " in value or " #" in value or value.endswith(":"):
        return False
    if value.startswith(("---", "...")) or (flow and any(c in value for c in ",?[]{}")):
        return False
    return _resolve(yaml.ScalarNode, value, (True, False)) == _STR


def single_quoted(value: str) -> str | None:
    if not printable(value) or any(c in _NOT_INLINE for c in value):
        return None
    return "'" + value.replace("'", "''") + "'"


def inline(value: str, style: str | None, flow: bool, ascii_only: bool, quote: bool) -> str:
    """``value`` as a scalar of the source's ``style`` where it can be, else double-quoted."""
    if not quote and not (ascii_only and not value.isascii()):
        if style is None and plain_ok(value, flow):
            return value
        single = single_quoted(value) if style == "'" else None
        if single is not None:
            return single
    return double_quoted(value, ascii_only)


def block_ok(text: str) -> bool:
    """Whether a block scalar can hold ``text`` as it is: no escapes there, and no line
    breaks but ``\\n`` (which the block's own replace)."""
    return printable(text) and not any(c in text for c in "\r\x85\u2028\u2029\ufeff")


def double_quoted(value: str, ascii_only: bool) -> str:
    out: list[str] = []
    for char in value:
        code = ord(char)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif (ascii_only and code > 0x7E) or not printable(char) or char == "\ufeff":
            out.append(f"\\x{code:02X}" if code < 0x80 else _unicode_escape(code))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _unicode_escape(code: int) -> str:
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def escapes_non_ascii(raw: str) -> bool:
    """Whether a double-quoted scalar's source writes a non-ASCII character as an escape."""
    return _NON_ASCII_ESCAPE.search(raw) is not None


@dataclass(frozen=True, slots=True)
class Break:
    """The line breaks between two lines of a literal block, with the next line's
    indentation, as in the source."""

    source: str
    count: int


@dataclass(frozen=True, slots=True)
class Block:
    """A block scalar's content: ``text[start:end]`` from its first line's first character
    after the indentation to its last line's end; the header before and the chomped line
    breaks after are kept as they are."""

    start: int
    end: int
    indent: int
    explicit: bool  # the header has an indentation indicator
    folded: bool
    lead: str  # the value's line breaks before the content
    core: str
    tail: str  # after it: the line breaks the chomping indicator keeps
    lines: tuple[str | Break, ...]  # literal: each line and the breaks between
    width: int  # folded: the longest source line
    newline: str  # the header's line break


def _lines(text: str, pos: int, end: int) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    while pos < end:
        brk = _BREAK.search(text, pos, end)
        found.append((pos, brk.start() if brk else end))
        pos = brk.end() if brk else end
    return found


def block(text: str, start: int, end: int, folded: bool, value: str) -> Block | None:
    """The block scalar at ``text[start:end]`` (header to last line break) with the value
    ``value``; None when it has no content or when its lines do not give its value."""
    core = value.strip("\n")
    header = _BREAK.search(text, start, end)
    if not core or header is None:
        return None
    lines = _lines(text, header.end(), end)
    first = next((i for i, (a, b) in enumerate(lines) if text[a:b].strip(" ")), None)
    if first is None:
        return None
    head = text[lines[first][0] : lines[first][1]]
    indent = len(head) - len(head.lstrip(" ")) - (len(core) - len(core.lstrip(" ")))
    content = [(a, b) for a, b in lines[first:] if b - a > indent]
    pieces: list[str | Break] = []
    for i, (a, b) in enumerate(content):
        if i:
            gap = text[content[i - 1][1] : a]
            pieces.append(Break(gap + text[a : a + indent], len(_BREAK.findall(gap))))
        pieces.append(text[a + indent : b])
    lead = value[: len(value) - len(value.lstrip("\n"))]
    shape = Block(
        start=content[0][0] + indent,
        end=content[-1][1],
        indent=indent,
        explicit=any(c.isdigit() for c in text[start : header.start()].split("#")[0]),
        folded=folded,
        lead=lead,
        core=core,
        tail=value[len(lead) + len(core) :],
        lines=tuple(pieces),
        width=max(20, *(b - a - indent for a, b in content)),
        newline=header.group(),
    )
    if not folded and literal_value(shape.lines) != core:
        return None
    return shape


def literal_value(parts: Sequence[str | Break]) -> str:
    return "".join("\n" * p.count if isinstance(p, Break) else p for p in parts)


def literal(shape: Block, parts: Sequence[str | Break]) -> tuple[str, str]:
    """``(source, value)`` of a literal block's new content: text lines indented as the
    block is, the source's line breaks where the unit kept them."""
    runs: list[str | Break] = []
    for part in parts:
        if isinstance(part, str) and runs and isinstance(runs[-1], str):
            runs[-1] += part
        else:
            runs.append(part)
    if runs and isinstance(runs[0], str) and not shape.explicit:
        runs[0] = runs[0].lstrip(" ")
    if runs and isinstance(runs[-1], str):
        runs[-1] = runs[-1].rstrip("\n")
    pad = shape.newline + " " * shape.indent
    source = "".join(
        p.source if isinstance(p, Break) else _LINE_START.sub(lambda _: pad, p) for p in runs
    )
    return source, literal_value(runs)


def folded(shape: Block, core: str) -> tuple[str, str]:
    """``(source, core)`` of a folded block's new content: each paragraph wrapped at single
    spaces to the source's width; lines that start with white space are not folded."""
    core = core.strip("\n")
    if not shape.explicit:
        core = core.lstrip(" ")
    pad, newline = " " * shape.indent, shape.newline
    out: list[str] = []
    previous = ""
    for found in re.finditer(r"(\n*)([^\n]+)", core):
        newlines, line = len(found.group(1)), found.group(2)
        if out:
            spaced = previous[0] in " \t" or line[0] in " \t"
            out.append(newline * (newlines if spaced else newlines + 1) + pad)
        out.append(line if line[0] in " \t" else _wrap(line, shape.width, newline + pad))
        previous = line
    return "".join(out), core


def _wrap(line: str, width: int, joint: str) -> str:
    rows: list[str] = []
    for word in _FOLD_SPACE.split(line):
        if rows and len(rows[-1]) + 1 + len(word) <= width:
            rows[-1] += " " + word
        else:
            rows.append(word)
    return joint.join(rows)
