"""Segments with inline codes (file jobs), through any engine.

Each segment keeps its source's outer whitespace and the codes around all of its text
(``formats.markup.edges``); the core goes to the engine. An engine that can carry codes
itself (Apertium: ``translate_marked``) gets them; any other gets the plain text, and the
codes are put back in their order at proportional places, so none is dropped, doubled or
crossed. Either way the result is checked against the source's codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from dragoman.engines.scores import Scored, scored
from dragoman.formats.markup import Marked, edges, parse_stored, project, same_codes
from dragoman.models import Pair


@runtime_checkable
class MarkupEngine(Protocol):
    async def translate_marked(self, pair: Pair, cores: Sequence[Marked]) -> list[Marked]: ...


class PlainEngine(Protocol):
    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]: ...


async def translate_stored(engine: PlainEngine, pair: Pair, segments: Sequence[str]) -> list[str]:
    """Translations of segments in the stored form of ``Marked``, in the same form."""
    return [text for text, _ in await _translate_stored(engine, pair, segments, scores=False)]


async def translate_stored_scored(
    engine: PlainEngine, pair: Pair, segments: Sequence[str]
) -> list[Scored]:
    """``translate_stored``, each translation with its confidence where the engine
    ``Scores`` its outputs (an engine that carries the codes itself gives none)."""
    return await _translate_stored(engine, pair, segments, scores=True)


async def _translate_stored(
    engine: PlainEngine, pair: Pair, segments: Sequence[str], *, scores: bool
) -> list[Scored]:
    sources = [parse_stored(s) for s in segments]
    parts = [edges(m) for m in sources]
    todo = [i for i, (_, core, _) in enumerate(parts) if core.has_text()]
    cores = [parts[i][1] for i in todo]
    confidences: list[float | None] = [None] * len(cores)
    if isinstance(engine, MarkupEngine):
        outs = await engine.translate_marked(pair, cores)
    else:
        texts = [core.engine_text for core in cores]
        if scores:
            found = await scored(engine, pair, texts)
        else:
            found = [Scored(text) for text in await engine.translate(pair, texts)]
        confidences = [confidence for _, confidence in found]
        outs = [project(core, text) for core, (text, _) in zip(cores, found, strict=True)]
    results = [Scored(source.stored()) for source in sources]
    for i, core, out, confidence in zip(todo, cores, outs, confidences, strict=True):
        if not same_codes(core, out):
            out = project(core, out.plain)
        lead, _, trail = parts[i]
        results[i] = Scored((lead + _strip(out) + trail).stored(), confidence)
    return results


def _strip(marked: Marked) -> Marked:
    """Without outer whitespace: the source's comes back around it."""
    tokens = list(marked.tokens)
    texts = [i for i, t in enumerate(tokens) if isinstance(t, str)]
    if texts:
        first, last = texts[0], texts[-1]
        head, tail = tokens[first], tokens[last]
        assert isinstance(head, str) and isinstance(tail, str)
        if first == 0:
            tokens[first] = head.lstrip()
        if last == len(tokens) - 1:
            tokens[last] = str(tokens[last]).rstrip()
    return Marked.of(tokens)
