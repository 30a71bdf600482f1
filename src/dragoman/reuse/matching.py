"""Exact matches between a job's segments and memory entries: both sides in one *form*.

A form is the segment in the stored form of codes (``<g1>``, ``</g1>``, ``<x2/>``, text
escaped), codes numbered from 1 in order of appearance, whitespace normalized (runs
collapsed, ends trimmed). So a match means: the same text and the same structure of codes.

- A plain segment (JSON jobs) has no codes; it matches entries whose source had no TMX
  inline element, text to text.
- A file job's segment has its inline markup and its placeholders (``%s``, ``{name}``,
  URLs) as codes. An entry's source gets the same treatment: TMX inline elements become
  codes, and placeholders in its text too, so ``Hello {name}`` in a memory matches a PO
  entry's ``Hello {name}`` stored as ``Hello <x1/>``. The target takes the job's own codes
  back by number (the file holds what each code stands for).

An entry's target has exactly its source's codes: target codes are linked to the source's
(``x``, else ``i``, else order; placeholders by their text); a target code with no
counterpart is dropped and, when that leaves codes missing, the source's codes are placed
into the target's text by ``markup.project``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from dragoman.formats.markup import PROTECTED, Code, Marked, parse_stored, project, same_codes
from dragoman.formats.tmx import Inline, Memory, Piece, Unit, Variant
from dragoman.reuse.keys import memory_key, normalize
from dragoman.reuse.store import MemoryEntry


def _escaped(text: str) -> str:
    return Marked.of([text]).stored()


def _protected(pieces: Sequence[Piece]) -> list[Piece]:
    """Placeholders in the text as codes linked by their own text."""
    out: list[Piece] = []
    seen: dict[str, int] = {}
    for piece in pieces:
        if isinstance(piece, Inline):
            out.append(piece)
            continue
        pos = 0
        for match in PROTECTED.finditer(piece):
            out.append(piece[pos : match.start()])
            seen[match.group()] = seen.get(match.group(), 0) + 1
            out.append(Inline("ph", f"p:{match.group()}#{seen[match.group()]}"))
            pos = match.end()
        out.append(piece[pos:])
    return out


def pair_up(source: Sequence[Piece], target: Sequence[Piece]) -> tuple[Marked, Marked]:
    """Source and target as ``Marked``, codes numbered in the source's order and the
    target's codes matched to them; the target always carries exactly the source's codes."""
    ids: dict[tuple[str, str], int] = {}  # (kind, link) -> id
    tokens: list[str | Code] = []
    for piece in source:
        if isinstance(piece, str):
            tokens.append(piece)
        elif piece.kind == "close":
            opened = ids.get(("open", piece.link))
            if opened is not None and ("close", piece.link) not in ids:
                ids[("close", piece.link)] = opened
                tokens.append(Code("close", opened))
        else:
            new = sum(1 for t in tokens if isinstance(t, Code) and t.kind != "close") + 1
            ids.setdefault((piece.kind, piece.link), new)
            tokens.append(Code(piece.kind, new))
    src = Marked.of(tokens)
    out: list[str | Code] = []
    for piece in target:
        if isinstance(piece, str):
            out.append(piece)
        elif (piece.kind, piece.link) in ids:
            out.append(Code(piece.kind, ids[(piece.kind, piece.link)]))
    tgt = Marked.of(out)
    if not same_codes(src, tgt):
        tgt = project(src, tgt.plain)
    return src, tgt


def _directions(unit: Unit, source_lang: str | None) -> Iterator[tuple[Variant, Variant]]:
    sources = [unit.variants[source_lang]] if source_lang else list(unit.variants.values())
    for source in sources:
        for target in unit.variants.values():
            if target.lang != source.lang:
                yield source, target


def _forms(source: Variant, target: Variant) -> Iterator[tuple[str, str, str]]:
    """``(form, source, target)`` of one direction: the coded form, and the plain one
    where it differs (a source without inline elements, with placeholders)."""
    coded_source, coded_target = pair_up(_protected(source.pieces), _protected(target.pieces))
    stored = coded_source.stored()
    yield normalize(stored), stored, coded_target.stored().strip()
    if not source.has_codes:
        plain = _escaped(source.text)
        if normalize(plain) != normalize(stored):
            yield normalize(plain), plain, _escaped(target.text).strip()


def memory_entries(memory: Memory) -> list[MemoryEntry]:
    """The entries of a memory, one per direction and form, keys unique: of two units
    with the same source, the one changed later wins (a unit without a ``changedate`` is
    older than any dated one), and with equal dates the later one in the file."""
    best: dict[bytes, tuple[str, MemoryEntry]] = {}
    for unit in memory.units:
        for source, target in _directions(unit, memory.source_lang):
            if not source.text.strip() or not target.text.strip():
                continue
            for form, stored_source, stored_target in _forms(source, target):
                key = memory_key(source.lang, target.lang, form)
                known = best.get(key)
                if known is None or target.changed >= known[0]:
                    entry = MemoryEntry(key, source.lang, target.lang, stored_source, stored_target)
                    best[key] = (target.changed, entry)
    return [entry for _, entry in best.values()]


@dataclass(frozen=True, slots=True)
class JobSegment:
    """A job's segment, ready to be matched: its form, and what ``fit`` needs."""

    form: str
    lead: str  # the outer whitespace a match gets back
    trail: str
    ids: tuple[int, ...] | None  # a file job's own code ids, in form order; None: plain


def job_segment(segment: str, *, markup: bool) -> JobSegment:
    body = segment.strip()
    lead = segment[: len(segment) - len(segment.lstrip())]
    trail = segment[len(segment.rstrip()) :]
    if not markup:
        return JobSegment(normalize(_escaped(segment)), lead, trail, None)
    marked = parse_stored(body)
    order: list[int] = []
    new_id: dict[int, int] = {}
    tokens: list[str | Code] = []
    for token in marked.tokens:
        if isinstance(token, Code):
            if token.id not in new_id:
                order.append(token.id)
                new_id[token.id] = len(order)
            token = Code(token.kind, new_id[token.id])
        tokens.append(token)
    return JobSegment(normalize(Marked.of(tokens).stored()), lead, trail, tuple(order))


def fit(segment: str, job: JobSegment, target: str) -> str | None:
    """A memory's target (stored form) as the translation of ``segment``: the job's own
    codes and outer whitespace back; None when it cannot carry them."""
    found = parse_stored(target)
    if job.ids is None:
        if found.codes:
            return None
        return job.lead + found.plain + job.trail
    tokens: list[str | Code] = []
    for token in found.tokens:
        if isinstance(token, Code):
            if not 1 <= token.id <= len(job.ids):
                return None
            token = Code(token.kind, job.ids[token.id - 1])
        tokens.append(token)
    fitted = Marked.of(tokens)
    if not same_codes(parse_stored(segment), fitted):
        return None
    return job.lead + fitted.stored() + job.trail
