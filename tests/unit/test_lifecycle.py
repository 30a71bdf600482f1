"""Dispatch, capacity, retries and fencing, on the real store and bus with a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dragoman.engines import Engines, Pair
from dragoman.models import Document, JobStatus, Priority
from dragoman.services import EmbeddedService
from tests.conftest import FakeClock, ScriptedEngine, wait_until

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
    job = await service.manager.submit(
        tenant=None, pair=PAIR, documents=[Document("d", list(segments))], priority=priority
    )
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
    assert await service.store.results(job_id) == [("d", ["HELLO", "WORLD"])]
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
    assert await service.store.results(job_id) == [("d", [None])]


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
    assert await service.store.results(job_id) == [("d", ["STUCK"])]


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
