"""The scaler publishes the pool's sizes for the dashboard: at a change, and at least once
a scale interval (so their age says the scaler is alive), not at every nudge."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from dragoman.bus.memory import MemoryBus
from dragoman.metrics import Metrics
from dragoman.models import Pool, WorkerInfo
from dragoman.runtime import Runtime
from dragoman.scaling.scaler import Scaler
from dragoman.store import JobStore
from dragoman.store.sql import SqlJobStore
from tests.conftest import FakeClock


class Counting:
    """A controller that only counts."""

    def __init__(self) -> None:
        self.size = 0

    async def replicas(self) -> int:
        return self.size

    async def scale(self, replicas: int, remove: Sequence[WorkerInfo] = ()) -> None:
        self.size = replicas

    async def close(self) -> None:
        return None


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[JobStore]:
    opened = SqlJobStore(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    await opened.open()
    yield opened
    await opened.close()


async def test_sizes_are_published_at_a_change_and_once_an_interval(
    store: JobStore, make_settings: Any, clock: FakeClock
) -> None:
    settings = make_settings(cpu_standby_workers=2, cpu_scale_interval_s=5)
    runtime = Runtime(settings, store, MemoryBus(), clock, Metrics())
    scaler = Scaler(runtime, pool=Pool.CPU, controller=Counting())
    await scaler.step()
    published = await store.pool_figures(Pool.CPU)
    # What the backend runs after the step, not before it.
    assert published == {
        "workers_desired": (2.0, clock.now()),
        "workers_current": (2.0, clock.now()),
    }
    first = clock.now()
    clock.advance(1)
    await scaler.step()  # a nudge: nothing changed, nothing written
    assert (await store.pool_figures(Pool.CPU))["workers_current"] == (2.0, first)
    clock.advance(5)
    await scaler.step()
    assert (await store.pool_figures(Pool.CPU))["workers_current"] == (2.0, clock.now())


async def test_a_burst_of_nudges_is_decided_on_once_and_a_lone_nudge_at_once(
    store: JobStore, make_settings: Any, clock: FakeClock
) -> None:
    settings = make_settings(cpu_scale_interval_s=60)
    runtime = Runtime(settings, store, MemoryBus(), clock, Metrics())
    scaler = Scaler(runtime, pool=Pool.CPU, controller=Counting(), nudge_gap_s=1.0)
    steps: asyncio.Queue[float] = asyncio.Queue()
    step = scaler.step
    now = asyncio.get_running_loop().time

    async def counted() -> Any:
        steps.put_nowait(now())
        return await step()

    scaler.step = counted  # type: ignore[method-assign]
    scaler.start()
    try:
        first = await asyncio.wait_for(steps.get(), 5)
        for _ in range(20):  # a burst of dispatches, each nudging
            scaler.nudge()
            await asyncio.sleep(0.005)
        second = await asyncio.wait_for(steps.get(), 5)
        assert second - first >= 1.0  # the burst waited for the gap's end...
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(steps.get(), 0.3)  # ...and was decided on once
        await asyncio.sleep(1.0)  # quiet for longer than the gap
        nudged = now()
        scaler.nudge()
        third = await asyncio.wait_for(steps.get(), 5)
        assert third - nudged < 0.5  # at once, not after another gap or the interval
    finally:
        await scaler.stop()
