"""The processes of a pipeline: started in a session of their own, killed and reaped whole."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from dragoman.errors import EngineError

READ_LIMIT = 64 * 1024 * 1024


async def spawn_shell(script: str, stderr: int, flag: str = "-n") -> Child:
    """Runs ``script``, a mode's shell pipeline, with pipes for its stdin and stdout."""
    # A mode's $1 is the generator's flag (``flag``: -n leaves unknown words unmarked, -g
    # writes '*word'); $2 is the tagger's extra option, empty. A new session lets stop() kill every
    # stage of a shell pipeline at once. --norc: bash must not read ~/.bashrc (it does when
    # its stdin is a socket, as if started by sshd), whatever starts it.
    argv = ["bash", "--norc", "-c", script, "apertium", flag, ""]
    return await spawn(argv, stderr=stderr, new_session=True)


@dataclass(eq=False)
class Child:
    """A process started by ``spawn``: its stdin and stdout as the loop's streams, and the
    calls of ``asyncio.subprocess.Process`` that the engine makes."""

    popen: subprocess.Popen[bytes]
    stdin: asyncio.StreamWriter
    stdout: asyncio.StreamReader
    stdout_pipe: asyncio.ReadTransport

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        """None while it runs; asks the kernel (``waitpid`` without blocking) each time."""
        return self.popen.poll()

    def kill(self) -> None:
        self.popen.kill()  # nothing once it has been reaped

    async def wait(self) -> int:
        """Its exit status, once it has exited; the loop serves others meanwhile."""
        if (code := self.popen.poll()) is not None:
            return code
        await _exited(self.popen)
        return self.popen.wait()

    async def communicate(self) -> None:
        """Closes its stdin, reads its stdout to the end and closes it: uvloop keeps a pipe
        open after its end until told. A read under way elsewhere meets the end."""
        self.stdin.close()
        try:
            await self.stdout.read()
        finally:
            self.stdout_pipe.close()


async def spawn(argv: Sequence[str], *, stderr: int, new_session: bool = False) -> Child:
    """Starts ``argv`` with its stdin and stdout attached to the running loop.

    ``subprocess.Popen`` starts a process with vfork and exec, in a thread: the loop serves
    others meanwhile, on a busy machine too, where the new process waits for a core before
    it execs (10 ms and more on 2 cores translating). uvloop's own ``subprocess_exec`` forks
    the whole server on the loop's thread, 5 to 12 ms for a process of 130 MB, during which
    its loop serves nothing; and a pipeline's tagger is started again after every segment
    that narrows its model.

    Its stdin and stdout are each one end of a socket pair, as uvloop's own are: a transport
    that uvloop closes detaches a socket, where it would close a pipe's file object after
    libuv has closed its descriptor, and so close whatever another thread had opened under
    that number meanwhile. A caller cancelled meanwhile does not cut the start short: the
    start ends, the process (with its group, in a session of its own) is killed and reaped,
    and the cancellation goes on.
    """
    start = asyncio.ensure_future(_started(argv, stderr, new_session))
    try:
        return await asyncio.shield(start)
    except asyncio.CancelledError:
        # Neither the start nor the kill is cut short by a second cancellation (a job
        # cancelled, then its worker stopped): they go on as a task of their own.
        cleanup = asyncio.ensure_future(_killed_once_started(start, new_session))
        _CLEANUPS.add(cleanup)
        cleanup.add_done_callback(_CLEANUPS.discard)
        await asyncio.shield(cleanup)
        raise


# Kills under way after a cancelled start, kept until they end (the loop holds tasks weakly).
_CLEANUPS: set[asyncio.Future[None]] = set()
# Its own threads: a start never waits behind the default executor's other work (a SQLite
# lock wait, a file's extraction), which a pipeline's read timeout would not forgive.
_SPAWNING = ThreadPoolExecutor(2, thread_name_prefix="spawn")


async def _killed_once_started(start: asyncio.Future[Child], group: bool) -> None:
    with contextlib.suppress(Exception):
        await kill(await start, group=group)


def _popen(
    argv: Sequence[str],
    stdin: socket.socket,
    stdout: socket.socket,
    stderr: int,
    new_session: bool,
) -> subprocess.Popen[bytes]:
    """Runs in a thread of ``_SPAWNING``. The child's ends are closed here, once it holds
    its own copies: closed by a caller cancelled meanwhile, their numbers could be handed
    to other files before ``Popen`` reads them."""
    try:
        return subprocess.Popen(
            argv,
            stdin=stdin.fileno(),
            stdout=stdout.fileno(),
            stderr=stderr,
            start_new_session=new_session,
        )
    finally:
        stdin.close()
        stdout.close()


async def _started(argv: Sequence[str], stderr: int, new_session: bool) -> Child:
    to_child, stdin = socket.socketpair()
    stdout, from_child = socket.socketpair()
    loop = asyncio.get_running_loop()
    starting = loop.run_in_executor(_SPAWNING, _popen, argv, stdin, stdout, stderr, new_session)
    try:
        popen = await asyncio.shield(starting)
    except BaseException:
        to_child.close()
        from_child.close()
        # Cancelled (the loop shutting down): the thread starts it all the same.
        with contextlib.suppress(BaseException):
            _killed(await starting, new_session)
        raise
    # A socket handed to the loop is the loop's to close, even when attaching it fails
    # (uvloop closes its descriptor under the object). Attaching fails only as the loop
    # shuts down: a start is never cancelled otherwise.
    reader = asyncio.StreamReader(limit=READ_LIMIT, loop=loop)
    try:
        read_end, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop), from_child
        )
    except BaseException:
        _killed(popen, new_session)
        to_child.close()  # never handed over
        raise
    try:
        write_end, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop), to_child
        )
    except BaseException:
        _killed(popen, new_session)
        read_end.close()
        raise
    writer = asyncio.StreamWriter(write_end, protocol, None, loop)
    return Child(popen, writer, reader, read_end)


def _killed(popen: subprocess.Popen[bytes], group: bool) -> None:
    """Kills ``popen`` (with its process group) and reaps it: killed, it ends at once."""
    signal_kill(popen, group=group)
    popen.wait()


async def _exited(popen: subprocess.Popen[bytes]) -> None:
    """Returns once ``popen`` has exited (not reaped: ``wait`` then returns at once)."""
    try:
        pidfd = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):
        # No pidfd (before Linux 5.3, or refused by a seccomp profile): asked on this thread,
        # so that no other thread reaps it while ``returncode`` and a kill look at its pid.
        while popen.poll() is None:  # noqa: ASYNC110 -- nothing to wait on but the kernel
            await asyncio.sleep(0.01)
        return
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not exited.done():
            exited.set_result(None)

    try:
        loop.add_reader(pidfd, readable)
        try:
            await exited
        finally:
            loop.remove_reader(pidfd)
    finally:
        os.close(pidfd)


def signal_kill(proc: Child | subprocess.Popen[bytes] | None, *, group: bool = True) -> None:
    """Sends SIGKILL to ``proc`` (and its process group) without reaping it: whoever reads its
    pipes meets their end and reaps it."""
    if proc is None or proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()


async def kill(proc: Child | None, *, group: bool = True) -> None:
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
