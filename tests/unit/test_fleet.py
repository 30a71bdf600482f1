"""Segments per second as Prometheus takes a rate: per-worker counter deltas, a counter
that drops is a restart, a new worker counts from zero; over a store on SQLite."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dragoman.fleet import RATE_WINDOW_S, SAMPLE_INTERVAL_S, Fleet
from dragoman.models import Pool, WorkerInfo
from dragoman.store import JobStore
from dragoman.store.sql import SqlJobStore
from tests.conftest import FakeClock


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[JobStore]:
    opened = SqlJobStore(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    await opened.open()
    yield opened
    await opened.close()


@pytest.fixture
def fleet(store: JobStore, make_settings: Any, clock: FakeClock) -> Fleet:
    return Fleet(store, make_settings(worker_ttl_s=1000), clock)


async def counted(store: JobStore, clock: FakeClock, worker: str, segments: int) -> None:
    info = WorkerInfo(worker, Pool.CPU, "host", busy=True, segments_translated=segments)
    await store.register_worker(info, clock.now())


async def step(fleet: Fleet, clock: FakeClock) -> None:
    clock.advance(SAMPLE_INTERVAL_S)
    await fleet.sample()


async def test_a_rate_is_the_sum_of_the_workers_increases_over_the_time(
    fleet: Fleet, store: JobStore, clock: FakeClock
) -> None:
    await counted(store, clock, "a", 1_000)  # translated before the first sample: not a rate
    await fleet.sample()
    assert fleet.rate(Pool.CPU) == []
    await counted(store, clock, "a", 1_100)
    await counted(store, clock, "b", 50)  # new since the last sample: from zero
    await step(fleet, clock)
    [point] = fleet.rate(Pool.CPU)
    assert point.at == clock.now()
    assert point.segments_per_second == 150 / SAMPLE_INTERVAL_S
    assert all(p.segments_per_second == 0 for p in fleet.rate(Pool.GPU))


async def test_a_counter_that_drops_is_a_restart(
    fleet: Fleet, store: JobStore, clock: FakeClock
) -> None:
    await counted(store, clock, "a", 500)
    await fleet.sample()
    await counted(store, clock, "a", 30)  # restarted, then translated 30
    await step(fleet, clock)
    assert fleet.rate(Pool.CPU)[-1].segments_per_second == 30 / SAMPLE_INTERVAL_S


async def test_a_point_spans_the_rate_window(
    fleet: Fleet, store: JobStore, clock: FakeClock
) -> None:
    await counted(store, clock, "a", 0)
    await fleet.sample()
    steps = round(RATE_WINDOW_S / SAMPLE_INTERVAL_S)
    for n in range(1, steps + 3):
        await counted(store, clock, "a", 100 * n if n == 1 else 100)
        await step(fleet, clock)
    # All the work was in the first interval: the window holds it until it slides past.
    rates = [point.segments_per_second for point in fleet.rate(Pool.CPU)]
    assert rates[:steps] == [100 / (SAMPLE_INTERVAL_S * (i + 1)) for i in range(steps)]
    assert rates[steps:] == [0.0, 0.0]
