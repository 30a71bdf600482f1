"""Processes are started outside the loop and talk through it, under asyncio's loop and
uvloop alike. Writing to a stage that has gone is an engine error, whatever the event loop
says of it; a pipeline whose start is cancelled is killed whole, and so is one whose pool is
closed while it starts."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Coroutine
from typing import Any

import psutil
import pytest
import uvloop

from dragoman.engines.apertium import process
from dragoman.engines.apertium.pipeline import Pipeline
from dragoman.engines.apertium.pool import PipelinePool
from dragoman.engines.apertium.process import kill, spawn, write_to
from dragoman.engines.apertium.tagger import Script
from dragoman.errors import EngineError

Runner = Callable[[Coroutine[Any, Any, None]], None]


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_a_spawned_process_talks_through_the_loop_and_is_killed_and_reaped(run: Runner) -> None:
    async def main() -> None:
        child = await spawn(["cat"], stderr=subprocess.DEVNULL)
        assert child.returncode is None
        await write_to(child.stdin, b"one\0two\0", "cat exited")
        assert await child.stdout.readuntil(b"\0") == b"one\0"
        assert await child.stdout.readuntil(b"\0") == b"two\0"
        await kill(child, group=False)
        assert child.returncode == -signal.SIGKILL
        assert await child.wait() == -signal.SIGKILL
        assert child.stdin.is_closing()
        assert _children("cat") == []  # reaped: not even a zombie

    run(main())


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_waiting_for_a_process_lets_the_loop_serve_others(run: Runner) -> None:
    async def main() -> None:
        child = await spawn(["sleep", "0.3"], stderr=subprocess.DEVNULL)
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticking = asyncio.ensure_future(tick())
        try:
            assert await child.wait() == 0
        finally:
            ticking.cancel()
        assert ticks > 5
        await child.communicate()

    run(main())


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
@pytest.mark.parametrize("closed", [True, False], ids=["pipe-closed", "process-gone"])
def test_writing_to_a_stage_that_has_gone_is_an_engine_error(run: Runner, closed: bool) -> None:
    async def main() -> None:
        child = await spawn(["true"], stderr=subprocess.DEVNULL)
        await child.wait()
        if closed:
            # The pipe's transport closed under the writer (a pipeline stopped while lent
            # out): uvloop refuses writes to it with RuntimeError.
            child.stdin.close()
        with pytest.raises(EngineError, match="the stage exited"):
            for _ in range(64):  # a pipe's buffer takes a little before it breaks
                await write_to(child.stdin, b"x" * 65536, "the stage exited")
        await child.communicate()

    run(main())


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_a_pipeline_whose_start_is_cancelled_is_killed_whole(run: Runner) -> None:
    # A stage that outlives its shell (one that ignores its input) holds the pipeline's
    # output open: a start cut short while its pipes are attached kills the whole group.
    async def main() -> None:
        start = asyncio.ensure_future(
            spawn(["bash", "-c", "sleep 30 | cat"], stderr=subprocess.DEVNULL, new_session=True)
        )
        for _ in range(1000):  # until the start has forked, and waits for its pipes
            if shells := _children("bash"):
                break
            await asyncio.sleep(0)
        try:
            assert len(shells) == 1 and not start.done()
            start.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(start, 10)
            assert _children("bash") == []  # reaped
            for _ in range(100):
                if not _running_in_group(shells[0]):
                    break
                await asyncio.sleep(0.05)
            assert _running_in_group(shells[0]) == []
        finally:
            for group in shells:  # a failure leaves none behind
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGKILL)

    run(main())


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_a_start_cancelled_twice_still_kills_what_it_started(
    run: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A job cancelled, then its worker stopped: the second cancellation reaches the caller
    # while the first one's kill waits for the start, under way in its thread (made slow
    # here, as on a machine whose cores are busy, so that both land while it runs).
    popen = process._popen

    def slow_popen(*args: Any) -> subprocess.Popen[bytes]:
        time.sleep(0.3)
        return popen(*args)

    monkeypatch.setattr(process, "_popen", slow_popen)
    marker = f"{30 + os.getpid() % 1000 / 1000:.3f}"  # this test's own ``sleep``

    def left() -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["cmdline", "status"]):
            mine = proc.info["cmdline"] == ["sleep", marker]
            if mine and proc.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(proc)
        return found

    async def main() -> None:
        start = asyncio.ensure_future(
            spawn(
                ["bash", "-c", f"sleep {marker} | cat"], stderr=subprocess.DEVNULL, new_session=True
            )
        )
        await asyncio.sleep(0.1)  # under way, in its thread
        start.cancel()
        await asyncio.sleep(0.1)
        start.cancel()
        with pytest.raises(asyncio.CancelledError):
            await start
        await asyncio.sleep(1.0)  # the start ends on its own in its thread, then its kill

    try:
        run(main())
        for _ in range(100):  # SIGKILL sent: each stage ends as the kernel gets to it
            if not left():
                break
            time.sleep(0.05)
        assert left() == []
        assert _children("bash") == []  # reaped
    finally:
        for proc in left():
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()


def _running_in_group(group: int) -> list[int]:
    """The processes of process group ``group`` that are not zombies."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            found.append(int(pid))
    return found


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_a_pool_closed_while_a_pipeline_starts_leaves_no_process(run: Runner) -> None:
    """A service stopped while a pool starts a pipeline: close() returns only once that
    start has ended and its processes are killed, so a loop that ends right after leaves
    none running."""

    async def main() -> None:
        pool = PipelinePool(Script(head="sleep 30 | cat"), 1, 100, 10.0)
        batch = asyncio.ensure_future(pool.translate(["x"]))
        for _ in range(1000):  # until the start has forked the pipeline's shell
            if _children("bash"):
                break
            await asyncio.sleep(0)
        assert _children("bash"), "the pipeline did not start"
        await pool.close()
        left = [pid for pid in _children("bash") if _running_in_group(pid)]
        assert left == []
        with pytest.raises(EngineError):
            await batch

    run(main())


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_a_pipeline_stopped_while_it_starts_is_stopped_once_started(run: Runner) -> None:
    """The stop comes while the start's shell is forked but not yet handed over: the stop
    waits for the start, then kills what it started, rather than killing nothing."""

    async def main() -> None:
        pipeline = Pipeline(Script(head="sleep 30 | cat", tail="cat"), 10.0)
        start = asyncio.ensure_future(pipeline.start())
        for _ in range(1000):  # until the start has forked the head's shell
            if _children("bash"):
                break
            await asyncio.sleep(0)
        shells = _children("bash")
        try:
            assert shells and not start.done(), "the start was not caught under way"
            await pipeline.stop()
            await start
            assert not pipeline.alive
            for _ in range(100):  # SIGKILL sent: each stage ends as the kernel gets to it
                if not any(_running_in_group(pid) for pid in shells):
                    break
                await asyncio.sleep(0.05)
            assert [pid for pid in shells if _running_in_group(pid)] == []
        finally:
            for group in _children("bash"):  # a failure leaves none behind
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGKILL)
            await pipeline.stop()

    run(main())


def _children(name: str) -> list[int]:
    """This process's children called ``name`` that are not zombies."""
    found = []
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.name() == name and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child.pid)
    return found
