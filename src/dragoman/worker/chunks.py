"""A chunk's way through the engine: each distinct text once, file jobs' segments apart."""

from __future__ import annotations

from collections.abc import Sequence

from dragoman.engines import Engines, Pair

# A segment as the worker holds it: (markup?, text). Segments of file jobs carry inline codes
# in their stored form and go through ``translate_marked``.
Source = tuple[bool, str]


async def translate_chunk(
    engines: Engines, engine: str, pair: Pair, sources: Sequence[Source]
) -> list[str]:
    """One engine batch. A text repeated in the chunk (same text, same kind) is translated
    once and its translation copied to every occurrence: each segment's translation is the
    one it gets alone, so the copies are exact (for a neural engine, the first result wins,
    and repeats stay consistent)."""
    distinct = list(dict.fromkeys(sources))
    translated: dict[Source, str] = {}
    for markup in (True, False):
        texts = [text for kind, text in distinct if kind is markup]
        if not texts:
            continue
        translate = engines.translate_marked if markup else engines.translate
        outputs = await translate(engine, pair, texts)
        translated.update(((markup, t), out) for t, out in zip(texts, outputs, strict=True))
    return [translated[source] for source in sources]
