"""A chunk's way through the engine: each distinct segment once, file jobs' segments apart,
a glossary's terms kept around the engine call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from dragoman.engines import Engines, Pair
from dragoman.models import Job, Output

# What a segment is to an engine: text with inline codes or not, unknown words marked or not.
KINDS = ((True, False), (False, False), (True, True), (False, True))


def kind(job: Job) -> tuple[bool, bool]:
    return job.options.markup, job.options.mark_unknown


# A chunk's segments: each with its job (which says whether the text carries inline codes,
# and which glossary it keeps).
Items = Sequence[tuple[Job, str]]
WithTerms = Callable[[str, Pair, Items], Awaitable[list[Output]]]


async def translate_chunk(
    engines: Engines,
    with_terms: WithTerms,
    engine: str,
    pair: Pair,
    items: Items,
    *,
    shares: Callable[[Job], bool] = lambda _job: False,
) -> list[Output]:
    """One engine batch per kind (``KINDS``). A segment repeated in the chunk (same text,
    same kind, same glossary) is translated once and its translation copied to every
    occurrence: each segment's translation is the one it gets alone, so the copies are
    exact (for a neural engine, the first result wins, and repeats stay consistent). Each
    comes with the model's confidence in it, where the engine gives one."""
    keys = [
        (job.options.markup, job.options.mark_unknown, job.options.glossary, text)
        for job, text in items
    ]
    first: dict[tuple[bool, bool, str | None, str], int] = {}
    for index, key in enumerate(keys):
        first.setdefault(key, index)
    distinct = [items[index] for index in first.values()]
    outputs = await _translate(engines, with_terms, engine, pair, distinct, shares)
    translated = dict(zip(first, outputs, strict=True))
    return [translated[key] for key in keys]


async def _translate(
    engines: Engines,
    with_terms: WithTerms,
    engine: str,
    pair: Pair,
    items: Items,
    shares: Callable[[Job], bool],
) -> list[Output]:
    if any(job.options.glossary for job, _ in items):
        return await with_terms(engine, pair, items)
    out: list[Output] = [Output("")] * len(items)
    for markup, marks in KINDS:
        indices = [i for i, (job, _) in enumerate(items) if kind(job) == (markup, marks)]
        if not indices:
            continue
        texts = [items[i][1] for i in indices]
        outputs = await engines.translate_scored(
            engine,
            pair,
            texts,
            markup=markup,
            mark_unknown=marks,
            share=_scope(items, indices, shares),
        )
        for i, (text, confidence) in zip(indices, outputs, strict=True):
            out[i] = Output(text, confidence)
    return out


def _scope(items: Items, indices: Sequence[int], shares: Callable[[Job], bool]) -> str | None:
    """Whose outputs a pivot's first leg may share (``engines.legs``): the one tenant of
    these segments when each of their jobs may reuse translations (the segment cache's
    rule); None otherwise: every segment goes to the engine."""
    jobs = [items[i][0] for i in indices]
    tenants = {job.tenant for job in jobs}
    if len(tenants) != 1 or not all(shares(job) for job in jobs):
        return None
    return tenants.pop() or ""
