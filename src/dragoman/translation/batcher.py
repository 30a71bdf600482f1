"""The dynamic batcher of the synchronous path.

Concurrent requests of one engine, pair and kind (plain text or segments with inline codes;
unknown words marked or not) wait a few milliseconds, then go through the engine as one
batch, like an inference server's batcher; each caller gets back its slice.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from dragoman.engines import Engines, Pair
from dragoman.metrics import Metrics

_Key = tuple[str, Pair, bool, bool]  # engine, pair, inline codes, unknown words marked


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
        self._open: dict[_Key, _Batch] = {}
        self._running: set[asyncio.Task[None]] = set()

    async def translate(
        self,
        engine: str,
        pair: Pair,
        segments: Sequence[str],
        *,
        marked: bool = False,
        mark_unknown: bool = False,
    ) -> list[str]:
        """Each segment's translation; ``marked`` segments carry inline codes in their
        stored form (``formats.markup``) both ways; ``mark_unknown``: see ``Engines``."""
        key = (engine, pair, marked, mark_unknown)
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

    def _close(self, key: _Key, batch: _Batch) -> None:
        if self._open.get(key) is batch:
            del self._open[key]

    async def _flush_later(self, key: _Key, batch: _Batch) -> None:
        await asyncio.sleep(self._delay_s)
        if self._open.get(key) is batch:
            self._close(key, batch)
            await self._run(key, batch)

    async def _run(self, key: _Key, batch: _Batch) -> None:
        engine, pair, marked, mark_unknown = key
        texts = [text for segments, _ in batch.requests for text in segments]
        call = self._engines.translate_marked if marked else self._engines.translate
        began = time.perf_counter()
        try:
            out = await call(engine, pair, texts, mark_unknown=mark_unknown)
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
