"""Files in, files out: each format reads a file into units and writes it back translated.

A format turns a file's bytes into *units* (``Marked``: text with inline codes), in
document order, and later writes the same file with translated units in their place,
every byte outside them as it was. Units that need no translation (a PO entry with a
``msgstr``, an XLIFF unit with a target) are not listed. ``prepare`` splits units into
sentence segments and records the layout; ``rebuild`` joins translated segments back.
The original bytes and the layout are all a later ``rebuild`` needs, in any process.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import NamedTuple, Protocol, runtime_checkable

from dragoman.errors import InvalidFile, UnsupportedFormat
from dragoman.formats.markup import Marked, parse_stored
from dragoman.formats.segment import join, split
from dragoman.models import Origin, to_review

__all__ = [
    "FORMATS",
    "SPLIT_BUDGET_S",
    "Format",
    "MarksOrigins",
    "MarksReview",
    "Prepared",
    "Review",
    "by_name",
    "for_file",
    "prepare",
    "rebuild",
    "translated_name",
]


class Format(Protocol):
    name: str  # as in GET /v1/formats and the ``format`` field
    extensions: tuple[str, ...]  # with the dot, lower case; the first is the usual one
    media_type: str

    def extract(self, data: bytes, *, filename: str) -> list[Marked]:
        """The units to translate, in order; ``InvalidFile`` naming ``filename`` (and the
        line, for text and XML) when the bytes are not this format."""
        ...

    def merge(
        self, data: bytes, units: Sequence[Marked | None], *, filename: str, target_lang: str
    ) -> bytes:
        """The file with each unit of ``extract(data)`` replaced by its translation in
        ``units`` (same length and order; ``None`` keeps the source unit)."""
        ...


@runtime_checkable
class MarksOrigins(Protocol):
    """A format that says where each unit's translation came from (XLIFF, PO): translation
    memory matches are marked apart from machine translation."""

    def merge_origins(
        self,
        data: bytes,
        units: Sequence[Marked | None],
        origins: Sequence[Origin | None],
        *,
        filename: str,
        target_lang: str,
    ) -> bytes:
        """``merge``, with each unit's origin (``None`` where ``units`` has None)."""
        ...


class Review(NamedTuple):
    """What a unit's segments say of its translation: the lowest confidence among them
    (None: none has one), and whether it is to be reviewed under the job's ``review_below``:
    True when a segment is below it, False when every machine-translated segment is at or
    above it, None without a threshold or with a machine translation that has no score."""

    confidence: float | None = None
    review: bool | None = None


@runtime_checkable
class MarksReview(Protocol):
    """A format that also says how sure the machine was of each unit (XLIFF)."""

    def merge_reviewed(
        self,
        data: bytes,
        units: Sequence[Marked | None],
        origins: Sequence[Origin | None],
        reviews: Sequence[Review | None],
        *,
        filename: str,
        target_lang: str,
    ) -> bytes:
        """``merge_origins``, with each unit's ``Review`` (``None`` where ``units`` has
        None)."""
        ...


# Formats read into a whole tree (markdown-it's tokens, the HTML and XML readers' parts,
# YAML's nodes): reading one takes 40 to 150 times its size in memory, where the others take
# 10 to 20, so their files have a lower limit (``Settings.max_tree_file_bytes``).
TREE_FORMATS = frozenset({"html", "markdown", "yaml", "android"})

# name -> module under dragoman.formats defining ``FORMAT``; loaded on first use.
_MODULES = {
    "xliff": "xliff",
    "po": "po",
    "html": "html",
    "docx": "ooxml",
    "pptx": "ooxml",
    "odt": "odf",
    "markdown": "markdown",
    "srt": "srt",
    "json": "json_i18n",
    "text": "text",
    "xlsx": "xlsx",
    "android": "android",
    "yaml": "yaml_i18n",
}


def _load(name: str) -> Format:
    module = importlib.import_module(f"dragoman.formats.{_MODULES[name]}")
    found: Format = getattr(module, "FORMATS", {}).get(name) or module.FORMAT
    return found


class _Registry(dict[str, Format]):
    def __missing__(self, name: str) -> Format:
        if name not in _MODULES:
            raise KeyError(name)
        self[name] = _load(name)
        return self[name]

    def all(self) -> list[Format]:
        return [self[name] for name in _MODULES]


FORMATS = _Registry()


def _listing() -> str:
    return ", ".join(f"{f.name} ({' '.join(f.extensions)})" for f in FORMATS.all())


def by_name(name: str) -> Format:
    try:
        return FORMATS[name]
    except KeyError:
        raise UnsupportedFormat(f"unknown format {name!r}; formats: {_listing()}") from None


def for_file(filename: str, declared: str | None = None) -> Format:
    """The declared format, else the one of the file name's extension; 415 otherwise."""
    if declared:
        return by_name(declared)
    suffixes = [s.lower() for s in PurePath(filename).suffixes]
    candidates = ["".join(suffixes[i:]) for i in range(len(suffixes))]
    for fmt in FORMATS.all():
        if any(c in fmt.extensions for c in candidates):
            return fmt
    shown = suffixes[-1] if suffixes else "no extension"
    raise UnsupportedFormat(
        f"{filename}: {shown} is not a supported format (set 'format' to override); "
        f"formats: {_listing()}"
    )


def translated_name(name: str, target_lang: str) -> str:
    """``guide.html`` → ``guide.es.html``; a template (``.pot``) comes back a ``.po``."""
    path = PurePath(name)
    suffix = ".po" if path.suffix.lower() == ".pot" else path.suffix
    return f"{path.stem}.{target_lang}{suffix}"


SPLIT_BUDGET_S = 5.0


@dataclass(frozen=True, slots=True)
class Prepared:
    segments: list[str]  # in the stored form of ``Marked``
    layout: list[int]  # per unit, how many segments it became


def prepare(
    fmt: Format,
    data: bytes,
    *,
    filename: str,
    source_lang: str,
    segmentation: bool,
    split_until: float | None = None,
) -> Prepared:
    """The segments of a file and its layout (``prepare_units`` of what ``fmt`` reads)."""
    units = fmt.extract(data, filename=filename)
    return prepare_units(
        units, source_lang=source_lang, segmentation=segmentation, split_until=split_until
    )


def prepare_units(
    units: Iterable[Marked],
    *,
    source_lang: str,
    segmentation: bool,
    split_until: float | None = None,
) -> Prepared:
    """The segments of a file's units and its layout. Sentence splitting stops at
    ``split_until`` (``time.monotonic()``; by default ``SPLIT_BUDGET_S`` from now): the
    remaining units stay whole, and the layout records what was done, so no upload holds a
    CPU for long."""
    segments: list[str] = []
    layout: list[int] = []
    deadline = time.monotonic() + SPLIT_BUDGET_S if split_until is None else split_until
    for unit in units:
        if not unit.has_text():
            layout.append(0)
            continue
        split_it = segmentation and time.monotonic() < deadline
        pieces = split(unit, source_lang) if split_it else [unit]
        layout.append(len(pieces))
        segments += [p.stored() for p in pieces]
    return Prepared(segments, layout)


def rebuild(
    fmt: Format,
    data: bytes,
    *,
    filename: str,
    layout: Sequence[int],
    translations: Sequence[str | None],
    target_lang: str,
    origins: Sequence[Origin | None] | None = None,
    confidences: Sequence[float | None] | None = None,
    review_below: float | None = None,
) -> bytes:
    """The translated file; a unit with any segment still untranslated keeps its source.
    The workers keep every segment's codes (``engines.markup``), so a joined unit has its
    source's codes and the format can put each one back. With ``origins`` (per segment), a
    format that ``MarksOrigins`` marks a unit whose segments all came from a memory as a
    memory match; with ``confidences`` too, one that ``MarksReview`` says how sure the
    machine was, and which units are to be reviewed under ``review_below``."""
    if sum(layout) != len(translations):
        raise InvalidFile(f"{filename}: the stored file no longer matches its segments")
    units: list[Marked | None] = []
    unit_origins: list[Origin | None] = []
    reviews: list[Review | None] = []
    pos = 0
    for count in layout:
        pieces = translations[pos : pos + count]
        came = origins[pos : pos + count] if origins is not None else []
        sure = confidences[pos : pos + count] if confidences is not None else []
        pos += count
        if count == 0 or any(p is None for p in pieces):
            units.append(None)
            unit_origins.append(None)
            reviews.append(None)
            continue
        units.append(join([parse_stored(p) for p in pieces if p is not None]))
        unit_origins.append(_unit_origin(came))
        reviews.append(_unit_review(came, sure, review_below))
    if origins is not None and confidences is not None and isinstance(fmt, MarksReview):
        return fmt.merge_reviewed(
            data, units, unit_origins, reviews, filename=filename, target_lang=target_lang
        )
    if origins is not None and isinstance(fmt, MarksOrigins):
        return fmt.merge_origins(
            data, units, unit_origins, filename=filename, target_lang=target_lang
        )
    return fmt.merge(data, units, filename=filename, target_lang=target_lang)


def _unit_origin(origins: Sequence[Origin | None]) -> Origin:
    """A unit is a memory match when every segment of it is; else machine translation
    (from the cache when every segment came from there or a memory)."""
    if origins and all(o is Origin.TM for o in origins):
        return Origin.TM
    if origins and all(o in (Origin.TM, Origin.CACHE) for o in origins):
        return Origin.CACHE
    return Origin.MT


def _unit_review(
    origins: Sequence[Origin | None],
    confidences: Sequence[float | None],
    review_below: float | None,
) -> Review:
    """A unit's ``Review`` from its machine-translated segments' confidences (a memory
    match is a person's translation: no score of a machine's applies to it)."""
    machine = [c for o, c in zip(origins, confidences, strict=False) if o is not Origin.TM]
    lowest = min((c for c in machine if c is not None), default=None)
    if review_below is None:
        return Review(lowest)
    if any(to_review(c, review_below) for c in machine):
        return Review(lowest, True)
    return Review(lowest, False if all(c is not None for c in machine) else None)
