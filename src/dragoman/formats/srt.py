"""SubRip subtitles: each cue's text is a unit.

Read with the ``srt`` library (a file it cannot parse is refused with the line), written by
splicing the original: numbering, timings, blank lines, line endings and the BOM stay
byte for byte. A cue's line breaks are standalone codes (``\\n`` or ``\\r\\n``), so the
engine translates the cue as one sentence and the translation keeps the cue's number of
lines. ``<i>``, ``<b>``, ``<u>`` and ``<font ...>`` are paired codes when they pair up
within the cue (standalone otherwise); ASS override tags such as ``{\\an8}`` and other
placeholders are standalone codes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import srt

from dragoman.errors import InvalidFile
from dragoman.formats.html import pair
from dragoman.formats.markup import Builder, Code, Marked, translated_units
from dragoman.formats.safety import decode_text, line_of
from dragoman.formats.text import encode_as, single_line

_PIECES = re.compile(r"\r?\n|<(/?)(i|b|u|font)\b[^<>]*>", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Cue:
    start: int
    end: int
    marked: Marked
    natives: dict[int, Any]


def _check(text: str, filename: str) -> None:
    try:
        subtitles = list(srt.parse(text))
    except srt.SRTParseError as exc:
        unmatched = exc.unmatched_content
        at = exc.expected_start + len(unmatched) - len(unmatched.lstrip())
        raise InvalidFile(
            f"{filename}: line {line_of(text, at)}: not a subtitle cue (number, then "
            f"'start --> end' timing): {unmatched.strip()[:60]!r}"
        ) from None
    except ValueError as exc:
        raise InvalidFile(f"{filename}: {exc}") from None
    for subtitle in subtitles:
        if "-->" in subtitle.content:
            line = subtitle.content.split("-->")[0].rsplit("\n", 1)[-1]
            raise InvalidFile(
                f"{filename}: cue {subtitle.index}: malformed timing line {line.strip()!r}"
            )


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
    _check(text, filename)
    cues: list[_Cue] = []
    for match in srt.SRT_REGEX.finditer(text):
        start, end = match.span(5)
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
