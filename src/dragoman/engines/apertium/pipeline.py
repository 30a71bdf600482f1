"""One warm pipeline of one mode (``pool`` lends them out).

Each pipeline is the pair's mode run in null-flush mode (``apertium-wblank-mode -z``): every
segment is deformatted alone, followed by NUL, and the pipeline answers each NUL with one.
Writing a whole batch before reading keeps all stages busy at once, so a batch of many
segments costs about one pass of the engine.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Sequence
from typing import Any

from dragoman.engines.apertium.process import Child, kill, signal_kill, spawn_shell, write_to
from dragoman.engines.apertium.stream import deformat, reformat
from dragoman.engines.apertium.tagger import Script, Tagger, generator_flag
from dragoman.errors import EngineError, EngineTimeout


class Pipeline:
    """One running pipeline of one mode. Not shared: a ``PipelinePool`` lends it out."""

    def __init__(self, script: Script, read_timeout_s: float) -> None:
        self._script = script
        self._read_timeout_s = read_timeout_s
        self._head: Child | None = None
        self._tail: Child | None = None
        self._tagger = Tagger(script.tagger) if script.tagger else None
        self._start_ended: asyncio.Event | None = None  # not None while a start is under way
        self.uses = 0
        self.last_used = time.monotonic()

    async def start(self) -> None:
        ended = self._start_ended = asyncio.Event()
        try:
            flag = generator_flag(self._script.marks)
            self._head = await spawn_shell(self._script.head, asyncio.subprocess.DEVNULL, flag)
            if self._tagger is not None:
                await self._tagger.start(self._read_one)
            if self._script.tail:
                self._tail = await spawn_shell(self._script.tail, asyncio.subprocess.DEVNULL, flag)
        finally:
            self._start_ended = None
            ended.set()

    @property
    def alive(self) -> bool:
        procs = [p for p in (self._head, self._tail) if p is not None]
        tagger_ok = self._tagger is None or self._tagger.alive
        return bool(procs) and tagger_ok and all(p.returncode is None for p in procs)

    async def translate(self, segments: Sequence[str], *, raw: bool = False) -> list[str]:
        """Each segment's translation; with ``raw``, segments are streams already and the
        answers stay streams."""
        head = self._head
        if head is None:
            raise EngineError("apertium pipeline is not running")
        self.uses += 1
        self.last_used = time.monotonic()
        streams = segments if raw else [deformat(s) for s in segments]
        payload = b"".join(s.encode() + b"\0" for s in streams)
        last = head.stdout
        steps: list[Coroutine[Any, Any, None]] = [self._write(head.stdin, payload)]
        if self._tagger is not None:
            tail = self._tail
            assert tail is not None
            steps.append(self._tagger.relay(len(segments), head.stdout, tail.stdin, self._read_one))
            last = tail.stdout
        reader = asyncio.ensure_future(self._read_all(last, len(segments), raw))
        await until_done_or_failed([reader, *(asyncio.ensure_future(step) for step in steps)])
        return reader.result()

    async def _read_all(self, stdout: asyncio.StreamReader, count: int, raw: bool) -> list[str]:
        outputs = []
        for _ in range(count):
            answer = (await self._read_one(stdout))[:-1].decode("utf-8", errors="replace")
            outputs.append(answer if raw else reformat(answer))
        return outputs

    @staticmethod
    async def _write(stdin: asyncio.StreamWriter, payload: bytes) -> None:
        await write_to(stdin, payload, "apertium pipeline exited while translating")

    async def _read_one(self, stdout: asyncio.StreamReader) -> bytes:
        try:
            async with asyncio.timeout(self._read_timeout_s):  # no task per read, unlike wait_for
                return await stdout.readuntil(b"\0")
        except TimeoutError:
            raise EngineTimeout(f"apertium gave no output within {self._read_timeout_s}s") from None
        except asyncio.IncompleteReadError:
            raise EngineError("apertium pipeline exited while translating") from None

    def interrupt(self) -> None:
        """Kills the processes of a pipeline that is lent out: its batch fails at once, and
        whoever holds it stops it (``stop`` reads the pipes that the batch is reading)."""
        signal_kill(self._head)
        signal_kill(self._tail)
        if self._tagger is not None:
            self._tagger.interrupt()

    async def stop(self) -> None:
        """Kills every stage at once, then reaps them. A caller cancelled meanwhile (a job
        cancelled, then its worker shut down) leaves the reaping to finish on its own: an
        await between two kills would otherwise leave the later stages running for good.
        A start under way is waited for first: the stages it has not yet handed over would
        otherwise be spawned after the kills, and run for good."""
        if self._start_ended is not None:
            await asyncio.shield(self._stopped_after(self._start_ended))
            return
        head, tail, self._head, self._tail = self._head, self._tail, None, None
        signal_kill(head)
        signal_kill(tail)
        if self._tagger is not None:
            self._tagger.interrupt()
        await asyncio.shield(self._reap(head, tail))

    async def _stopped_after(self, start_ended: asyncio.Event) -> None:
        await start_ended.wait()
        await self.stop()

    async def _reap(self, head: Child | None, tail: Child | None) -> None:
        await kill(head)
        await kill(tail)
        if self._tagger is not None:
            await self._tagger.stop()


async def until_done_or_failed(tasks: list[asyncio.Future[Any]]) -> None:
    """Waits for every task, or re-raises the first failure; no task outlives the call."""
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
