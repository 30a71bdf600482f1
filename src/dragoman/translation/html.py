"""HTML texts of the synchronous path: each text a one-file HTML document, prepared as a
file job's is (blocks, sentences, inline codes), its segments translated with their codes,
then rebuilt, so tags stay on the words they were on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from dragoman.formats import Prepared, by_name, prepare, rebuild
from dragoman.models import Pair

Translate = Callable[[list[str]], Awaitable[list[str]]]

_NAME = "text.html"


async def translate_html(
    texts: Sequence[str], pair: Pair, *, segmentation: bool, translate: Translate
) -> list[str]:
    """Each text translated; ``translate`` takes the marked segments of all of them at once.
    ``segmentation`` splits each block into sentences first."""
    prepared = [await _prepare(text, pair, segmentation) for text in texts]
    segments = [s for p in prepared for s in p.segments]
    if not segments:
        return list(texts)
    translated = await translate(segments)
    results, start = [], 0
    for text, p in zip(texts, prepared, strict=True):
        mine = translated[start : start + len(p.segments)]
        start += len(p.segments)
        results.append(await _rebuild(text, p, mine, pair))
    return results


async def _prepare(text: str, pair: Pair, segmentation: bool) -> Prepared:
    return await asyncio.to_thread(
        prepare,
        by_name("html"),
        text.encode(),
        filename=_NAME,
        source_lang=pair.source,
        segmentation=segmentation,
    )


async def _rebuild(text: str, prepared: Prepared, translations: list[str], pair: Pair) -> str:
    rebuilt = await asyncio.to_thread(
        rebuild,
        by_name("html"),
        text.encode(),
        filename=_NAME,
        layout=prepared.layout,
        translations=translations,
        target_lang=pair.target,
    )
    return rebuilt.decode()
