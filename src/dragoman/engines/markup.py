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

from dragoman.formats.markup import Marked, edges, parse_stored, project, same_codes
from dragoman.models import Pair


@runtime_checkable
class MarkupEngine(Protocol):
    async def translate_marked(self, pair: Pair, cores: Sequence[Marked]) -> list[Marked]: ...


class PlainEngine(Protocol):
    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]: ...


async def translate_stored(engine: PlainEngine, pair: Pair, segments: Sequence[str]) -> list[str]:
    """Translations of segments in the stored form of ``Marked``, in the same form."""
    sources = [parse_stored(s) for s in segments]
    parts = [edges(m) for m in sources]
    todo = [i for i, (_, core, _) in enumerate(parts) if core.has_text()]
    cores = [parts[i][1] for i in todo]
    if isinstance(engine, MarkupEngine):
        outs = await engine.translate_marked(pair, cores)
    else:
        plain = await engine.translate(pair, [core.engine_text for core in cores])
        outs = [project(core, text) for core, text in zip(cores, plain, strict=True)]
    results = list(sources)
    for i, core, out in zip(todo, cores, outs, strict=True):
        if not same_codes(core, out):
            out = project(core, out.plain)
        lead, _, trail = parts[i]
        results[i] = lead + _strip(out) + trail
    return [r.stored() for r in results]


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
