"""Gettext PO and POT catalogs, read and written with polib.

What is translated: every entry whose ``msgstr`` is empty, that is neither obsolete nor
the header. A plural entry gives two units, ``msgid`` and ``msgid_plural``: the first
fills ``msgstr[0]``, the second every index from 1 up to the header's ``nplurals`` (or the
indices the entry already has), since the target language's own forms are unknown here.
Entries that have a ``msgstr`` (fuzzy ones included) are kept as they are.

Placeholders are protected: printf (``%s``, ``%1$d``), python-format (``%(name)s``),
braces (``{name}``, ICU), URLs and e-mail addresses.

What is written: each machine-translated entry (from the engine or the segment cache) gets
the ``fuzzy`` flag, gettext's way to say "needs review" (msgfmt leaves fuzzy entries out
until a translator clears the flag); an entry whose every unit is an exact match in a
translation memory is left unmarked, as a translator's own would be.
The header gets ``Language: <target>``, and ``charset=UTF-8`` when it had none usable (a
POT's ``CHARSET``); a POT comes back as a PO. Contexts, translator and extracted comments,
references, flags, previous msgids and obsolete entries are kept. polib re-wraps long
lines as msgmerge does, so the output is the same catalog, not always the same bytes; when
no unit gets a translation the file comes back unchanged.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polib

from dragoman.errors import InvalidFile
from dragoman.formats.markup import PLACEHOLDER, Builder, Marked, translated_units
from dragoman.formats.safety import decode_text
from dragoman.models import Origin

PYTHON_FORMAT = r"%\([^)\n]{1,80}\)[-+ #0]*\d*(?:\.\d+)?[sdifrxXeEgGoca%]"
_PROTECTED = re.compile(f"{PYTHON_FORMAT}|{PLACEHOLDER.pattern}")
_CHARSET = re.compile(rb"Content-Type:[^\n]*?charset=([\w.:-]+)")
_NPLURALS = re.compile(r"nplurals\s*=\s*(\d+)")
_LINE = re.compile(r"\(line (\d+)\)(?::\s*(.+))?")


class _Text:
    """The catalog's text for polib, which opens a path when handed a string naming an
    existing file: this object is no path, so polib only splits it into lines."""

    def __init__(self, text: str) -> None:
        self._text = text

    def splitlines(self) -> list[str]:
        return self._text.splitlines()


@dataclass(frozen=True, slots=True)
class _Unit:
    entry: Any  # polib.POEntry
    plural: bool  # msgid_plural rather than msgid
    marked: Marked
    natives: dict[int, Any]


def _decode(data: bytes, filename: str) -> str:
    found = _CHARSET.search(data)
    if found and not data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        try:
            charset = codecs.lookup(found.group(1).decode("ascii")).name
        except LookupError:
            charset = "utf-8"
        if charset != "utf-8":
            try:
                return data.decode(charset)
            except UnicodeDecodeError as exc:
                line = data[: exc.start].count(b"\n") + 1
                raise InvalidFile(f"{filename}: line {line} is not {charset}") from None
    return decode_text(data, filename)[0]


def _parse(data: bytes, filename: str) -> Any:
    text = _decode(data, filename)
    try:
        return polib.pofile(_Text(text), encoding="utf-8", wrapwidth=78)
    except Exception as exc:  # polib raises OSError for syntax, anything for odd input
        found = _LINE.search(str(exc))
        where = f" at line {found.group(1)}" if found else ""
        detail = f": {found.group(2)}" if found and found.group(2) else ""
        raise InvalidFile(f"{filename}: malformed PO{where}{detail}") from None


def _unit(entry: Any, plural: bool) -> _Unit:
    text = entry.msgid_plural if plural else entry.msgid
    builder = Builder(protect=False)
    pos = 0
    for match in _PROTECTED.finditer(text):
        builder.text(text[pos : match.start()])
        builder.ph(match.group())
        pos = match.end()
    builder.text(text[pos:])
    return _Unit(entry, plural, builder.build(), builder.natives)


def _untranslated(entry: Any) -> bool:
    if entry.obsolete or not entry.msgid:
        return False
    if entry.msgid_plural:
        return not any(entry.msgstr_plural.values())
    return not entry.msgstr


def _units(catalog: Any) -> list[_Unit]:
    units: list[_Unit] = []
    for entry in catalog:
        if not _untranslated(entry):
            continue
        units.append(_unit(entry, False))
        if entry.msgid_plural:
            units.append(_unit(entry, True))
    return units


def _text(unit: Marked, natives: dict[int, Any]) -> str:
    return "".join(t if isinstance(t, str) else str(natives[t.id]) for t in unit.tokens)


def _plural_indices(catalog: Any, entry: Any) -> list[int]:
    found = _NPLURALS.search(catalog.metadata.get("Plural-Forms", ""))
    if found and int(found.group(1)) > 0:
        return list(range(int(found.group(1))))
    return sorted(set(entry.msgstr_plural) | {0, 1})


def _fill(catalog: Any, unit: _Unit, text: str, fuzzy: bool) -> None:
    entry = unit.entry
    if not entry.msgid_plural:
        entry.msgstr = text
    elif not unit.plural:
        entry.msgstr_plural[0] = text
    else:
        for index in _plural_indices(catalog, entry)[1:]:
            entry.msgstr_plural[index] = text
    if fuzzy and "fuzzy" not in entry.flags:
        entry.flags.insert(0, "fuzzy")  # first, as msgmerge writes it


def _set_header(catalog: Any, target_lang: str) -> None:
    catalog.metadata["Language"] = target_lang
    found = re.search(r"charset=([\w.:-]+)", catalog.metadata.get("Content-Type", ""))
    if found is None or found.group(1).lower() not in ("utf-8", "utf8"):
        catalog.metadata["Content-Type"] = "text/plain; charset=UTF-8"


class PoFormat:
    name: str = "po"
    extensions: tuple[str, ...] = (".po", ".pot")
    media_type: str = "text/x-gettext-translation"

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        return [unit.marked for unit in _units(_parse(data, filename))]

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
        catalog = _parse(data, filename)
        sources = _units(catalog)
        came = {id(unit): origin for unit, origin in zip(sources, origins, strict=False)}
        written = translated_units(sources, units, filename)
        if not written:
            return data
        for source, translated in written:
            fuzzy = came.get(id(source)) is not Origin.TM
            _fill(catalog, source, _text(translated, source.natives), fuzzy)
        _set_header(catalog, target_lang)
        bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
        return bom + str(catalog).encode("utf-8")


FORMAT = PoFormat()
