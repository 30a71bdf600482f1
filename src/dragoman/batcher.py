"""``POST /v1/translate``: the synchronous use case and its dynamic batcher.

Concurrent requests of one engine and pair wait a few milliseconds, then go through the
engine as one batch, like an inference server's batcher; each caller gets back its slice.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dragoman.engines import Engines, Pair
from dragoman.errors import PayloadTooLarge
from dragoman.glossaries import Terms, keep_terms
from dragoman.languages import canonical
from dragoman.metrics import Metrics
from dragoman.models import Document
from dragoman.settings import Settings
from dragoman.validation import check_segments


@dataclass(slots=True)
class _Batch:
    requests: list[tuple[Sequence[str], asyncio.Future[list[str]]]] = field(default_factory=list)
    size: int = 0


class DynamicBatcher:
    def __init__(
        self, engines: Engines, metrics: Metrics, *, delay_s: float, max_segments: int
    ) -> None:
        self._engines = engines
        self._metrics = metrics
        self._delay_s = delay_s
        self._max_segments = max_segments
        self._open: dict[tuple[str, Pair], _Batch] = {}
        self._running: set[asyncio.Task[None]] = set()

    async def translate(self, engine: str, pair: Pair, segments: Sequence[str]) -> list[str]:
        key = (engine, pair)
        batch = self._open.get(key)
        if batch is None:
            batch = self._open[key] = _Batch()
            self._spawn(self._flush_later(key, batch))
        future: asyncio.Future[list[str]] = asyncio.get_running_loop().create_future()
        batch.requests.append((segments, future))
        batch.size += len(segments)
        if batch.size >= self._max_segments:
            self._close(key, batch)
            self._spawn(self._run(key, batch))
        return await future

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    def _close(self, key: tuple[str, Pair], batch: _Batch) -> None:
        if self._open.get(key) is batch:
            del self._open[key]

    async def _flush_later(self, key: tuple[str, Pair], batch: _Batch) -> None:
        await asyncio.sleep(self._delay_s)
        if self._open.get(key) is batch:
            self._close(key, batch)
            await self._run(key, batch)

    async def _run(self, key: tuple[str, Pair], batch: _Batch) -> None:
        engine, pair = key
        texts = [text for segments, _ in batch.requests for text in segments]
        began = time.perf_counter()
        try:
            out = await self._engines.translate(engine, pair, texts)
        except Exception as exc:
            for _, future in batch.requests:
                if not future.done():
                    future.set_exception(exc)
            return
        self._metrics.observe_batch(engine, len(texts), time.perf_counter() - began)
        self._metrics.sync_segments.labels(engine).inc(len(texts))
        start = 0
        for segments, future in batch.requests:
            if not future.done():
                future.set_result(out[start : start + len(segments)])
            start += len(segments)

    async def close(self) -> None:
        for task in list(self._running):
            task.cancel()


class SegmentCache(Protocol):
    """What the synchronous path needs of the segment cache (``reuse.Reuse``)."""

    async def through_cache(
        self,
        tenant: str | None,
        engine: str,
        pair: Pair,
        segments: Sequence[str],
        translate: Callable[[list[str]], Awaitable[list[str]]],
    ) -> tuple[list[str], int]: ...


@dataclass(frozen=True, slots=True)
class Asker:
    """Who a request is for: its segments are looked up and kept in that tenant's part of
    the segment cache."""

    tenant: str | None


class SyncTranslator:
    """A few segments translated now: the limits, the checks and the engine's choice, then
    the segment cache (for a request that says whose it is), then the batcher. Larger work
    belongs in a job."""

    def __init__(
        self,
        settings: Settings,
        engines: Engines,
        metrics: Metrics,
        cache: SegmentCache | None = None,
    ) -> None:
        self._settings = settings
        self._engines = engines
        self._metrics = metrics
        self._cache = cache
        self.batcher = DynamicBatcher(
            engines,
            metrics,
            delay_s=settings.sync_batch_delay_s,
            max_segments=settings.sync_batch_max_segments,
        )

    async def translate(
        self,
        source: str,
        target: str,
        segments: Sequence[str],
        engine: str | None = None,
        terms: Terms | None = None,
        asker: Asker | None = None,
    ) -> list[str]:
        """The segments' translations, in order, once ``check`` has passed."""
        chosen, pair = self.check(source, target, segments, engine)
        return await self.translate_checked(chosen, pair, segments, terms, asker)

    async def translate_checked(
        self,
        engine: str,
        pair: Pair,
        segments: Sequence[str],
        terms: Terms | None = None,
        asker: Asker | None = None,
    ) -> list[str]:
        """Segments that passed ``check``; with ``terms`` (a glossary's), each is masked
        before the cache and the batcher and unmasked after, so requests with different
        glossaries still share an engine batch. With ``asker``, the segments the cache
        holds for that tenant do not go to the engine."""
        run = functools.partial(self._translate, engine, pair, asker)
        if terms is None:
            return await run(segments)
        return await keep_terms(run, [(segment, terms) for segment in segments])

    async def _translate(
        self, engine: str, pair: Pair, asker: Asker | None, segments: Sequence[str]
    ) -> list[str]:
        if self._cache is None or asker is None:
            return await self.batcher.translate(engine, pair, segments)
        run = functools.partial(self.batcher.translate, engine, pair)
        out, hits = await self._cache.through_cache(asker.tenant, engine, pair, segments, run)
        if hits:
            self._metrics.sync_segments_cached.labels(engine).inc(hits)
        return out

    def check(
        self, source: str, target: str, segments: Sequence[str], engine: str | None = None
    ) -> tuple[str, Pair]:
        """The engine and pair of a request, or its refusal. Checked in the order of
        docs/api.md: the segment count, the segments, then the languages and the engine."""
        limit = self._settings.sync_max_segments
        if len(segments) > limit:
            raise PayloadTooLarge(
                f"{len(segments)} segments exceed the limit of {limit} "
                "for /v1/translate; submit a job to /v1/jobs instead"
            )
        check_segments(
            [Document("request", list(segments))],
            max_segments=limit,
            max_chars=self._settings.max_segment_chars,
        )
        pair = Pair(canonical(source), canonical(target))
        return self._engines.resolve(pair, engine).name, pair

    async def close(self) -> None:
        await self.batcher.close()
