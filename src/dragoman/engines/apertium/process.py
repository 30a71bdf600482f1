"""The processes of a pipeline: started in a session of their own, killed and reaped whole."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Coroutine
from typing import Any

from dragoman.errors import EngineError

READ_LIMIT = 64 * 1024 * 1024


async def spawn_shell(script: str, stderr: int, flag: str = "-n") -> asyncio.subprocess.Process:
    """Runs ``script``, a mode's shell pipeline, with pipes for its stdin and stdout."""
    # A mode's $1 is the generator's flag (``flag``: -n leaves unknown words unmarked, -g
    # writes '*word'); $2 is the tagger's extra option, empty. A new session lets stop() kill every
    # stage of a shell pipeline at once. --norc: under uvloop stdin is a socket, and bash
    # then reads ~/.bashrc as if started by sshd; a pipeline must not run the user's set-up.
    return await spawned(
        asyncio.create_subprocess_exec(
            "bash",
            "--norc",
            "-c",
            script,
            "apertium",
            flag,
            "",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            start_new_session=True,
            limit=READ_LIMIT,
        )
    )


async def spawned(
    starting: Coroutine[Any, Any, asyncio.subprocess.Process], *, group: bool = True
) -> asyncio.subprocess.Process:
    """The process ``starting`` starts. A caller cancelled meanwhile does not cut the start
    short: asyncio would then kill the shell alone and wait for pipes that the pipeline's
    other stages still hold. The start ends, the process (with its group) is killed and
    reaped, and the cancellation goes on."""
    start = asyncio.ensure_future(starting)
    try:
        return await asyncio.shield(start)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await kill(await start, group=group)
        raise


def signal_kill(proc: asyncio.subprocess.Process | None, *, group: bool = True) -> None:
    """Sends SIGKILL to ``proc`` (and its process group) without reaping it: whoever reads its
    pipes meets their end and reaps it."""
    if proc is None or proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()


async def kill(proc: asyncio.subprocess.Process | None, *, group: bool = True) -> None:
    """Kills ``proc`` (with its process group, for a shell pipeline) and reaps it."""
    if proc is None:
        return
    signal_kill(proc, group=group)
    # communicate() also reads the pipes to their end, so their transports close now rather
    # than at garbage collection.
    # RuntimeError: a batch is still reading a pipe (a pipeline stopped while lent out); it
    # meets the pipe's end instead.
    with contextlib.suppress(OSError, ValueError, RuntimeError):
        await proc.communicate()
    await proc.wait()


async def write_to(stdin: asyncio.StreamWriter, payload: bytes, failure: str) -> None:
    """Writes ``payload`` to a process's stdin; ``EngineError(failure)`` if it has gone."""
    try:
        if stdin.is_closing():
            raise BrokenPipeError
        stdin.write(payload)
        await stdin.drain()
    except (ConnectionResetError, BrokenPipeError, RuntimeError):
        # Whichever side notices first, the reader's EOF or the writer's broken pipe, it is
        # the same failure. uvloop says RuntimeError of a pipe whose handle it has closed.
        raise EngineError(failure) from None
