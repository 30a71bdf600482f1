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
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


@dataclass(frozen=True, slots=True)
class Script:
    """A mode's null-flush pipeline, split around its HMM tagger when it has one.

    The HMM tagger keeps state across null flushes: a word whose tags form an ambiguity
    class unknown to the model makes it narrow its open class for good (apertium's
    ``find_similar_ambiguity_class``), and every later segment is tagged against the
    narrowed class. A fresh ``apertium`` run starts from the model's class, so the tagger
    runs as a process of its own, with ``-d`` to announce that event on stderr, and is
    restarted right after any segment that announced it.
    """

    head: str
    tagger: list[str] | None = None
    tail: str | None = None


_HMM_TAGGER = re.compile(r"^apertium-tagger\b(?!.*\s-(?:x|w|u)\b).*\s-g\b")


def split_script(script: str) -> Script:
    stages = [stage.strip() for stage in script.split(" | ")]
    for i, stage in enumerate(stages):
        if _HMM_TAGGER.match(stage):
            argv = shlex.split(stage.replace("$1", "-g").replace("$2", ""))
            tagger = [shutil.which(argv[0]) or argv[0], "-d", *argv[1:]]
            return Script(" | ".join(stages[:i]), tagger, " | ".join(stages[i + 1 :]) or None)
    return Script(script)


async def _spawn(script: str, stderr: int) -> asyncio.subprocess.Process:
    # A mode's $1 is the generator's unknown-word flag (-g marks them with '*', as the CLI
    # does); $2 is the tagger's extra option, empty. A new session lets stop() kill every
    # stage of a shell pipeline at once.
    return await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        script,
        "apertium",
        "-g",
        "",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
        limit=_READ_LIMIT,
    )


async def _kill(proc: asyncio.subprocess.Process | None, *, group: bool = True) -> None:
    """Kills ``proc`` (with its process group, for a shell pipeline) and reaps it."""
    if proc is None:
        return
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
    # communicate() also reads the pipes to their end, so their transports close now rather
    # than at garbage collection.
    with contextlib.suppress(OSError, ValueError):
        await proc.communicate()
    await proc.wait()


@dataclass(slots=True)
class _TaggerProcess:
    proc: asyncio.subprocess.Process
    stderr: int

    @classmethod
    async def spawn(cls, argv: Sequence[str]) -> _TaggerProcess:
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=write_end,
                limit=_READ_LIMIT,
            )
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        return cls(proc, read_end)

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.proc.stdin is not None
        return self.proc.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.proc.stdout is not None
        return self.proc.stdout

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def drain_stderr(self) -> bytes:
        chunks = []
        while True:
            try:
                chunk = os.read(self.stderr, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    async def stop(self) -> None:
        await _kill(self.proc, group=False)
        os.close(self.stderr)


class _Tagger:
    """The HMM tagger stage, fed one segment at a time so its warnings map to segments.

    A spare process is kept loaded, so a restart is a swap rather than a start-up."""

    def __init__(self, argv: Sequence[str]) -> None:
        self._argv = list(argv)
        self._current: _TaggerProcess | None = None
        self._spare: asyncio.Future[_TaggerProcess] | None = None
        self.restarts = 0

    async def start(self) -> None:
        self._current = await _TaggerProcess.spawn(self._argv)
        self._spare = asyncio.ensure_future(_TaggerProcess.spawn(self._argv))

    async def tag(self, segment: bytes, read: Callable[[asyncio.StreamReader], Any]) -> bytes:
        current = self._current
        assert current is not None
        current.stdin.write(segment)
        await current.stdin.drain()
        tagged: bytes = await read(current.stdout)
        # The tagger writes its warning before the NUL that ends the segment, so by now
        # it is in the pipe.
        if b"new ambiguity class" in current.drain_stderr():
            await self._swap()
        return tagged

    async def _swap(self) -> None:
        old, spare = self._current, self._spare
        assert old is not None and spare is not None
        self._current = await spare
        self._spare = asyncio.ensure_future(_TaggerProcess.spawn(self._argv))
        self.restarts += 1
        await old.stop()

    @property
    def alive(self) -> bool:
        return self._current is not None and self._current.alive

    async def stop(self) -> None:
        current, spare, self._current, self._spare = self._current, self._spare, None, None
        if current is not None:
            await current.stop()
        if spare is not None:
            with contextlib.suppress(Exception):
                await (await spare).stop()


class Pipeline:
    """One running pipeline of one mode. Not shared: a ``PipelinePool`` lends it out."""

    def __init__(self, script: Script, read_timeout_s: float) -> None:
        self._script = script
        self._read_timeout_s = read_timeout_s
        self._head: asyncio.subprocess.Process | None = None
        self._tail: asyncio.subprocess.Process | None = None
        self._tagger = _Tagger(script.tagger) if script.tagger else None
        self.uses = 0
        self.last_used = time.monotonic()

    async def start(self) -> None:
        self._head = await _spawn(self._script.head, asyncio.subprocess.DEVNULL)
        if self._tagger is not None:
            await self._tagger.start()
        if self._script.tail:
            self._tail = await _spawn(self._script.tail, asyncio.subprocess.DEVNULL)

    @property
    def alive(self) -> bool:
        procs = [p for p in (self._head, self._tail) if p is not None]
        tagger_ok = self._tagger is None or self._tagger.alive
        return bool(procs) and tagger_ok and all(p.returncode is None for p in procs)

    async def translate(self, segments: Sequence[str]) -> list[str]:
        head = self._head
        if head is None or head.stdin is None or head.stdout is None:
            raise EngineError("apertium pipeline is not running")
        self.uses += 1
        self.last_used = time.monotonic()
        payload = b"".join(deformat(s).encode() + b"\0" for s in segments)
        last = head.stdout
        steps = [self._write(head.stdin, payload)]
        if self._tagger is not None:
            tail = self._tail
            assert tail is not None and tail.stdin is not None and tail.stdout is not None
            steps.append(self._relay(len(segments), head.stdout, tail.stdin))
            last = tail.stdout
        reader = asyncio.ensure_future(self._read_all(last, len(segments)))
        tasks = [reader, *(asyncio.ensure_future(step) for step in steps)]
        try:
            # The first failure of any step ends the batch at once; the pool then replaces
            # this pipeline, since whatever it still holds would shift the next batch.
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()  # re-raises the step's failure
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return reader.result()

    async def _read_all(self, stdout: asyncio.StreamReader, count: int) -> list[str]:
        outputs = []
        for _ in range(count):
            raw = await self._read_one(stdout)
            outputs.append(reformat(raw[:-1].decode("utf-8", errors="replace")))
        return outputs

    async def _relay(
        self, count: int, source: asyncio.StreamReader, sink: asyncio.StreamWriter
    ) -> None:
        """Moves segments from the head through the tagger into the tail, one at a time."""
        assert self._tagger is not None
        for _ in range(count):
            analysed = await self._read_one(source)
            sink.write(await self._tagger.tag(analysed, self._read_one))
            await sink.drain()

    @staticmethod
    async def _write(stdin: asyncio.StreamWriter, payload: bytes) -> None:
        stdin.write(payload)
        await stdin.drain()

    async def _read_one(self, stdout: asyncio.StreamReader) -> bytes:
        try:
            async with asyncio.timeout(self._read_timeout_s):  # no task per read, unlike wait_for
                return await stdout.readuntil(b"\0")
        except TimeoutError:
            raise EngineTimeout(f"apertium gave no output within {self._read_timeout_s}s") from None
        except asyncio.IncompleteReadError:
            raise EngineError("apertium pipeline exited while translating") from None

    async def stop(self) -> None:
        head, tail, self._head, self._tail = self._head, self._tail, None, None
        await _kill(head)
        await _kill(tail)
        if self._tagger is not None:
            await self._tagger.stop()


class PipelinePool:
    """The warm pipelines of one pair: lent one batch at a time, replaced when worn or broken."""

    def __init__(self, script: Script, size: int, max_uses: int, read_timeout_s: float) -> None:
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
        pipeline.last_used = time.monotonic()
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

    def idle_s(self) -> float:
        """Seconds since the last batch ended; 0 while any pipeline is lent out."""
        if self._idle.qsize() < len(self._all):
            return 0.0
        return time.monotonic() - max((p.last_used for p in self._all), default=0.0)

    async def close(self) -> None:
        for pipeline in self._all:
            await pipeline.stop()
        self._all.clear()


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
        self._pipelines_per_pair = pipelines_per_pair
        self._max_uses = max_uses
        self._read_timeout_s = read_timeout_s
        self._idle_shutdown_s = idle_shutdown_s
        self._pools: dict[Pair, PipelinePool] = {}
        self._lock = asyncio.Lock()
        self._reaper: asyncio.Task[None] | None = None

    def pairs(self) -> frozenset[Pair]:
        return frozenset(self._modes)

    def warm_pairs(self) -> frozenset[Pair]:
        return frozenset(self._pools)

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        if not segments:
            return []
        pool = self._pools.get(pair) or await self._open_pool(pair)
        if self._reaper is None:
            self._reaper = asyncio.create_task(self._reap_forever(), name="apertium-reaper")
        return await pool.translate(segments)

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(min(30.0, self._idle_shutdown_s / 2))
            await self.reap_idle()

    async def reap_idle(self) -> list[Pair]:
        """Stops the pipelines of pairs unused for ``idle_shutdown_s``; returns those pairs."""
        async with self._lock:
            idle = [
                pair for pair, pool in self._pools.items() if pool.idle_s() >= self._idle_shutdown_s
            ]
            pools = [self._pools.pop(pair) for pair in idle]
        for pair, pool in zip(idle, pools, strict=True):
            await pool.close()
            log.info("apertium pipelines for %s stopped after being idle", pair)
        return idle

    async def _open_pool(self, pair: Pair) -> PipelinePool:
        async with self._lock:
            if pair not in self._pools:
                mode = self._modes.get(pair)
                if mode is None:
                    raise EngineError(f"apertium has no mode for {pair}")
                script = split_script(await asyncio.to_thread(null_flush_script, mode))
                self._pools[pair] = PipelinePool(
                    script, self._pipelines_per_pair, self._max_uses, self._read_timeout_s
                )
                log.info("apertium pipelines for %s ready (mode %s)", pair, mode.name)
            return self._pools[pair]

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        for pool in self._pools.values():
            await pool.close()
        self._pools.clear()
