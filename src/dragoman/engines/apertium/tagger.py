"""The HMM-tagger workaround: the tagger runs alone and restarts after it narrows its model.

See ``Script`` for why. Only modes whose pipeline has an HMM tagger (``apertium-tagger -g``
without ``-x``, ``-w`` or ``-u``) pay for it; the others run as one shell pipeline.
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

from dragoman.engines.apertium.process import READ_LIMIT, kill

Read = Callable[[asyncio.StreamReader], Any]


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
                limit=READ_LIMIT,
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
        await kill(self.proc, group=False)
        os.close(self.stderr)


class Tagger:
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

    async def relay(
        self, count: int, source: asyncio.StreamReader, sink: asyncio.StreamWriter, read: Read
    ) -> None:
        """Moves ``count`` segments from the head through the tagger into the tail."""
        for _ in range(count):
            analysed = await read(source)
            sink.write(await self.tag(analysed, read))
            await sink.drain()

    async def tag(self, segment: bytes, read: Read) -> bytes:
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
