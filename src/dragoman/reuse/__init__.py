"""Repeated text costs nothing: translation memories and the segment cache (ADR 0014).

- ``Reuse.prefill``: at submission, what each segment of a new job may take from the
  memories it names (``tm``, first memory listed wins) or from the segment cache
  (``cache``); the store looks it all up in the transaction that stores the job.
- ``Reuse.settle``: in the worker, after the engine, the new outputs go into the cache;
  where another worker stored one first, that one is used, so repeats stay identical.
  A job with a glossary keys its segments by the version of the glossary's dictionary for
  the pair (``Glossary.version``): at submission as the glossary is then, in the worker
  as the chunk was translated with it.
- ``Reuse.through_cache``: a synchronous request's segments (``/v1/translate`` and the
  LibreTranslate and DeepL texts), those stored from the cache, the others from the engine
  and then into the cache; its keys are those of a plain job without a glossary.
- ``Reuse.trim``: the cache kept under ``cache_max_segments``, least recently used out.

``keys`` makes the keys, ``matching`` the matching of memory entries, ``memories`` the TMX
imports, ``export`` a job's translations as TMX, ``store`` the cache's rows (``CacheRows``)
and the memories (``Memories``) on the shared database.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import timedelta

from dragoman.engines import Engines
from dragoman.errors import DragomanError, TransientError
from dragoman.formats.markup import parse_stored, same_codes
from dragoman.glossaries.store import Glossaries, SqlGlossaries
from dragoman.models import Document, Job, Output, Pair
from dragoman.reuse.keys import cache_keys, memory_key
from dragoman.reuse.matching import JobSegment, fit, job_segment
from dragoman.reuse.store import CacheRows, CacheWrite, SqlCacheRows
from dragoman.runtime import Runtime
from dragoman.store import Prefill

log = logging.getLogger(__name__)

# Above this many segments the keys are computed off the event loop.
_IN_THREAD_SEGMENTS = 2000


def _acceptable(job: Job, source: str, output: str) -> bool:
    """Only outputs that pass the checks are cached: a file job's translation carries its
    source's codes, and a segment with text does not come back empty."""
    if job.options.markup:
        return same_codes(parse_stored(source), parse_stored(output))
    return not source.strip() or bool(output.strip())


class Reuse:
    def __init__(self, runtime: Runtime, *, engines: Engines) -> None:
        self._settings = runtime.settings
        self._store: CacheRows = SqlCacheRows(runtime.database)
        self._glossaries: Glossaries = SqlGlossaries(runtime.database)
        self._clock = runtime.clock
        self._engines = engines

    def caches(self, job: Job) -> bool:
        """Whether ``job`` reads and feeds the segment cache."""
        return self._settings.cache and job.options.use_cache

    async def prefill(
        self,
        job: Job,
        shards: Sequence[Job],
        documents: Sequence[Document],
        memory_ids: Sequence[int],
    ) -> Prefill | None:
        """The lookups of a new job (None when it has neither memories nor the cache)."""
        if not memory_ids and not self.caches(job):
            return None
        units = shards or [job]
        versions = await self._versions(job, units) if self.caches(job) else {}
        # A job into several languages holds a copy of its segments per target.
        segments = [segment for doc in documents for segment in doc.segments]
        segments *= len(job.target_langs)
        work = (job, units, segments, tuple(memory_ids), versions)
        if len(segments) > _IN_THREAD_SEGMENTS:
            return await asyncio.to_thread(self._prefill, *work)
        return self._prefill(*work)

    async def _versions(self, job: Job, units: Sequence[Job]) -> dict[Pair, str]:
        """The version of the job's glossary for each pair of its units, as it is now
        (none without a glossary: a glossary that is gone leaves the job uncached)."""
        if job.options.glossary is None:
            return {}
        glossary = await self._glossaries.get_glossary(job.options.glossary)
        if glossary is None:
            return {}
        pairs = {Pair(unit.source_lang, unit.target_lang) for unit in units}
        return {pair: glossary.version(pair) for pair in pairs}

    def _prefill(
        self,
        job: Job,
        units: Sequence[Job],
        segments: list[str],
        memory_ids: tuple[int, ...],
        versions: dict[Pair, str],
    ) -> Prefill:
        forms: dict[int, JobSegment] = {}
        memory_keys: dict[int, bytes] = {}
        cache_keys: dict[int, bytes] = {}
        cache_models: dict[int, tuple[str, str | None]] = {}
        for unit in units:
            pair = Pair(unit.source_lang, unit.target_lang)
            marks = job.options.mark_unknown
            version = self._version(unit.engine, pair, marks) if self.caches(job) else None
            glossary = versions.get(pair)
            if job.options.glossary is not None and glossary is None:
                version = None
            # What made a hit's entry: the key names the engine and its version.
            made_by = (unit.engine, self._engines.model(unit.engine, pair) if version else None)
            first = unit.first_position or 0
            end = unit.end_position if unit.end_position is not None else len(segments)
            if memory_ids:
                for position in range(first, end):
                    text = segments[position]
                    if text.strip():
                        form = forms[position] = job_segment(text, markup=job.options.markup)
                        memory_keys[position] = memory_key(pair.source, pair.target, form.form)
            if version is not None:
                keys = self._keys(unit, version, pair, segments[first:end], glossary)
                cache_keys.update(zip(range(first, end), keys, strict=True))
                cache_models.update(dict.fromkeys(range(first, end), made_by))
        return Prefill(
            memory_ids,
            memory_keys,
            cache_keys,
            cache_models,
            lambda position, target: fit(segments[position], forms[position], target),
        )

    def _version(self, engine: str, pair: Pair, mark_unknown: bool = False) -> str | None:
        try:
            return self._engines.version(engine, pair, mark_unknown=mark_unknown)
        except DragomanError as exc:
            log.warning("no segment cache for %s %s: %s", engine, pair, exc.message)
            return None

    async def through_cache(
        self,
        tenant: str | None,
        engine: str,
        pair: Pair,
        segments: Sequence[str],
        translate: Callable[[list[str]], Awaitable[list[str]]],
        *,
        markup: bool = False,
        mark_unknown: bool = False,
    ) -> tuple[list[str], int]:
        """A synchronous request's translations and how many came from the segment cache.
        The others go to ``translate`` once each (a repeat within the request too); their
        acceptable outputs are stored, and where another request or worker stored one
        first, that one is answered, so repeats stay identical. The key is that of a plain
        job without a glossary: the engine's exact input (a glossary's terms are masked
        before this), so jobs and requests share their entries. A store that is away costs
        the cache only."""
        version = self._version(engine, pair, mark_unknown) if self._settings.cache else None
        if version is None:
            return await translate(list(segments)), 0
        keys = cache_keys(
            tenant=tenant,
            engine=engine,
            version=version,
            pair=pair,
            glossary=None,
            markup=markup,
            segments=segments,
        )
        try:
            found = await self._store.cached(keys, self._clock.now())
        except TransientError as exc:
            log.warning("segment cache not read: %s", exc)
            found = {}
        hits = sum(key in found for key in keys)
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, segments, strict=True):
            if key not in found:
                missing.setdefault(key, text)
        if missing:
            outputs = dict(zip(missing, await translate(list(missing.values())), strict=True))
            writes = [
                CacheWrite(key, out)
                for key, out in outputs.items()
                if not missing[key].strip() or out.strip()
            ]
            try:
                stored = await self._store.cache_put(writes, self._clock.now())
            except TransientError as exc:
                log.warning("segment cache not updated: %s", exc)
                stored = {}
            found |= outputs | stored
        return [found[key] for key in keys], hits

    @staticmethod
    def _keys(
        unit: Job, version: str, pair: Pair, texts: Sequence[str], glossary: str | None
    ) -> list[bytes]:
        return cache_keys(
            tenant=unit.tenant,
            engine=unit.engine,
            version=version,
            pair=pair,
            glossary=glossary,
            markup=unit.options.markup,
            segments=texts,
        )

    async def settle(
        self,
        chunk: Sequence[tuple[Job | None, str]],
        outputs: list[Output],
        glossaries: Mapping[str, str] | None = None,
    ) -> list[Output]:
        """The outputs to write for ``chunk`` (``(job, source)``; job None: the job stopped,
        its output is not kept): each acceptable new output is stored in the cache with its
        confidence, first write wins, and every output the cache holds comes back as stored
        (another's stored first comes without a confidence: this one's is not its own). A
        job's glossary keys its outputs by the version the chunk was translated with
        (``glossaries``, by glossary id); one not given there is not cached. A store that is
        away costs the cache only: the outputs come back as they were."""
        by_glossary = glossaries or {}
        if not self._settings.cache:
            return outputs
        keyed: list[tuple[int, bytes]] = []
        versions: dict[tuple[str, Pair, bool], str | None] = {}
        for i, ((job, source), output) in enumerate(zip(chunk, outputs, strict=True)):
            if job is None or not job.options.use_cache:
                continue
            if not _acceptable(job, source, output.text):
                continue
            glossary = job.options.glossary
            if glossary is not None:
                if glossary not in by_glossary:
                    continue  # no version to key it by
                glossary = by_glossary[glossary]
            pair = Pair(job.source_lang, job.target_lang)
            which = (job.engine, pair, job.options.mark_unknown)
            if which not in versions:
                versions[which] = self._version(*which)
            version = versions[which]
            if version is not None:
                (key,) = self._keys(job, version, pair, (source,), glossary)
                keyed.append((i, key))
        if not keyed:
            return outputs
        try:
            writes = [
                CacheWrite(key, text, job.id, job.attempts, confidence, terms)
                for i, key in keyed
                if (job := chunk[i][0]) is not None
                for text, confidence, terms in [outputs[i]]
            ]
            stored = await self._store.cache_put(writes, self._clock.now())
        except TransientError as exc:
            log.warning("segment cache not updated: %s", exc)
            return outputs
        settled = list(outputs)
        for i, key in keyed:
            target = stored.get(key, settled[i].text)
            if target != settled[i].text:
                settled[i] = Output(target, None, settled[i].terms)
        return settled

    async def trim(self) -> int:
        """Deletes the cache entries unused for ``cache_max_age_s``, then the least recently
        used beyond ``cache_max_segments``."""
        unused_since = self._clock.now() - timedelta(seconds=self._settings.cache_max_age_s)
        removed = await self._store.trim_cache(self._settings.cache_max_segments, unused_since)
        if removed:
            log.info("segment cache: %d stale or least recently used entries removed", removed)
        return removed
