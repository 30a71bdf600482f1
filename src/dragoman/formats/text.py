"""Plain text: each line with text is a unit.

Translated: the text of every line, from its first to its last non-blank character.
Kept, byte for byte: line endings (LF, CRLF or CR, whatever each line has), blank lines,
indentation and trailing blanks, the byte-order mark and the encoding (UTF-8, or UTF-16
with its BOM). Placeholders (``%s``, ``{name}``, URLs, e-mail addresses) are codes the
engine cannot change. A line break inside a translation becomes a space, so the file keeps
its lines: line N of the output is the translation of line N of the input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dragoman.formats.markup import Builder, Code, Marked, translated_units
from dragoman.formats.safety import decode_text

_LINE = re.compile(r"[^\r\n]+")
_BREAKS = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int
    end: int
    marked: Marked
    natives: dict[int, Any]


def encode_as(text: str, encoding: str, original: bytes) -> bytes:
    """``text`` in the encoding ``decode_text`` found in ``original``, with the same BOM."""
    if encoding == "utf-16":
        bom = original[:2]
        return bom + text.encode("utf-16-le" if bom == b"\xff\xfe" else "utf-16-be")
    return text.encode(encoding)


def single_line(text: str) -> str:
    return _BREAKS.sub(" ", text)


def _units(text: str) -> list[_Unit]:
    found: list[_Unit] = []
    for match in _LINE.finditer(text):
        line = match.group()
        body = line.strip()
        if not body:
            continue
        start = match.start() + len(line) - len(line.lstrip())
        builder = Builder()
        builder.text(body)
        found.append(_Unit(start, start + len(body), builder.build(), builder.natives))
    return found


def _render(unit: Marked, natives: dict[int, Any]) -> str:
    return "".join(
        str(natives[t.id]) if isinstance(t, Code) else single_line(t) for t in unit.tokens
    )


class TextFormat:
    name = "text"
    extensions: tuple[str, ...] = (".txt",)
    media_type = "text/plain"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        text, _ = decode_text(data, filename)
        return [unit.marked for unit in _units(text)]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        text, encoding = decode_text(data, filename)
        sources = _units(text)
        out: list[str] = []
        pos = 0
        for source, unit in translated_units(sources, units, filename):
            if unit == source.marked:
                continue
            out += [text[pos : source.start], _render(unit, source.natives)]
            pos = source.end
        out.append(text[pos:])
        return encode_as("".join(out), encoding, data)


FORMAT = TextFormat()
