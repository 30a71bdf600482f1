"""Batching across jobs, sharding, model-aware routing and the GPU fallback, on the real
store and bus in one process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from dragoman.bus.memory import MemoryBus
from dragoman.engines import Engines, Pair
from dragoman.errors import NotFound
from dragoman.jobs import LocalIntake
from dragoman.messages import Done, Outcomes, work_queue, worker_queue
from dragoman.metrics import Metrics
from dragoman.models import Document, Job, JobOptions, JobStatus, Output, Pool, WorkerInfo
from dragoman.queue import BatchRequestsQueue
from dragoman.runtime import Runtime
from dragoman.services import EmbeddedService
from dragoman.store.sql import SqlJobStore
from dragoman.watchdog import Watchdog
from dragoman.worker.chunks import translate_chunk
from tests.attempts import claim, mark_submitted, results
from tests.conftest import FakeClock, ScriptedEngine, a_manager, stop_service, wait_until

PAIR = Pair("en", "es")


@pytest.fixture
async def make_service(make_settings: Any, clock: FakeClock) -> AsyncIterator[Any]:
    started: list[EmbeddedService] = []

    async def make(engine: ScriptedEngine, **overrides: Any) -> EmbeddedService:
        settings = make_settings(**{"cpu_max_workers": 1, "heartbeat_timeout_s": 30, **overrides})
        svc = EmbeddedService(settings, engines=Engines([engine]), clock=clock)
        await svc.start()
        started.append(svc)
        return svc

    yield make
    for svc in started:
        await stop_service(svc)


async def submit(service: EmbeddedService, *segments: str) -> str:
    job = await service.manager.submit(None, PAIR, [Document("d", list(segments))], JobOptions())
    return job.id


async def settle(service: EmbeddedService, *job_ids: str) -> dict[str, JobStatus]:
    async def finished() -> bool:
        jobs = [await service.store.get(job_id) for job_id in job_ids]
        return all(job is not None and job.status.finished for job in jobs)

    await wait_until(finished)
    out = {}
    for job_id in job_ids:
        job = await service.store.get(job_id)
        assert job is not None
        out[job_id] = job.status
    return out


async def test_small_waiting_jobs_of_one_pair_share_one_engine_batch(
    make_service: Any,
) -> None:
    engine = ScriptedEngine()
    service = await make_service(engine, batch_jobs=8)
    engine.release.clear()
    blocker = await submit(service, "first")
    await wait_until(lambda: _true(len(engine.calls) == 1))
    waiting = [await submit(service, f"job{i} a", f"job{i} b") for i in range(5)]
    engine.release.set()
    statuses = await settle(service, blocker, *waiting)
    assert set(statuses.values()) == {JobStatus.SUCCEEDED}
    # One engine call for the five waiting jobs, and each job kept its own results.
    assert len(engine.calls) == 2
    assert sorted(engine.calls[1]) == sorted(f"job{i} {x}" for i in range(5) for x in "ab")
    for i, job_id in enumerate(waiting):
        assert await results(service.store, job_id) == [("d", [f"JOB{i} A", f"JOB{i} B"])]
        job = await service.store.get(job_id)
        assert job is not None and job.segments_done == 2 and job.attempts == 1


async def test_cancelling_one_job_of_a_batch_leaves_its_mates_running(make_service: Any) -> None:
    engine = ScriptedEngine()
    service = await make_service(engine, batch_jobs=8)
    engine.release.clear()
    blocker = await submit(service, "first")
    await wait_until(lambda: _true(len(engine.calls) == 1))
    mates = [await submit(service, f"m{i}") for i in range(3)]
    engine.delay_s = 0.5
    engine.release.set()
    await wait_until(lambda: _true(len(engine.calls) == 2))
    await service.manager.cancel(mates[1], None)
    statuses = await settle(service, blocker, *mates)
    assert statuses[mates[0]] is JobStatus.SUCCEEDED
    assert statuses[mates[1]] is JobStatus.CANCELLED
    assert statuses[mates[2]] is JobStatus.SUCCEEDED
    assert await results(service.store, mates[1]) == [("d", [None])]
    assert await results(service.store, mates[2]) == [("d", ["M2"])]


async def test_a_failing_job_fails_alone_and_its_batch_mates_succeed_on_retry(
    make_service: Any,
) -> None:
    engine = ScriptedEngine()
    service = await make_service(engine, batch_jobs=8, max_attempts=2)
    engine.release.clear()
    blocker = await submit(service, "first")
    await wait_until(lambda: _true(len(engine.calls) == 1))
    good1 = await submit(service, "fine")
    bad = await submit(service, "<explode>")
    good2 = await submit(service, "also fine")
    engine.release.set()
    statuses = await settle(service, blocker, good1, bad, good2)
    assert statuses[good1] is statuses[good2] is JobStatus.SUCCEEDED
    assert statuses[bad] is JobStatus.FAILED
    # The batch failed once; on retry every job ran alone.
    assert ["<explode>"] in engine.calls
    job = await service.store.get(bad)
    assert (
        job is not None and job.error is not None and "scripted engine failure" in job.error.message
    )


async def test_a_job_above_shard_segments_runs_as_shards_and_merges_in_order(
    make_service: Any,
) -> None:
    engine = ScriptedEngine()
    service = await make_service(engine, cpu_max_workers=2, shard_segments=3, batch_jobs=1)
    segments = [f"s{i}" for i in range(10)]
    job_id = await submit(service, *segments)
    assert (await settle(service, job_id))[job_id] is JobStatus.SUCCEEDED
    assert await results(service.store, job_id) == [("d", [s.upper() for s in segments])]
    job = await service.store.get(job_id)
    assert job is not None and job.shards == 4 and job.segments_done == 10
    listed, _ = await service.store.list_jobs(tenant=None, status=None, limit=10, cursor=None)
    assert [j.id for j in listed] == [job_id]
    # Four engine calls, one per shard, each of its own range.
    assert sorted(len(call) for call in engine.calls) == [2, 2, 3, 3]
    shards = [j for j in await service.store.in_status([JobStatus.SUCCEEDED]) if j.parent_id]
    assert len(shards) == 4
    with pytest.raises(NotFound):
        await service.manager.get(shards[0].id, None)


async def test_cancelling_a_sharded_job_stops_every_shard(make_service: Any) -> None:
    engine = ScriptedEngine()
    service = await make_service(engine, cpu_max_workers=2, shard_segments=2)
    engine.release.clear()
    job_id = await submit(service, *[f"s{i}" for i in range(6)])
    await wait_until(lambda: _true(len(engine.calls) == 2))
    await service.manager.cancel(job_id, None)
    engine.release.set()
    assert (await settle(service, job_id))[job_id] is JobStatus.CANCELLED
    await asyncio.sleep(0.3)
    assert len(engine.calls) == 2  # the third shard never ran
    counts = await service.store.counts()
    assert counts.get(JobStatus.RUNNING, 0) == counts.get(JobStatus.QUEUED, 0) == 0


async def test_gpu_jobs_fall_back_to_the_cpu_pool_when_no_gpu_worker_is_there(
    make_service: Any,
) -> None:
    engine = ScriptedEngine(gpu_capable=True)
    service = await make_service(
        engine, gpu_max_workers=1, gpu_min_workers=0, gpu_threshold_segments=2, gpu_fallback_s=0
    )
    job_id = await submit(service, "a", "b", "c")
    assert (await settle(service, job_id))[job_id] is JobStatus.SUCCEEDED
    job = await service.store.get(job_id)
    assert job is not None and job.pool is Pool.CPU


# -- model-aware routing, on the watchdog itself -----------------------------------------


@pytest.fixture
async def routing(make_settings: Any, clock: FakeClock) -> AsyncIterator[Any]:
    settings = make_settings(cpu_max_workers=4, batch_jobs=1)
    store = SqlJobStore("sqlite+aiosqlite:///:memory:")
    await store.open()
    bus = MemoryBus()
    queue = BatchRequestsQueue()
    metrics = Metrics()
    runtime = Runtime(settings, store, bus, clock, metrics)
    watchdog = Watchdog(runtime, queue=queue)
    manager = a_manager(
        runtime,
        Engines([ScriptedEngine([PAIR, Pair("fr", "es")])]),
        LocalIntake(queue, lambda: None),
    )
    consumers: list[Any] = []

    def listen(worker: str) -> Any:
        consumer = bus.consume(work_queue(Pool.CPU), private=worker_queue(worker))
        consumers.append(consumer)
        return asyncio.ensure_future(anext(consumer))

    yield store, bus, watchdog, manager, metrics, clock, listen
    for consumer in consumers:
        await consumer.aclose()
    await store.close()


async def register(store: SqlJobStore, clock: FakeClock, worker: str, **info: Any) -> None:
    await store.register_worker(WorkerInfo(worker, Pool.CPU, "host", **info), clock.now())


async def test_dispatch_prefers_an_idle_worker_with_the_model_warm(routing: Any) -> None:
    store, bus, watchdog, manager, metrics, clock, listen = routing
    await register(store, clock, "cold", busy=False, warm_pairs=frozenset({"scripted:fr-es"}))
    await register(store, clock, "busy", busy=True, warm_pairs=frozenset({"scripted:en-es"}))
    await register(store, clock, "warm", busy=False, warm_pairs=frozenset({"scripted:en-es"}))
    warm = listen("warm")
    await asyncio.sleep(0)
    await watchdog.sweep()  # reads the registry
    job = await manager.submit(None, PAIR, [Document("d", ["x"])], JobOptions())
    assert await watchdog.dispatch() == 1
    delivery = await asyncio.wait_for(warm, 1)
    assert delivery.body == {"job_id": job.id, "attempt": 1}
    assert bus.depth(work_queue(Pool.CPU)) == 0
    assert watchdog.hit_ratio(Pool.CPU) == 1.0

    # The warm worker now counts as busy until it registers again: the next job goes to
    # the pool's queue, and the hit rate says so.
    second = await manager.submit(None, PAIR, [Document("d", ["y"])], JobOptions())
    assert await watchdog.dispatch() == 1
    assert bus.depth(work_queue(Pool.CPU)) == 1
    assert second.id in str(bus.queue(work_queue(Pool.CPU))._queue)  # type: ignore[attr-defined]
    assert watchdog.hit_ratio(Pool.CPU) == 0.5
    text = _metrics_text(metrics)
    assert 'dragoman_routed_total{outcome="warm",pool="cpu"} 1.0' in text
    assert 'dragoman_routing_hit_ratio{pool="cpu"} 0.5' in text


async def test_after_work_goes_to_the_pool_queue_no_idle_worker_is_sent_more_directly(
    routing: Any,
) -> None:
    # Nobody has fr-es warm: that job goes to the pool's queue, where the idle warm worker
    # may be taking it. Routing en-es work to that worker's own queue could leave it
    # waiting behind the first job, so it goes to the pool's queue too.
    store, bus, watchdog, manager, _, clock, _ = routing
    # The worker's own queue (it takes nothing from the CPU pool's queue in this test).
    consumer = bus.consume(work_queue(Pool.GPU), private=worker_queue("warm"))
    private = asyncio.ensure_future(anext(consumer))
    await asyncio.sleep(0)
    await register(store, clock, "warm", busy=False, warm_pairs=frozenset({"scripted:en-es"}))
    await watchdog.sweep()
    fr = Pair("fr", "es")
    await manager.submit(None, fr, [Document("d", ["x"])], JobOptions())
    assert await watchdog.dispatch() == 1
    await manager.submit(None, PAIR, [Document("d", ["y"])], JobOptions())
    assert await watchdog.dispatch() == 1
    assert bus.depth(work_queue(Pool.CPU)) == 2
    assert not private.done()

    # Once the worker registers again (idle), it is known to be idle and gets work directly.
    clock.advance(1)
    await register(store, clock, "warm", busy=False, warm_pairs=frozenset({"scripted:en-es"}))
    await watchdog.sweep()
    third = await manager.submit(None, PAIR, [Document("d", ["z"])], JobOptions())
    assert await watchdog.dispatch() == 1
    assert (await asyncio.wait_for(private, 1)).body == {"job_id": third.id, "attempt": 1}
    await consumer.aclose()


async def test_a_warm_worker_that_went_away_gets_nothing_and_the_pool_queue_does(
    routing: Any,
) -> None:
    store, bus, watchdog, manager, _, clock, _ = routing
    await register(store, clock, "gone", busy=False, warm_pairs=frozenset({"scripted:en-es"}))
    await watchdog.sweep()  # the registry still lists it; its private queue is gone
    await manager.submit(None, PAIR, [Document("d", ["x"])], JobOptions())
    assert await watchdog.dispatch() == 1
    assert bus.depth(work_queue(Pool.CPU)) == 1
    assert watchdog.hit_ratio(Pool.CPU) == 0.0


def _metrics_text(metrics: Metrics) -> str:
    from prometheus_client import generate_latest

    return generate_latest(metrics.registry).decode()


async def _true(value: bool) -> bool:
    return value


async def test_republished_work_goes_to_the_pool_queue_and_is_not_counted_as_routed(
    routing: Any,
) -> None:
    store, bus, watchdog, manager, _, clock, listen = routing
    await register(store, clock, "warm", busy=False, warm_pairs=frozenset({"scripted:en-es"}))
    warm = listen("warm")
    await asyncio.sleep(0)
    await watchdog.sweep()
    job = await manager.submit(None, PAIR, [Document("d", ["x"])], JobOptions())
    submitted = await mark_submitted(store, job.id, clock.now())
    assert submitted is not None
    warm.cancel()  # the worker takes nothing now: what reaches the pool's queue stays there
    assert await watchdog.republish([submitted]) == 1
    assert bus.depth(work_queue(Pool.CPU)) == 1
    assert bus.depth(worker_queue("warm")) == 0
    assert watchdog.hit_ratio(Pool.CPU) is None


async def test_a_text_repeated_in_a_batch_is_translated_once_for_every_job(
    make_service: Any,
) -> None:
    engine = ScriptedEngine()
    service = await make_service(engine, batch_jobs=8)
    engine.release.clear()
    blocker = await submit(service, "first")
    await wait_until(lambda: _true(len(engine.calls) == 1))
    mates = [
        await submit(service, "Save the file.", f"line {i}", "Save the file.") for i in range(3)
    ]
    engine.release.set()
    statuses = await settle(service, blocker, *mates)
    assert set(statuses.values()) == {JobStatus.SUCCEEDED}
    assert sorted(engine.calls[1]) == ["Save the file.", "line 0", "line 1", "line 2"]
    for i, job_id in enumerate(mates):
        assert await results(service.store, job_id) == [
            ("d", ["SAVE THE FILE.", f"LINE {i}", "SAVE THE FILE."])
        ]
        job = await service.store.get(job_id)
        assert job is not None and job.segments_done == 3


async def test_text_with_inline_codes_and_plain_text_are_translated_apart() -> None:
    engine = ScriptedEngine()
    plain, marked = a_job("plain"), a_job("marked")
    marked.options = JobOptions(markup=True)

    async def no_terms(engine: str, pair: Pair, items: Any) -> list[Output]:
        raise AssertionError("no job here keeps a glossary")

    out = await translate_chunk(
        Engines([engine]), no_terms, "scripted", PAIR, [(plain, "x"), (marked, "x"), (plain, "x")]
    )

    assert out == [Output("X"), Output("X"), Output("X")]
    assert sorted(engine.calls) == [["x"], ["x"]]


async def test_a_text_repeated_under_two_glossaries_is_translated_for_each() -> None:
    engine = ScriptedEngine()
    first, second = a_job("first"), a_job("second")
    first.options, second.options = JobOptions(glossary="g1"), JobOptions(glossary="g2")
    seen: list[list[tuple[str | None, str]]] = []

    async def with_terms(engine: str, pair: Pair, items: Any) -> list[Output]:
        seen.append([(job.options.glossary, text) for job, text in items])
        return [Output(f"{job.options.glossary}:{text}", 0.5, True) for job, text in items]

    out = await translate_chunk(
        Engines([engine]),
        with_terms,
        "scripted",
        PAIR,
        [(first, "x"), (second, "x"), (first, "x"), (second, "y")],
    )

    assert [o.text for o in out] == ["g1:x", "g2:x", "g1:x", "g2:y"]
    assert all(o == (o.text, 0.5, True) for o in out)
    assert seen == [[("g1", "x"), ("g2", "x"), ("g2", "y")]]


def a_job(job_id: str) -> Job:
    return Job(
        id=job_id,
        tenant=None,
        source_lang="en",
        target_lang="es",
        engine="scripted",
        pool=Pool.CPU,
        documents=1,
        segments_total=1,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


class SlowEndings(SqlJobStore):
    """The real store, whose job endings wait until told to commit."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.ending, self.commit = asyncio.Event(), asyncio.Event()

    async def finish_many(self, ends: Any, now: datetime) -> set[str]:
        self.ending.set()
        await self.commit.wait()
        return await super().finish_many(ends, now)


async def test_a_sweep_during_a_jobs_end_does_not_count_it_in_flight_again(
    make_settings: Any, clock: FakeClock
) -> None:
    # The worker has reported; the end is not committed yet, so the store still lists the
    # job in flight. A sweep then must not give the pool's one slot back to it: the next
    # job would wait a whole sweep for a worker that is idle.
    settings = make_settings(cpu_max_workers=1, batch_jobs=1)
    store = SlowEndings("sqlite+aiosqlite:///:memory:")
    await store.open()
    queue = BatchRequestsQueue()
    runtime = Runtime(settings, store, MemoryBus(), clock, Metrics())
    watchdog = Watchdog(runtime, queue=queue)
    manager = a_manager(runtime, Engines([ScriptedEngine()]), LocalIntake(queue, lambda: None))
    try:
        first = await manager.submit(None, PAIR, [Document("d", ["x"])], JobOptions())
        assert await watchdog.dispatch() == 1
        assert await claim(store, first.id, 1, clock.now())
        second = await manager.submit(None, PAIR, [Document("d", ["y"])], JobOptions())
        assert await watchdog.dispatch() == 0  # the one worker is busy

        done = Outcomes((Done(first.id, 1, JobStatus.SUCCEEDED),)).to_body()
        ending = asyncio.create_task(watchdog.handle(done))
        await store.ending.wait()
        await watchdog.sweep()  # the store still says the first job runs
        assert watchdog.in_flight(Pool.CPU) == 0
        assert await watchdog.dispatch() == 1
        store.commit.set()
        await ending
        job = await store.get(second.id)
        assert job is not None and job.status is JobStatus.SUBMITTED
    finally:
        store.commit.set()
        await store.close()
