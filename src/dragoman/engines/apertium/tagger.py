"""The HMM-tagger workaround: the tagger runs alone and restarts after it narrows its model.

See ``Script`` for why, and ``Tagger`` for how segments go through it. Only modes whose
pipeline has an HMM tagger (``apertium-tagger -g`` without ``-x``, ``-w`` or ``-u``) pay for
it; the others run as one shell pipeline.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dragoman.engines.apertium.process import Child, kill, signal_kill, spawn, write_to
from dragoman.errors import EngineError

Read = Callable[[asyncio.StreamReader], Any]

# A segment of its own, sent after each segment: one word with a tag no tagset has. With -d the
# tagger says so on stderr as it reads the word, so after it has tagged the segment before:
# the message marks where that segment's warnings end. Its class (the unknown tag alone) is in
# every model, so it leaves the tagger as it found it.
MARKER = b"^dragoman/dragoman<dragomanmark>$\0"
NEW_CLASS = b"new ambiguity class"
# Segments sent to the tagger at once: after a segment that narrows the model, the rest of
# the window is tagged again by a fresh tagger.
WINDOW = 16


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
    marks: bool = False  # the generator marks unknown words ('*word'), as apertium does bare


_HMM_TAGGER = re.compile(r"^apertium-tagger\b(?!.*\s-(?:x|w|u)\b).*\s-g\b")


def split_script(script: str, *, marks: bool = False) -> Script:
    stages = [stage.strip() for stage in script.split(" | ")]
    for i, stage in enumerate(stages):
        if _HMM_TAGGER.match(stage):
            argv = shlex.split(stage.replace("$1", generator_flag(marks)).replace("$2", ""))
            tagger = [shutil.which(argv[0]) or argv[0], "-d", *argv[1:]]
            rest = " | ".join(stages[i + 1 :]) or None
            return Script(" | ".join(stages[:i]), tagger, rest, marks)
    return Script(script, marks=marks)


def generator_flag(marks: bool) -> str:
    """A mode's ``$1``: ``-g`` marks unknown words (``*word``, ``#word``), ``-n`` does not
    (the CLI's ``-u``, APY's ``markUnknown=no``)."""
    return "-g" if marks else "-n"


@dataclass(slots=True)
class _TaggerProcess:
    proc: Child
    stderr: int

    @classmethod
    async def spawn(cls, argv: Sequence[str]) -> _TaggerProcess:
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        try:
            proc = await spawn(argv, stderr=write_end)
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(write_end)
        return cls(proc, read_end)

    @property
    def stdin(self) -> asyncio.StreamWriter:
        return self.proc.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
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
        await kill(self.proc, group=False)
        os.close(self.stderr)


class Tagger:
    """The HMM tagger stage. A spare process is kept loaded, so a restart is a swap rather
    than a start-up.

    Segments go in windows: each followed by ``MARKER``, whose warning on stderr marks where
    the segment's own warnings end, so a window costs one round trip and the warnings still
    map to segments. Up to the first segment that narrowed the model, a window's tags are
    exact (the tagger was fresh); the segments after it are tagged again by a fresh tagger. A
    tagger that does not answer ``MARKER`` as expected is fed one segment at a time."""

    def __init__(self, argv: Sequence[str]) -> None:
        self._argv = list(argv)
        self._current: _TaggerProcess | None = None
        self._spare: asyncio.Future[_TaggerProcess] | None = None
        self._marker_says: bytes | None = None  # what MARKER writes on stderr
        self._stopping: set[asyncio.Future[None]] = set()
        self._stopped = False
        self.restarts = 0

    async def start(self, read: Read) -> None:
        self._current = await _TaggerProcess.spawn(self._argv)
        self._marker_says = await self._learn_marker(self._current, read)
        self._spare = asyncio.ensure_future(_TaggerProcess.spawn(self._argv))

    @staticmethod
    async def _learn_marker(process: _TaggerProcess, read: Read) -> bytes | None:
        await _write(process.stdin, MARKER)
        await read(process.stdout)
        said = process.drain_stderr()
        return said if b"dragomanmark" in said and NEW_CLASS not in said else None

    async def relay(
        self, count: int, source: asyncio.StreamReader, sink: asyncio.StreamWriter, read: Read
    ) -> None:
        """Moves ``count`` segments from the head through the tagger into the tail."""
        window = WINDOW if self._marker_says else 1
        waiting: list[bytes] = []
        left = count
        while left or waiting:
            while left and len(waiting) < window:
                waiting.append(await read(source))
                left -= 1
            exact = await self._tag(waiting, read)
            await write_to(sink, b"".join(exact), "apertium pipeline exited while translating")
            del waiting[: len(exact)]

    async def _tag(self, segments: list[bytes], read: Read) -> list[bytes]:
        """The tags of ``segments`` up to the first that narrowed the model (all of them if
        none did); the tagger is replaced after that one."""
        current = self._current
        assert current is not None
        marker = MARKER if self._marker_says else b""
        payload = b"".join(segment + marker for segment in segments)
        # Written while the answers are read: a window larger than the pipes would block.
        writer = asyncio.ensure_future(_write(current.stdin, payload))
        try:
            tagged = []
            for _ in segments:
                tagged.append(await read(current.stdout))
                if marker:
                    await read(current.stdout)
            await writer
        finally:
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
        # Every warning is in the pipe by now: each is written before its segment's NUL.
        said = current.drain_stderr()
        for done, own in enumerate(self._split(said, len(segments)), start=1):
            if NEW_CLASS in own:
                await self._swap()  # the segments after this one met a narrowed model
                return tagged[:done]
        return tagged

    def _split(self, said: bytes, count: int) -> list[bytes]:
        """Each segment's own warnings, from what the tagger said over the window."""
        if not self._marker_says:
            return [said]
        parts = said.split(self._marker_says)
        if len(parts) != count + 1:
            raise EngineError("apertium-tagger did not answer a segment's marker")
        return parts[:count]

    async def _swap(self) -> None:
        old, spare = self._current, self._spare
        assert old is not None and spare is not None
        fresh = await spare
        if self._stopped:
            # ``stop`` ran while the spare was starting and stopped both: no new spare.
            raise EngineError("apertium pipeline stopped while translating")
        self._current = fresh
        self._spare = asyncio.ensure_future(_TaggerProcess.spawn(self._argv))
        self.restarts += 1
        # Reaped aside: the next segments need not wait for the old process to go.
        stopping = asyncio.ensure_future(old.stop())
        self._stopping.add(stopping)
        stopping.add_done_callback(self._stopping.discard)

    @property
    def alive(self) -> bool:
        return self._current is not None and self._current.alive

    def interrupt(self) -> None:
        """Kills the tagger in use, so that a batch relayed through it fails now."""
        if self._current is not None:
            signal_kill(self._current.proc, group=False)

    async def stop(self) -> None:
        self._stopped = True  # a swap under way starts nothing more
        await asyncio.gather(*self._stopping, return_exceptions=True)
        current, spare, self._current, self._spare = self._current, self._spare, None, None
        if current is not None:
            await current.stop()
        if spare is not None:
            with contextlib.suppress(Exception):
                await (await spare).stop()


async def _write(stdin: asyncio.StreamWriter, payload: bytes) -> None:
    await write_to(stdin, payload, "apertium-tagger exited while tagging")
