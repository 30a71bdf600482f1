"""JSON resource bundles: flat or nested key → string maps (i18next, Chrome-style, ARB).

What is translated: every string value, in document order, at any depth, in objects and
arrays. Keys, numbers, booleans and null are never touched. Keys that start with ``@``
are skipped with their whole value: ARB's ``@key`` metadata objects (descriptions,
placeholder declarations) and ``@@locale`` stay as they are.

Placeholders are protected: i18next ``{{name}}`` and ``$t(key)`` nesting, ICU arguments
(``{count, plural, one {# item} other {# items}}`` as one code), printf, URLs and e-mail
addresses.

What is written: the original text, with only each translated string's span (its quotes
included) replaced by the new string, JSON-escaped; indentation, key order, spacing and
every untranslated string's own escapes survive byte for byte. Non-ASCII characters are
written as ``\\uXXXX`` escapes when the source string used such escapes, or when the file
writes all of its non-ASCII text that way; otherwise as they are, in the file's encoding.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dragoman.errors import InvalidFile
from dragoman.formats.markup import PLACEHOLDER, Builder, Marked, translated_units
from dragoman.formats.safety import decode_text

_PROTECTED = re.compile(r"\$t\([^()\n]{1,200}\)|" + PLACEHOLDER.pattern)
_WS = re.compile(r"[ \t\n\r]*")
_LITERAL = re.compile(r"[^,\]}\s]+")
_U_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u([0-9a-fA-F]{4})")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class _Span:
    start: int  # the opening quote
    end: int  # after the closing quote
    value: str


class _Scanner:
    """The string values of valid JSON (already checked by ``json.loads``), with spans."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: list[_Span] = []

    def _ws(self, pos: int) -> int:
        found = _WS.match(self.text, pos)
        return found.end() if found else pos

    def _string(self, pos: int) -> tuple[str, int]:
        value, end = _DECODER.raw_decode(self.text, pos)
        return str(value), end

    def value(self, pos: int, skip: bool) -> int:
        pos = self._ws(pos)
        char = self.text[pos]
        if char == "{":
            return self._object(pos + 1, skip)
        if char == "[":
            return self._array(pos + 1, skip)
        if char == '"':
            value, end = self._string(pos)
            if not skip:
                self.spans.append(_Span(pos, end, value))
            return end
        found = _LITERAL.match(self.text, pos)
        return found.end() if found else pos + 1

    def _object(self, pos: int, skip: bool) -> int:
        pos = self._ws(pos)
        if self.text[pos] == "}":
            return pos + 1
        while True:
            key, pos = self._string(self._ws(pos))
            pos = self._ws(pos) + 1  # the colon
            pos = self._ws(self.value(pos, skip or key.startswith("@")))
            if self.text[pos] == "}":
                return pos + 1
            pos += 1  # the comma

    def _array(self, pos: int, skip: bool) -> int:
        pos = self._ws(pos)
        if self.text[pos] == "]":
            return pos + 1
        while True:
            pos = self._ws(self.value(pos, skip))
            if self.text[pos] == "]":
                return pos + 1
            pos += 1


@dataclass(frozen=True, slots=True)
class _Unit:
    span: _Span
    marked: Marked
    natives: dict[int, Any]


def _read(data: bytes, filename: str) -> tuple[str, str, list[_Unit]]:
    text, encoding = decode_text(data, filename)
    try:
        document = json.loads(text)
        if not isinstance(document, dict | list):
            raise InvalidFile(f"{filename}: the top level must be an object or an array")
        scanner = _Scanner(text)
        scanner.value(0, False)
    except json.JSONDecodeError as exc:
        raise InvalidFile(
            f"{filename}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise InvalidFile(f"{filename}: JSON nested too deeply") from None
    return text, encoding, [_unit(span) for span in scanner.spans]


def _unit(span: _Span) -> _Unit:
    builder = Builder(protect=False)
    pos = 0
    for match in _PROTECTED.finditer(span.value):
        builder.text(span.value[pos : match.start()])
        builder.ph(match.group())
        pos = match.end()
    builder.text(span.value[pos:])
    return _Unit(span, builder.build(), builder.natives)


def _escapes_non_ascii(text: str) -> bool:
    return any(int(code, 16) >= 0x80 for code in _U_ESCAPE.findall(text))


def _encode(text: str, data: bytes, encoding: str) -> bytes:
    if encoding != "utf-16":
        return text.encode(encoding)
    big_endian = data.startswith(b"\xfe\xff")
    return data[:2] + text.encode("utf-16-be" if big_endian else "utf-16-le")


class JsonFormat:
    name: str = "json"
    extensions: tuple[str, ...] = (".json",)
    media_type: str = "application/json"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        return [unit.marked for unit in _read(data, filename)[2]]

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        text, encoding, sources = _read(data, filename)
        escaped_file = _escapes_non_ascii(text) and not _NON_ASCII.search(text)
        pieces: list[str] = []
        pos = 0
        for source, translated in translated_units(sources, units, filename):
            value = "".join(
                t if isinstance(t, str) else str(source.natives[t.id]) for t in translated.tokens
            )
            if value == source.span.value:
                continue
            raw = text[source.span.start : source.span.end]
            escape = escaped_file or _escapes_non_ascii(raw)
            pieces += [text[pos : source.span.start], json.dumps(value, ensure_ascii=escape)]
            pos = source.span.end
        if not pieces:
            return data
        return _encode("".join([*pieces, text[pos:]]), data, encoding)


FORMAT = JsonFormat()
