"""The store's part of the dashboard, against SQLite and PostgreSQL: workers' counters in
the registry, the figures the scaler and the watchdog publish, a job's source texts."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from dragoman.models import Document, Job, JobOptions, Pool, SourceFile, WorkerInfo
from dragoman.store import JobStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_a_workers_counters_are_kept_with_its_row(store: JobStore) -> None:
    worker = WorkerInfo("cpu-a", Pool.CPU, "pod-a", busy=True)
    await store.register_worker(worker, T0)
    counted = replace(worker, segments_translated=5_000_000_000, batches=3, batch_segments=700)
    await store.register_worker(counted, T0 + timedelta(seconds=1))
    [live] = await store.live_workers(Pool.CPU, T0)
    assert (live.segments_translated, live.batches, live.batch_segments) == (5_000_000_000, 3, 700)
    await store.register_worker(WorkerInfo("cpu-b", Pool.CPU, "pod-b", busy=False), T0)
    fresh = [w for w in await store.live_workers(Pool.CPU, T0) if w.id == "cpu-b"]
    assert (fresh[0].segments_translated, fresh[0].batches, fresh[0].batch_segments) == (0, 0, 0)


async def test_published_figures_replace_earlier_ones_per_pool(store: JobStore) -> None:
    assert await store.pool_figures(Pool.CPU) == {}
    await store.publish_figures(Pool.CPU, {"workers_desired": 2, "workers_current": 1}, T0)
    await store.publish_figures(Pool.GPU, {"routed_warm": 4, "routed_total": 5}, T0)
    later = T0 + timedelta(seconds=5)
    await store.publish_figures(Pool.CPU, {"workers_current": 2}, later)
    assert await store.pool_figures(Pool.CPU) == {
        "workers_desired": (2.0, T0),
        "workers_current": (2.0, later),
    }
    assert await store.pool_figures(Pool.GPU) == {
        "routed_warm": (4.0, T0),
        "routed_total": (5.0, T0),
    }
    await store.publish_figures(Pool.GPU, {}, later)  # nothing to say: nothing written
    assert (await store.pool_figures(Pool.GPU))["routed_total"] == (5.0, T0)


async def test_documents_give_their_sources_in_order_when_asked(store: JobStore) -> None:
    upload = SourceFile("po", b'msgid "x"\nmsgstr ""\n', (0,))
    job = Job(
        id="j1",
        tenant=None,
        source_lang="en",
        target_lang="es",
        engine="apertium",
        pool=Pool.CPU,
        documents=2,
        segments_total=3,
        created_at=T0,
        options=JobOptions(markup=True),
    )
    docs = [Document("a.txt", ["one", "two"]), Document("<b>.po", ["<g1>x</g1>"], upload)]
    await store.create(job, docs)
    found = await store.documents("j1", sources=True)
    assert [(d.name, d.format, d.sources) for d in found] == [
        ("a.txt", None, ["one", "two"]),
        ("<b>.po", "po", ["<g1>x</g1>"]),
    ]
    assert [d.sources for d in await store.documents("j1")] == [None, None]
    assert await store.documents("missing", sources=True) == []
