"""SubRip subtitles: each cue's text is a unit.

Read with the ``srt`` library (a file it cannot parse is refused with the line), written by
splicing the original: numbering, timings, blank lines, line endings and the BOM stay
byte for byte. A cue's line breaks are standalone codes (``\\n`` or ``\\r\\n``), so the
engine translates the cue as one sentence and the translation keeps the cue's number of
lines. ``<i>``, ``<b>``, ``<u>`` and ``<font ...>`` are paired codes when they pair up
within the cue (standalone otherwise); ASS override tags such as ``{\\an8}`` and other
placeholders are standalone codes.

Cues are found by a small line reader of our own, linear in the file's size: the ``srt``
library's pattern backtracks cubically on some inputs (a few kilobytes of digits hold a
CPU for minutes) and its timestamps overflow on long numbers. It accepts what ``srt``
accepts: an optional number line, a timing line (``,``/``.``/``:`` separators, an optional
position after it), and text up to a blank line that a cue follows (or the end); a blank
line followed by anything else, and a number directly followed by a timing line, as
``srt`` does for subtitles stripped of a language.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dragoman.errors import InvalidFile
from dragoman.formats.html import pair
from dragoman.formats.markup import Builder, Code, Marked, translated_units
from dragoman.formats.safety import decode_text
from dragoman.formats.text import encode_as, single_line

_PIECES = re.compile(r"\r?\n|<(/?)(i|b|u|font)\b[^<>]*>", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Cue:
    start: int
    end: int
    marked: Marked
    natives: dict[int, Any]


_SEP = "[,.:\uff0c\uff0e\u3002\uff1a]"
# Possessive repetitions: a line of digits is read once, never backtracked over.
_STAMP = rf"[0-9]{{1,9}}+{_SEP}[0-9]{{1,9}}+{_SEP}[0-9]{{1,9}}+{_SEP}?+[0-9]{{0,9}}+"
_TIMING = re.compile(rf"\s*+{_STAMP} *+-[ -] *+> *+{_STAMP}(?: ?[^\r\n]*)?\r?$")
_STARTS_TIMED = re.compile(rf"\s*+{_STAMP}(?![0-9])")
_INDEX = re.compile(r"\s*+-?[0-9]++\.?[0-9]*+\s*+$")


@dataclass(frozen=True, slots=True)
class _Lines:
    """The text's lines (``\\n``-separated, a ``\\r`` before it kept) and their offsets."""

    text: str
    lines: list[str]
    starts: list[int]

    @classmethod
    def of(cls, text: str) -> _Lines:
        lines = text.split("\n")
        starts = [0]
        for line in lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        return cls(text, lines, starts)

    def blank(self, i: int) -> bool:
        return i < len(self.lines) and not self.lines[i].strip()

    def header(self, i: int) -> int:
        """How many lines the cue header at line ``i`` takes (number and timing): 0 if
        there is none."""
        if i < len(self.lines) and _TIMING.match(self.lines[i]):
            return 1
        indexed = i + 1 < len(self.lines) and _INDEX.match(self.lines[i])
        return 2 if indexed and _TIMING.match(self.lines[i + 1]) else 0

    def looks_timed(self, i: int, *, numbered: bool) -> bool:
        """Whether a cue seems to start at line ``i``: a number and a line starting with a
        timestamp, or (``numbered`` false) a timestamp alone."""
        lines = self.lines
        if i >= len(lines):
            return False
        if not numbered and _STARTS_TIMED.match(lines[i]):
            return True
        return bool(_INDEX.match(lines[i]) and i + 1 < len(lines)) and bool(
            _STARTS_TIMED.match(lines[i + 1])
        )

    def content_end(self, i: int) -> int:
        """The line after a cue's text that starts at line ``i``."""
        while i < len(self.lines):
            if self.blank(i):
                after = i
                while self.blank(after):
                    after += 1
                if after == len(self.lines) or self.looks_timed(after, numbered=False):
                    return i
                i = after  # blank lines inside the text: each looked at once
                continue
            if i > 0 and self.looks_timed(i, numbered=True) and not self.blank(i - 1):
                return i
            i += 1
        return i


def _spans(text: str, filename: str) -> list[tuple[int, int]]:
    """Each cue's text as a span of ``text``; ``InvalidFile`` with the line of what is
    not a cue."""
    lines = _Lines.of(text)
    spans: list[tuple[int, int]] = []
    i = 0
    while True:
        while lines.blank(i):
            i += 1
        if i >= len(lines.lines):
            return spans
        header = lines.header(i)
        if not header:
            raise InvalidFile(
                f"{filename}: line {i + 1}: not a subtitle cue (number, then "
                f"'start --> end' timing): {text[lines.starts[i] :].strip()[:60]!r}"
            )
        first = i + header
        end = lines.content_end(first)
        last = max(first, end)
        while last > first and lines.blank(last - 1):
            last -= 1
        if last > first:
            body = lines.lines[first:last]
            _refuse_timing_in_text(body, lines.lines[i].strip() if header == 2 else "", filename)
            close = lines.starts[last - 1] + len(body[-1].removesuffix("\r"))
            spans.append((lines.starts[first], close))
        i = end


def _refuse_timing_in_text(body: list[str], number: str, filename: str) -> None:
    """A timing line inside a cue's text is one the reader could not take for a timing."""
    for line in body:
        if "-->" in line:
            cue = f"cue {number}" if number else "a cue"
            shown = line.split("-->")[0].strip()
            raise InvalidFile(f"{filename}: {cue}: malformed timing line {shown!r}")


def _build(content: str) -> tuple[Marked, dict[int, Any]]:
    parts: list[tuple[str, str]] = []  # (kind, text): "text", "break" or "tag"
    tags: list[tuple[str, bool] | None] = []
    pos = 0
    for match in _PIECES.finditer(content):
        parts.append(("text", content[pos : match.start()]))
        tags.append(None)
        kind = "tag" if match.group(2) else "break"
        parts.append((kind, match.group()))
        tags.append((match.group(2).lower(), bool(match.group(1))) if match.group(2) else None)
        pos = match.end()
    parts.append(("text", content[pos:]))
    tags.append(None)
    pairs = pair(tags)
    closes = {end: start for start, end in pairs.items()}
    builder = Builder()
    for index, (kind, piece) in enumerate(parts):
        if kind == "text":
            builder.text(piece)
        elif index in pairs:
            builder.open((piece, parts[pairs[index]][1]))
        elif index in closes:
            builder.close()
        else:
            builder.ph(piece)
    return builder.build(), builder.natives


def _cues(text: str, filename: str) -> list[_Cue]:
    cues: list[_Cue] = []
    for start, end in _spans(text, filename):
        marked, natives = _build(text[start:end])
        if marked.has_text():
            cues.append(_Cue(start, end, marked, natives))
    return cues


def _render(unit: Marked, natives: dict[int, Any]) -> str:
    out: list[str] = []
    for token in unit.tokens:
        if not isinstance(token, Code):
            out.append(single_line(token))
            continue
        native = natives[token.id]
        if token.kind == "ph":
            out.append(native)
        else:
            out.append(native[0] if token.kind == "open" else native[1])
    return "".join(out)


class SrtFormat:
    name = "srt"
    extensions: tuple[str, ...] = (".srt",)
    media_type = "application/x-subrip"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        text, _ = decode_text(data, filename)
        return [cue.marked for cue in _cues(text, filename)]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        text, encoding = decode_text(data, filename)
        cues = _cues(text, filename)
        out: list[str] = []
        pos = 0
        for cue, unit in translated_units(cues, units, filename):
            if unit == cue.marked:
                continue
            out += [text[pos : cue.start], _render(unit, cue.natives)]
            pos = cue.end
        out.append(text[pos:])
        return encode_as("".join(out), encoding, data)


FORMAT = SrtFormat()
