"""Apertium with warm pipelines: started once per pair, reused, restarted when stuck or worn.

- ``modes``: the installed modes and their null-flush pipelines;
- ``pipeline``: ``Pipeline``, one warm pipeline;
- ``pool``: ``PipelinePool``, the warm-pool policy: a batch split across the idle pipelines;
- ``tagger``: the HMM tagger run apart, so its state never leaks between segments;
- ``stream``: apertium's plain-text stream format, per segment;
- ``marked``: inline codes as word-bound blanks and superblanks;
- here: ``ApertiumEngine``, a pool per pair, and the reaper that stops idle pairs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from dragoman.engines.apertium.marked import from_stream, splits_a_word, to_stream
from dragoman.engines.apertium.modes import Mode, discover_modes, null_flush_script
from dragoman.engines.apertium.pool import PipelinePool
from dragoman.engines.apertium.stream import deformat, reformat
from dragoman.engines.apertium.tagger import split_script
from dragoman.engines.apertium.version import Versions
from dragoman.errors import EngineError, UnsupportedPair
from dragoman.formats.markup import Marked, project
from dragoman.models import Pair
from dragoman.tasks import cancel_and_wait

__all__ = ["ApertiumEngine", "Mode", "discover_modes"]

log = logging.getLogger(__name__)


class ApertiumEngine:
    """The ``apertium`` engine: every installed mode, with a pool of warm pipelines per pair."""

    name = "apertium"
    gpu_capable = False

    def __init__(
        self,
        modes_dir: Path,
        *,
        pipelines_per_pair: int = 2,
        max_uses: int = 2000,
        read_timeout_s: float = 20.0,
        idle_shutdown_s: float = 900.0,
    ) -> None:
        self._modes = discover_modes(modes_dir)
        self._pairs = frozenset(self._modes)
        self._pipelines_per_pair = pipelines_per_pair
        self._max_uses = max_uses
        self._read_timeout_s = read_timeout_s
        self._idle_shutdown_s = idle_shutdown_s
        self._pools: dict[tuple[Pair, bool], PipelinePool] = {}  # by pair and marks
        self._lock = asyncio.Lock()
        self._reaper: asyncio.Task[None] | None = None
        self._versions = Versions()

    def pairs(self) -> frozenset[Pair]:
        return self._pairs

    def version(self, pair: Pair) -> str:
        mode = self._modes.get(pair)
        if mode is None:
            raise UnsupportedPair(f"apertium has no mode for {pair}")
        return self._versions.of(mode.path)

    def warm_pairs(self) -> frozenset[Pair]:
        return frozenset(pair for pair, _ in self._pools)

    def marking(self) -> MarkingApertium:
        """This engine writing unknown words marked (``*word``), on pipelines of their own."""
        return MarkingApertium(self)

    async def translate(
        self, pair: Pair, segments: Sequence[str], *, marks: bool = False
    ) -> list[str]:
        return await self._translate(pair, segments, raw=False, marks=marks)

    async def translate_marked(
        self, pair: Pair, cores: Sequence[Marked], *, marks: bool = False
    ) -> list[Marked]:
        """Segments with inline codes: paired codes ride on their words (``marked``); a
        segment with a code inside a word goes as plain text, its codes put back in
        proportion."""
        whole = [not splits_a_word(core) for core in cores]
        streams = [
            to_stream(core) if ok else deformat(core.engine_text)
            for core, ok in zip(cores, whole, strict=True)
        ]
        answers = await self._translate(pair, streams, raw=True, marks=marks)
        return [
            from_stream(answer, core) if ok else project(core, reformat(answer))
            for answer, core, ok in zip(answers, cores, whole, strict=True)
        ]

    async def _translate(
        self, pair: Pair, segments: Sequence[str], *, raw: bool, marks: bool
    ) -> list[str]:
        if not segments:
            return []
        pool = self._pools.get((pair, marks)) or await self._open_pool(pair, marks)
        if self._reaper is None:
            self._reaper = asyncio.create_task(self._reap_forever(), name="apertium-reaper")
        return await pool.translate(segments, raw=raw)

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(min(30.0, self._idle_shutdown_s / 2))
            await self.reap_idle()

    async def reap_idle(self) -> list[Pair]:
        """Stops the pipelines of pairs unused for ``idle_shutdown_s``; returns those pairs."""
        async with self._lock:
            idle = [
                key for key, pool in self._pools.items() if pool.idle_s() >= self._idle_shutdown_s
            ]
            pools = [self._pools.pop(key) for key in idle]
        for (pair, _), pool in zip(idle, pools, strict=True):
            await pool.close()
            log.info("apertium pipelines for %s stopped after being idle", pair)
        return [pair for pair, _ in idle]

    async def _open_pool(self, pair: Pair, marks: bool) -> PipelinePool:
        async with self._lock:
            if (pair, marks) not in self._pools:
                mode = self._modes.get(pair)
                if mode is None:
                    raise EngineError(f"apertium has no mode for {pair}")
                text = await asyncio.to_thread(null_flush_script, mode)
                self._pools[pair, marks] = PipelinePool(
                    split_script(text, marks=marks),
                    self._pipelines_per_pair,
                    self._max_uses,
                    self._read_timeout_s,
                )
                log.info("apertium pipelines for %s ready (mode %s)", pair, mode.name)
            return self._pools[pair, marks]

    async def close(self) -> None:
        if self._reaper is not None:
            await cancel_and_wait(self._reaper)
            self._reaper = None
        for pool in self._pools.values():
            await pool.close()
        self._pools.clear()


class MarkingApertium:
    """An ``ApertiumEngine`` whose output marks unknown words (``*word``, ``#word``), for
    those who ask (``mark_unknown``); its own pipelines and its own cache version."""

    gpu_capable = False

    def __init__(self, engine: ApertiumEngine) -> None:
        self._engine = engine
        self.name = engine.name

    def pairs(self) -> frozenset[Pair]:
        return self._engine.pairs()

    def version(self, pair: Pair) -> str:
        return self._engine.version(pair) + ":marks"

    def warm_pairs(self) -> frozenset[Pair]:
        return self._engine.warm_pairs()

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        return await self._engine.translate(pair, segments, marks=True)

    async def translate_marked(self, pair: Pair, cores: Sequence[Marked]) -> list[Marked]:
        return await self._engine.translate_marked(pair, cores, marks=True)

    async def close(self) -> None:
        """The pipelines are the engine's own, closed with it."""
