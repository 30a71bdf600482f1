"""One warm pipeline of one mode (``pool`` lends them out).

Each pipeline is the pair's mode run in null-flush mode (``apertium-wblank-mode -z``): every
segment is deformatted alone, followed by NUL, and the pipeline answers each NUL with one.
Writing a whole batch before reading keeps all stages busy at once, so a batch of many
segments costs about one pass of the engine.

A batch fails when its pipeline gives no output for ``read_timeout_s``. One watch per batch
(``_watch``) says so, rather than a timeout around each read: a batch reads each segment two
to four times (head, tagger, its marker, tail), and a timeout armed and cancelled per read
cost more than the read itself.
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
        self._output_at = 0.0  # when a stage last gave a segment (the loop's clock)
        self.uses = 0
        self.last_used = time.monotonic()

    async def start(self) -> None:
        ended = self._start_ended = asyncio.Event()
        try:
            flag = generator_flag(self._script.marks)
            self._head = await spawn_shell(self._script.head, asyncio.subprocess.DEVNULL, flag)
            if self._tagger is not None:
                try:
                    async with asyncio.timeout(self._read_timeout_s):
                        await self._tagger.start(self._read_one)
                except TimeoutError:
                    raise self._stalled() from None
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
        work: list[asyncio.Future[Any]] = [reader, *map(asyncio.ensure_future, steps)]
        self._output_at = asyncio.get_running_loop().time()
        await until_done_or_failed(work, watch=asyncio.ensure_future(self._watch()))
        return reader.result()

    async def _watch(self) -> None:
        """Raises ``EngineTimeout`` once no stage has given a segment for ``read_timeout_s``;
        wakes once per that span while segments flow."""
        loop = asyncio.get_running_loop()
        while True:
            left = self._output_at + self._read_timeout_s - loop.time()
            if left <= 0:
                raise self._stalled()
            await asyncio.sleep(left)

    def _stalled(self) -> EngineTimeout:
        return EngineTimeout(f"apertium gave no output within {self._read_timeout_s}s")

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
        """One segment's answer from a stage; how long it may take is ``_watch``'s."""
        try:
            answer = await stdout.readuntil(b"\0")
        except asyncio.IncompleteReadError:
            raise EngineError("apertium pipeline exited while translating") from None
        self._output_at = asyncio.get_running_loop().time()
        return answer

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


async def until_done_or_failed(
    tasks: list[asyncio.Future[Any]], *, watch: asyncio.Future[Any] | None = None
) -> None:
    """Waits for every task, or re-raises the first failure, of a task or of ``watch`` (a
    task that only ever fails, cancelled once the others are done); none outlives the call."""
    watched = [watch] if watch is not None else []
    try:
        # The first failure of any step ends the batch at once; the pool then replaces
        # this pipeline, since whatever it still holds would shift the next batch.
        waiting: set[asyncio.Future[Any]] = {*tasks, *watched}
        while not all(task.done() for task in tasks):
            done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()  # re-raises the step's failure
    finally:
        for task in (*tasks, *watched):
            task.cancel()
        await asyncio.gather(*tasks, *watched, return_exceptions=True)
