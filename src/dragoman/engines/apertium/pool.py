"""The warm pipelines of one pair: a batch takes every idle one, each pipeline translates a
part of it, and a pipeline that is worn or broken is replaced.

A batch is cut into contiguous parts of about equal length, one per pipeline it could take
(those idle, and those not started yet while the pool has room; at least one, waited for
when all are lent out). Parts run at once and their answers are joined in order, so one job
alone uses the whole pool and jobs side by side share it. A segment's translation does not
depend on its part: every pipeline isolates every segment (ADR 0001).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from itertools import accumulate, pairwise

from dragoman.engines.apertium.pipeline import Pipeline, until_done_or_failed
from dragoman.engines.apertium.tagger import Script
from dragoman.errors import EngineError

# A part shorter than this costs more in coordination than it saves.
MIN_PART_SEGMENTS = 4


def split(segments: Sequence[str], parts: int) -> list[Sequence[str]]:
    """``segments`` cut into at most ``parts`` contiguous, non-empty runs of about equal
    length in characters."""
    ends = list(accumulate(len(segment) + 1 for segment in segments))
    count = min(parts, len(segments))
    cuts = [0]
    for k in range(1, count):
        share = ends[-1] * k / parts
        cut = next(i + 1 for i, end in enumerate(ends) if end >= share)
        # Each part at least one segment, and one left for each part still to cut: a long
        # segment at the end leaves the short ones before it a part of their own.
        cuts.append(min(max(cut, cuts[-1] + 1), len(segments) - (count - k)))
    cuts.append(len(segments))
    return [segments[a:b] for a, b in pairwise(cuts) if a < b]


class PipelinePool:
    """The warm pipelines of one pair (at most ``size``), started on demand."""

    def __init__(self, script: Script, size: int, max_uses: int, read_timeout_s: float) -> None:
        self._script = script
        self._max_uses = max_uses
        self._read_timeout_s = read_timeout_s
        self._idle: asyncio.Queue[Pipeline | None] = asyncio.Queue()  # None: closed
        self._all: list[Pipeline] = []
        self._size = size
        self._closed = False
        self._lent: set[Pipeline] = set()
        self._returned = asyncio.Event()
        self._starting: set[asyncio.Future[None]] = set()  # pipelines' starts under way

    async def translate(self, segments: Sequence[str], *, raw: bool = False) -> list[str]:
        """Each segment's translation, the batch split across the pipelines it can take."""
        if not segments:
            return []
        wanted = max(1, len(segments) // MIN_PART_SEGMENTS)
        pipelines = await self._lend(min(wanted, self._size))
        parts = split(segments, len(pipelines))
        for spare in pipelines[len(parts) :]:
            self._lent.discard(spare)
            self._idle.put_nowait(spare)
        used = pipelines[: len(parts)]
        healthy: set[Pipeline] = set()
        try:
            tasks = [
                asyncio.ensure_future(self._on(pipeline, part, raw, healthy))
                for pipeline, part in zip(used, parts, strict=True)
            ]
            await until_done_or_failed(list(tasks))
            return [answer for task in tasks for answer in task.result()]
        finally:
            # Here rather than in each part's task: a task cancelled before it ever ran
            # would keep its pipeline lent out for good. Shielded: a second cancellation
            # (a job cancelled, then its worker shut down) must not stop the releases half way.
            await asyncio.shield(self._release_all(used, healthy))

    @staticmethod
    async def _on(
        pipeline: Pipeline, segments: Sequence[str], raw: bool, healthy: set[Pipeline]
    ) -> list[str]:
        answers = await pipeline.translate(segments, raw=raw)
        healthy.add(pipeline)
        return answers

    async def _lend(self, wanted: int) -> list[Pipeline]:
        """Up to ``wanted`` pipelines: the idle ones, then new ones while there is room; at
        least one, waited for when every pipeline is lent out."""
        if self._closed:
            raise EngineError("the apertium engine is closed")
        lent: list[Pipeline] = []
        while len(lent) < wanted and not self._idle.empty():
            lent.append(self._ready(self._idle.get_nowait()))
        room = min(wanted - len(lent), self._size - len(self._all))
        try:
            if room > 0:
                lent += await self._start(room)
        except BaseException:
            for pipeline in lent:
                self._idle.put_nowait(pipeline)
            raise
        if not lent:
            lent.append(self._ready(await self._idle.get()))
        self._lent.update(lent)
        return lent

    def _ready(self, pipeline: Pipeline | None) -> Pipeline:
        """An idle pipeline, or EngineError for the mark that close() leaves for waiters."""
        if pipeline is None:
            self._idle.put_nowait(None)  # for the next waiter
            raise EngineError("the apertium engine is closed")
        return pipeline

    async def _start(self, count: int) -> list[Pipeline]:
        """``count`` new pipelines, started together; none is kept if one fails to start."""
        if self._closed:
            raise EngineError("the apertium engine is closed")
        fresh = [Pipeline(self._script, self._read_timeout_s) for _ in range(count)]
        self._all += fresh
        starts = [asyncio.ensure_future(pipeline.start()) for pipeline in fresh]
        self._starting.update(starts)
        for start in starts:
            start.add_done_callback(self._starting.discard)
        try:
            await until_done_or_failed(list(starts))
        except BaseException:
            for pipeline in fresh:
                if pipeline in self._all:
                    self._all.remove(pipeline)
                await pipeline.stop()
            raise
        if self._closed:  # closed while these were starting: close() may have missed a stage
            for pipeline in fresh:
                await pipeline.stop()
            raise EngineError("the apertium engine is closed")
        return fresh

    async def _release_all(self, used: list[Pipeline], healthy: set[Pipeline]) -> None:
        for pipeline in used:
            await self._release(pipeline, pipeline in healthy)

    async def _release(self, pipeline: Pipeline, healthy: bool) -> None:
        try:
            await self._give_back(pipeline, healthy)
        finally:
            self._lent.discard(pipeline)
            self._returned.set()

    async def _give_back(self, pipeline: Pipeline, healthy: bool) -> None:
        pipeline.last_used = time.monotonic()
        if not self._closed and healthy and pipeline.alive and pipeline.uses < self._max_uses:
            self._idle.put_nowait(pipeline)
            return
        # A stuck, dead or worn pipeline is replaced, never reused: whatever it still holds
        # would come out as the next batch's answers.
        await pipeline.stop()
        if pipeline in self._all:
            self._all.remove(pipeline)
        if self._closed:
            return  # closed before or during the stop: nothing to replace
        (fresh,) = await self._start(1)
        self._idle.put_nowait(fresh)

    def idle_s(self) -> float:
        """Seconds since the last batch ended; 0 while any pipeline is lent out."""
        if self._idle.qsize() < len(self._all):
            return 0.0
        return time.monotonic() - max((p.last_used for p in self._all), default=0.0)

    async def close(self) -> None:
        """Stops every pipeline, those lent out included; a batch still running on one
        fails, and no pipeline is started after this."""
        self._closed = True
        for pipeline in self._lent:
            pipeline.interrupt()
        # Their batches fail, and each stops its own pipeline; one that does not (its task
        # on a loop that no longer runs) has its pipeline stopped below all the same.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._read_timeout_s):
                while self._lent:
                    self._returned.clear()
                    await self._returned.wait()
        # A start under way has not yet got its processes: stopping its pipeline now would
        # kill nothing, and if the loop then ended, that start would never stop them.
        if self._starting:
            await asyncio.wait(list(self._starting), timeout=self._read_timeout_s)
        while self._all:
            await self._all.pop().stop()
        self._idle.put_nowait(None)  # a batch waiting for a pipeline fails rather than hangs
