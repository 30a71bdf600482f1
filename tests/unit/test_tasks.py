"""Stopping a background task: a stop ends, and a stop that is itself cancelled says so."""

from __future__ import annotations

import ast
import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from dragoman.bus.memory import MemoryBus
from dragoman.metrics import Metrics
from dragoman.models import Pool
from dragoman.runtime import Runtime
from dragoman.scaling.scaler import Scaler
from dragoman.store.sql import SqlJobStore
from dragoman.tasks import cancel_and_wait
from tests.conftest import FakeClock
from tests.unit.test_scaler_figures import Counting

SOURCES = Path(__file__).resolve().parents[2] / "src" / "dragoman"


async def test_a_stop_cancelled_while_it_waits_is_cancelled_not_carried_on() -> None:
    ended = asyncio.Event()

    async def slow_to_end() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.sleep(0.5)  # winding down
            ended.set()
            raise

    task = asyncio.create_task(slow_to_end())
    await asyncio.sleep(0)
    stop = asyncio.create_task(cancel_and_wait(task))
    await asyncio.sleep(0.05)
    stop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stop
    assert not ended.is_set()  # the stop's own cancellation came first, not after the task's end
    await asyncio.wait([task])
    assert task.cancelled() and ended.is_set()


async def test_the_tasks_exception_is_raised_and_their_cancellation_is_not() -> None:
    async def broken() -> None:
        raise ValueError("broke")

    failed = asyncio.create_task(broken())
    await asyncio.sleep(0)
    waiting = asyncio.create_task(asyncio.sleep(3600))
    with pytest.raises(ValueError, match="broke"):
        await cancel_and_wait(waiting, failed, None)
    assert waiting.cancelled()
    await cancel_and_wait()


@pytest.mark.parametrize("turns", range(5))
async def test_a_scaler_nudged_as_it_is_stopped_stops(
    turns: int, tmp_path: Path, make_settings: Any
) -> None:
    """A nudge lands on the turns of the loop just before the stop's cancellation: the
    cancellation arrives as the wait for a nudge ends, where ``asyncio.wait_for`` (before
    Python 3.12) returns as if nothing had been cancelled."""
    store = SqlJobStore(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    await store.open()
    try:
        runtime = Runtime(
            make_settings(cpu_scale_interval_s=60), store, MemoryBus(), FakeClock(), Metrics()
        )
        scaler = Scaler(runtime, pool=Pool.CPU, controller=Counting(), nudge_gap_s=0.0)
        scaler.start()
        await asyncio.sleep(0.2)  # its first step done, waiting for a nudge
        scaler.nudge()
        for _ in range(turns):
            await asyncio.sleep(0)
        stop = asyncio.create_task(scaler.stop())
        done, _ = await asyncio.wait([stop], timeout=10)  # a lost cancellation: 60 s
        assert done, "the scaler ran on after its stop"
        await stop
    finally:
        with contextlib.suppress(Exception):
            await store.close()


def test_no_wait_for_in_the_package() -> None:
    """``asyncio.wait_for`` before Python 3.12 loses a cancellation that arrives as its
    awaitable ends; ``asyncio.timeout`` does not."""
    found = [
        f"{path.relative_to(SOURCES)}:{node.lineno}"
        for path in SOURCES.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr == "wait_for"
        and isinstance(node.value, ast.Name)
        and node.value.id == "asyncio"
    ]
    assert found == []
