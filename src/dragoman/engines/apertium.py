"""Apertium with warm pipelines: started once per pair, reused, restarted when stuck or worn.

Each pipeline is the pair's mode run in null-flush mode (``apertium-wblank-mode -z``): every
segment is deformatted alone, followed by NUL, and the pipeline answers each NUL with one.
Writing a whole batch before reading keeps all stages busy at once, so a batch of many
segments costs about one pass of the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dragoman.engines import Pair
from dragoman.engines.apertium_stream import deformat, reformat
from dragoman.errors import EngineError, EngineTimeout, InvalidRequest
from dragoman.languages import canonical

log = logging.getLogger(__name__)

_READ_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Mode:
    pair: Pair
    name: str
    path: Path


def discover_modes(modes_dir: Path) -> dict[Pair, Mode]:
    """The installed ``xxx-yyy.mode`` files; variants (``_valencia``) and others are skipped."""
    modes: dict[Pair, Mode] = {}
    for path in sorted(modes_dir.glob("*.mode")) if modes_dir.is_dir() else []:
        parts = path.stem.split("-")
        if len(parts) != 2 or "_" in path.stem:
            continue
        try:
            pair = Pair(canonical(parts[0]), canonical(parts[1]))
        except InvalidRequest:
            continue
        modes.setdefault(pair, Mode(pair, path.stem, path))
    return modes


def null_flush_script(mode: Mode) -> str:
    """The shell pipeline of ``mode`` with every stage in null-flush mode."""
    result = subprocess.run(
        ["apertium-wblank-mode", "-z", str(mode.path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


class Pipeline:
    """One running pipeline of one mode. Not shared: a ``PipelinePool`` lends it out."""

    def __init__(self, script: str, read_timeout_s: float) -> None:
        self._script = script
        self._read_timeout_s = read_timeout_s
        self._proc: asyncio.subprocess.Process | None = None
        self.uses = 0
        self.last_used = time.monotonic()

    async def start(self) -> None:
        # The mode's $1 is the generator's unknown-word flag (-g marks them with '*', as the
        # CLI does); $2 is the tagger's extra option, empty. A new session lets stop() kill
        # every stage at once.
        self._proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            self._script,
            "apertium",
            "-g",
            "",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
            limit=_READ_LIMIT,
        )

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def translate(self, segments: Sequence[str]) -> list[str]:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise EngineError("apertium pipeline is not running")
        self.uses += 1
        self.last_used = time.monotonic()
        payload = b"".join(deformat(s).encode() + b"\0" for s in segments)
        writer = asyncio.create_task(self._write(proc.stdin, payload))
        try:
            outputs = [await self._read_one(proc.stdout) for _ in segments]
        finally:
            if not writer.done():
                writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await writer
        return outputs

    @staticmethod
    async def _write(stdin: asyncio.StreamWriter, payload: bytes) -> None:
        stdin.write(payload)
        await stdin.drain()

    async def _read_one(self, stdout: asyncio.StreamReader) -> str:
        try:
            raw = await asyncio.wait_for(stdout.readuntil(b"\0"), self._read_timeout_s)
        except TimeoutError:
            raise EngineTimeout(f"apertium gave no output within {self._read_timeout_s}s") from None
        except asyncio.IncompleteReadError:
            raise EngineError("apertium pipeline exited while translating") from None
        return reformat(raw[:-1].decode("utf-8", errors="replace"))

    async def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()


class PipelinePool:
    """The warm pipelines of one pair: lent one batch at a time, replaced when worn or broken."""

    def __init__(self, script: str, size: int, max_uses: int, read_timeout_s: float) -> None:
        self._script = script
        self._max_uses = max_uses
        self._read_timeout_s = read_timeout_s
        self._idle: asyncio.Queue[Pipeline] = asyncio.Queue()
        self._all: list[Pipeline] = []
        self._size = size

    async def translate(self, segments: Sequence[str]) -> list[str]:
        pipeline = await self._acquire()
        healthy = False
        try:
            result = await pipeline.translate(segments)
            healthy = True
            return result
        finally:
            await self._release(pipeline, healthy)

    async def _acquire(self) -> Pipeline:
        if self._idle.empty() and len(self._all) < self._size:
            pipeline = Pipeline(self._script, self._read_timeout_s)
            self._all.append(pipeline)
            await pipeline.start()
            return pipeline
        return await self._idle.get()

    async def _release(self, pipeline: Pipeline, healthy: bool) -> None:
        if healthy and pipeline.alive and pipeline.uses < self._max_uses:
            self._idle.put_nowait(pipeline)
            return
        # A stuck, dead or worn pipeline is replaced, never reused: whatever it still holds
        # would come out as the next batch's answers.
        await pipeline.stop()
        fresh = Pipeline(self._script, self._read_timeout_s)
        self._all[self._all.index(pipeline)] = fresh
        await fresh.start()
        self._idle.put_nowait(fresh)

    async def close(self) -> None:
        for pipeline in self._all:
            await pipeline.stop()
        self._all.clear()


class ApertiumEngine:
    """The ``apertium`` engine: every installed mode, with a pool of warm pipelines per pair."""

    name = "apertium"

    def __init__(
        self,
        modes_dir: Path,
        *,
        pipelines_per_pair: int = 2,
        max_uses: int = 2000,
        read_timeout_s: float = 20.0,
    ) -> None:
        self._modes = discover_modes(modes_dir)
        self._pipelines_per_pair = pipelines_per_pair
        self._max_uses = max_uses
        self._read_timeout_s = read_timeout_s
        self._pools: dict[Pair, PipelinePool] = {}
        self._lock = asyncio.Lock()

    def pairs(self) -> frozenset[Pair]:
        return frozenset(self._modes)

    def warm_pairs(self) -> frozenset[Pair]:
        return frozenset(self._pools)

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        if not segments:
            return []
        pool = self._pools.get(pair) or await self._open_pool(pair)
        return await pool.translate(segments)

    async def _open_pool(self, pair: Pair) -> PipelinePool:
        async with self._lock:
            if pair not in self._pools:
                mode = self._modes.get(pair)
                if mode is None:
                    raise EngineError(f"apertium has no mode for {pair}")
                script = await asyncio.to_thread(null_flush_script, mode)
                self._pools[pair] = PipelinePool(
                    script, self._pipelines_per_pair, self._max_uses, self._read_timeout_s
                )
                log.info("apertium pipelines for %s ready (mode %s)", pair, mode.name)
            return self._pools[pair]

    async def close(self) -> None:
        for pool in self._pools.values():
            await pool.close()
        self._pools.clear()
