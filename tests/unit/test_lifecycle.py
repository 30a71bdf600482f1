"""Dispatch, capacity, retries and fencing, on the real store and bus with a fake clock; and
stops that land while store writes are in flight."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest

from dragoman.engines import Engines, Pair
from dragoman.errors import QuotaExceeded
from dragoman.messages import Attempt
from dragoman.models import Document, Job, JobOptions, JobStatus, Pool, Priority, Usage
from dragoman.runtime import Runtime
from dragoman.services import EmbeddedService
from dragoman.settings import Settings
from dragoman.store.sql import SqlJobStore
from dragoman.usage import UsageMeter, period_of
from dragoman.usage.store import SqlUsage
from dragoman.worker import registration
from dragoman.worker.registration import Registration
from tests.attempts import mark_submitted, results
from tests.conftest import FakeClock, ScriptedEngine, a_worker, wait_until
from tests.contract.conftest import (
    POSTGRES_ADMIN_URL,
    drop_postgres_database,
    fresh_postgres_database,
)

PAIR = Pair("en", "es")


@pytest.fixture
async def service(
    make_settings: Any, clock: FakeClock, scripted_engine: ScriptedEngine
) -> AsyncIterator[EmbeddedService]:
    settings = make_settings(cpu_max_workers=2, heartbeat_timeout_s=30, max_attempts=2)
    svc = EmbeddedService(settings, engines=Engines([scripted_engine]), clock=clock)
    await svc.start()
    yield svc
    await svc.stop()


async def submit(
    service: EmbeddedService, *segments: str, priority: Priority = Priority.NORMAL
) -> str:
    documents = [Document("d", list(segments))]
    job = await service.manager.submit(None, PAIR, documents, JobOptions(priority=priority))
    return job.id


async def status_of(service: EmbeddedService, job_id: str) -> JobStatus:
    job = await service.store.get(job_id)
    assert job is not None
    return job.status


async def reaches(service: EmbeddedService, job_id: str, status: JobStatus) -> None:
    async def check() -> bool:
        return await status_of(service, job_id) is status

    await wait_until(check)


async def test_a_job_runs_to_success_with_every_segment_translated(
    service: EmbeddedService,
) -> None:
    job_id = await submit(service, "hello", "world")
    await reaches(service, job_id, JobStatus.SUCCEEDED)
    assert await results(service.store, job_id) == [("d", ["HELLO", "WORLD"])]
    job = await service.store.get(job_id)
    assert job is not None and job.segments_done == 2 and job.attempts == 1


async def test_in_flight_jobs_never_exceed_the_pools_max_workers(
    service: EmbeddedService, scripted_engine: ScriptedEngine
) -> None:
    scripted_engine.release.clear()
    ids = [await submit(service, f"s{i}") for i in range(5)]
    await asyncio.sleep(0.2)
    counts = await service.store.counts()
    assert counts[JobStatus.SUBMITTED] + counts[JobStatus.RUNNING] == 2
    assert counts[JobStatus.QUEUED] == 3
    scripted_engine.release.set()
    for job_id in ids:
        await reaches(service, job_id, JobStatus.SUCCEEDED)


async def test_cancelling_a_running_job_stops_its_worker_within_a_heartbeat(
    service: EmbeddedService, scripted_engine: ScriptedEngine
) -> None:
    scripted_engine.release.clear()
    job_id = await submit(service, "slow")
    await reaches(service, job_id, JobStatus.RUNNING)
    await service.manager.cancel(job_id, None)

    async def worker_free() -> bool:
        return all(worker.busy_with is None for worker in service.workers)

    await wait_until(worker_free, timeout_s=2)
    assert await status_of(service, job_id) is JobStatus.CANCELLED
    assert await results(service.store, job_id) == [("d", [None])]


async def test_a_cancelled_queued_job_is_never_dispatched(
    service: EmbeddedService, scripted_engine: ScriptedEngine
) -> None:
    scripted_engine.release.clear()
    blockers = [await submit(service, "a"), await submit(service, "b")]
    queued = await submit(service, "never")
    await service.manager.cancel(queued, None)
    scripted_engine.release.set()
    for job_id in blockers:
        await reaches(service, job_id, JobStatus.SUCCEEDED)
    job = await service.store.get(queued)
    assert job is not None and job.status is JobStatus.CANCELLED and job.attempts == 0


async def test_an_engine_failure_is_retried_then_fails_with_a_reason(
    service: EmbeddedService,
) -> None:
    job_id = await submit(service, "<explode>")
    await reaches(service, job_id, JobStatus.FAILED)
    job = await service.store.get(job_id)
    assert job is not None and job.attempts == 2
    assert job.error is not None and job.error.code == "engine_error"
    assert "2 attempts" in job.error.message


async def test_silence_beyond_the_heartbeat_timeout_retries_the_job(
    service: EmbeddedService, scripted_engine: ScriptedEngine, clock: FakeClock
) -> None:
    scripted_engine.release.clear()
    job_id = await submit(service, "stuck")
    await reaches(service, job_id, JobStatus.RUNNING)
    clock.advance(31)
    await service.watchdog.sweep()

    async def retried() -> bool:
        job = await service.store.get(job_id)
        return job is not None and job.attempts == 2

    await wait_until(retried)
    scripted_engine.release.set()
    await reaches(service, job_id, JobStatus.SUCCEEDED)
    assert await results(service.store, job_id) == [("d", ["STUCK"])]


async def test_silence_on_the_last_attempt_fails_the_job_with_a_reason(
    service: EmbeddedService, scripted_engine: ScriptedEngine, clock: FakeClock
) -> None:
    scripted_engine.release.clear()
    job_id = await submit(service, "stuck")
    for attempt in (1, 2):
        await reaches(service, job_id, JobStatus.RUNNING)
        job = await service.store.get(job_id)
        assert job is not None and job.attempts == attempt
        clock.advance(31)
        await service.watchdog.sweep()
    await reaches(service, job_id, JobStatus.FAILED)
    job = await service.store.get(job_id)
    assert job is not None and job.error is not None
    assert job.error.code == "heartbeat_timeout"


async def test_the_report_of_a_stale_attempt_is_ignored(service: EmbeddedService) -> None:
    job_id = await submit(service, "x")
    await reaches(service, job_id, JobStatus.SUCCEEDED)
    await service.watchdog.handle(
        {"type": "done", "job_id": job_id, "attempt": 7, "status": "failed"}
    )
    assert await status_of(service, job_id) is JobStatus.SUCCEEDED


async def test_high_priority_jobs_overtake_waiting_normal_ones(
    make_settings: Any, clock: FakeClock, scripted_engine: ScriptedEngine
) -> None:
    settings = make_settings(cpu_max_workers=1, batch_jobs=1)
    service = EmbeddedService(settings, engines=Engines([scripted_engine]), clock=clock)
    await service.start()
    try:
        scripted_engine.release.clear()
        ids = [await submit(service, name) for name in ("busy", "normal-1", "normal-2")]
        ids.append(await submit(service, "urgent", priority=Priority.HIGH))
        scripted_engine.release.set()
        for job_id in ids:
            await reaches(service, job_id, JobStatus.SUCCEEDED)
    finally:
        await service.stop()
    order = [call[0] for call in scripted_engine.calls]
    assert order == ["busy", "urgent", "normal-1", "normal-2"]


def other_writer(settings: Settings) -> sqlite3.Connection:
    """Another process's writer, in effect: it holds the SQLite file's write lock."""
    conn = sqlite3.connect(settings.data_dir / "dragoman.db", isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


@pytest.fixture
def adding(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Set when a usage flush reaches the ledger (the real one, watched)."""
    reached = asyncio.Event()
    add = SqlUsage.add_usage

    async def watched(self: SqlUsage, increments: Sequence[tuple[str, str, int, int]]) -> None:
        reached.set()
        await add(self, increments)

    monkeypatch.setattr(SqlUsage, "add_usage", watched)
    return reached


async def test_stopping_the_usage_meter_finishes_the_flush_in_flight(
    make_settings: Any, clock: FakeClock, adding: asyncio.Event
) -> None:
    settings = make_settings(usage_flush_s=0.01)
    store = SqlJobStore(settings.resolved_database_url)
    await store.open()
    meter = UsageMeter(Runtime.from_settings(settings, store=store, clock=clock))
    meter.start()
    writer = other_writer(settings)
    try:
        await meter.charge("acme", 120)
        await adding.wait()  # the flush waits for the other writer
        stopping = asyncio.create_task(meter.stop())
        await asyncio.sleep(0.1)
        assert not stopping.done()
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    await stopping
    ledger = SqlUsage(store.database)
    assert await ledger.get_usage("acme", period_of(clock.now())[0]) == Usage(120, 1)
    await store.close()


async def test_a_charge_during_a_flush_still_counts_what_is_being_flushed(
    make_settings: Any, clock: FakeClock, adding: asyncio.Event
) -> None:
    # The quota is 200: 120 on their way to the store, then 100 more must be refused.
    settings = make_settings(usage_flush_s=3600, monthly_characters=200)
    store = SqlJobStore(settings.resolved_database_url)
    await store.open()
    meter = UsageMeter(Runtime.from_settings(settings, store=store, clock=clock))
    await meter.charge("acme", 10)  # reads the store's count (0) into the meter's cache
    await meter.charge("acme", 110)
    writer = other_writer(settings)
    try:
        flushing = asyncio.create_task(meter.flush())
        await adding.wait()  # the flush waits for the other writer
        with pytest.raises(QuotaExceeded):
            await meter.charge("acme", 100)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    await flushing
    with pytest.raises(QuotaExceeded):
        await meter.charge("acme", 100)
    await meter.charge("acme", 80)
    assert (await meter.report("acme")).characters == 200
    await meter.stop()
    await store.close()


async def test_a_shutdown_while_a_failed_attempt_winds_down_stops_the_worker(
    make_settings: Any, clock: FakeClock, scripted_engine: ScriptedEngine
) -> None:
    settings = make_settings()
    runtime = Runtime.from_settings(settings, clock=clock)
    await runtime.open()
    job = Job("j1", None, "en", "es", "scripted", Pool.CPU, 1, 1)
    await runtime.store.create(job, [Document("d", ["<explode>"])])
    assert await mark_submitted(runtime.store, job.id, clock.now()) is not None
    worker = a_worker(runtime, name="w", pool=Pool.CPU, engines=Engines([scripted_engine]))
    scripted_engine.release.clear()
    working = asyncio.create_task(worker.process([Attempt(job.id, 1)]))
    await reaches_in(runtime, job.id, JobStatus.RUNNING)
    writer = other_writer(settings)
    try:
        await asyncio.sleep(0.3)  # the next heartbeat is now a write waiting for the lock
        scripted_engine.release.set()  # the engine fails: the attempt ends, its beat not yet
        await asyncio.sleep(0.1)
        working.cancel()  # the shutdown lands while the attempt waits for its heartbeat
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(working, 10)
    await runtime.close()


async def reaches_in(runtime: Runtime, job_id: str, status: JobStatus) -> None:
    async def check() -> bool:
        job = await runtime.store.get(job_id)
        return job is not None and job.status is status

    await wait_until(check)


@dataclass
class IdleWorker:
    name: str
    pool: Pool = Pool.CPU
    idle: bool = True


async def test_a_worker_stop_waits_a_bounded_time_for_a_store_that_does_not_answer(
    make_settings: Any, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registration, "FORGET_TIMEOUT_S", 0.5)
    url, name = await fresh_postgres_database()
    holder = await asyncpg.connect(POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}")
    runtime = Runtime.from_settings(make_settings(database_url=url), clock=clock)
    try:
        await runtime.open(bus=False)
        registered = Registration(IdleWorker("w"), runtime, warm_models=frozenset)
        registered.start()

        async def listed() -> bool:
            return bool(await runtime.store.live_workers(Pool.CPU, clock.now()))

        await wait_until(listed)
        async with holder.transaction():
            # Another session holds the worker's row: the removal cannot get it.
            await holder.execute("SELECT 1 FROM workers WHERE id = 'w' FOR UPDATE")
            began = time.monotonic()
            await asyncio.wait_for(registered.stop(), 10)
            assert time.monotonic() - began < 5
        assert [w.id for w in await runtime.store.live_workers(Pool.CPU, clock.now())] == ["w"]
    finally:
        await holder.close()
        await runtime.close(bus=False)
        await drop_postgres_database(name)
