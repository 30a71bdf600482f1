"""The ``WorkerRegistry`` contract, run against SQLite and PostgreSQL: live workers with
their counters, and the figures the scaler and the watchdog publish for the dashboard."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from dragoman.models import Pool, WorkerInfo
from dragoman.store import WorkerRegistry

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_the_worker_registry_refreshes_lists_live_ones_and_expires(
    registry: WorkerRegistry,
) -> None:
    idle = WorkerInfo("cpu-a", Pool.CPU, "pod-a", busy=False, warm_pairs=frozenset({"en-es"}))
    await registry.register_worker(idle, T0)
    await registry.register_worker(WorkerInfo("cpu-b", Pool.CPU, "pod-b", busy=True, pid=7), T0)
    await registry.register_worker(WorkerInfo("gpu-a", Pool.GPU, "pod-c", busy=False), T0)
    later = T0 + timedelta(seconds=10)
    await registry.register_worker(
        WorkerInfo("cpu-a", Pool.CPU, "pod-a", busy=True, warm_pairs=frozenset({"en-es", "fr-es"})),
        later,
    )
    live = await registry.live_workers(Pool.CPU, T0)
    assert [(w.id, w.host, w.busy, w.pid) for w in live] == [
        ("cpu-a", "pod-a", True, None),
        ("cpu-b", "pod-b", True, 7),
    ]
    assert live[0].warm_pairs == frozenset({"en-es", "fr-es"})
    assert live[0].last_seen == later
    assert [w.id for w in await registry.live_workers(Pool.CPU, later)] == ["cpu-a"]
    assert await registry.expire_workers(later) == 2
    await registry.forget_worker("cpu-a")
    assert await registry.live_workers(Pool.CPU, T0) == []


async def test_a_workers_counters_are_kept_with_its_row(registry: WorkerRegistry) -> None:
    worker = WorkerInfo("cpu-a", Pool.CPU, "pod-a", busy=True)
    await registry.register_worker(worker, T0)
    counted = replace(worker, segments_translated=5_000_000_000, batches=3, batch_segments=700)
    await registry.register_worker(counted, T0 + timedelta(seconds=1))
    [live] = await registry.live_workers(Pool.CPU, T0)
    assert (live.segments_translated, live.batches, live.batch_segments) == (5_000_000_000, 3, 700)
    await registry.register_worker(WorkerInfo("cpu-b", Pool.CPU, "pod-b", busy=False), T0)
    fresh = [w for w in await registry.live_workers(Pool.CPU, T0) if w.id == "cpu-b"]
    assert (fresh[0].segments_translated, fresh[0].batches, fresh[0].batch_segments) == (0, 0, 0)


async def test_published_figures_replace_earlier_ones_per_pool(registry: WorkerRegistry) -> None:
    assert await registry.pool_figures(Pool.CPU) == {}
    await registry.publish_figures(Pool.CPU, {"workers_desired": 2, "workers_current": 1}, T0)
    await registry.publish_figures(Pool.GPU, {"routed_warm": 4, "routed_total": 5}, T0)
    later = T0 + timedelta(seconds=5)
    await registry.publish_figures(Pool.CPU, {"workers_current": 2}, later)
    assert await registry.pool_figures(Pool.CPU) == {
        "workers_desired": (2.0, T0),
        "workers_current": (2.0, later),
    }
    assert await registry.pool_figures(Pool.GPU) == {
        "routed_warm": (4.0, T0),
        "routed_total": (5.0, T0),
    }
    await registry.publish_figures(Pool.GPU, {}, later)  # nothing to say: nothing written
    assert (await registry.pool_figures(Pool.GPU))["routed_total"] == (5.0, T0)
