"""Long polls: one store read per interval for every waiter, each woken when its job moves."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from dragoman.jobs.waits import JobWaits
from dragoman.models import Job, JobStatus, Pool


def a_job(job_id: str, status: JobStatus = JobStatus.RUNNING, done: int = 0) -> Job:
    return Job(
        id=job_id,
        tenant=None,
        source_lang="en",
        target_lang="es",
        engine="apertium",
        pool=Pool.CPU,
        documents=1,
        segments_total=10,
        status=status,
        segments_done=done,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


class Progress:
    """The store's side: what each job is at, and how many reads were made."""

    def __init__(self) -> None:
        self.now: dict[str, tuple[JobStatus, int]] = {}
        self.reads = 0

    async def read(self, job_ids: Sequence[str]) -> dict[str, tuple[JobStatus, int]]:
        self.reads += 1
        return {job_id: self.now[job_id] for job_id in job_ids if job_id in self.now}


async def test_many_waiters_share_one_read_per_interval_and_each_wakes_when_its_job_moves() -> None:
    store = Progress()
    jobs = [a_job(f"j{n}") for n in range(200)]
    for job in jobs:
        store.now[job.id] = (job.status, job.segments_done)
    waits = JobWaits(store.read, interval_s=0.02)
    tasks = [asyncio.create_task(waits.until_moved(job, 30)) for job in jobs]
    await asyncio.sleep(0.2)
    assert waits.waiting() == 200 and not any(task.done() for task in tasks)
    assert store.reads <= 12  # about one per interval, for all 200 waiters
    store.now["j7"] = (JobStatus.RUNNING, 4)  # progress
    store.now["j9"] = (JobStatus.SUCCEEDED, 10)  # the end
    del store.now["j11"]  # purged
    await asyncio.wait_for(asyncio.gather(tasks[7], tasks[9], tasks[11]), 1)
    assert sum(task.done() for task in tasks) == 3
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert waits.waiting() == 0
    await asyncio.sleep(0.1)
    reads = store.reads
    await asyncio.sleep(0.1)
    assert store.reads == reads  # nobody waits: nothing is read
    await waits.close()


async def test_a_wait_ends_after_its_time_and_a_finished_job_is_not_waited_on() -> None:
    store = Progress()
    job = a_job("j1", JobStatus.QUEUED)
    store.now["j1"] = (JobStatus.QUEUED, 0)
    waits = JobWaits(store.read, interval_s=0.01)
    started = time.monotonic()
    await waits.until_moved(job, 0.2)
    assert 0.18 <= time.monotonic() - started < 1
    started = time.monotonic()
    await waits.until_moved(replace(job, status=JobStatus.FAILED), 30)
    await waits.until_moved(job, 0)
    assert time.monotonic() - started < 0.05
    await waits.close()


async def test_a_poke_reads_at_once_and_without_waiters_does_nothing() -> None:
    store = Progress()
    job = a_job("j1")
    store.now[job.id] = (job.status, job.segments_done)
    waits = JobWaits(store.read, interval_s=3600)
    waits.poke()  # nobody waits: no read, no poller
    await asyncio.sleep(0.1)
    assert store.reads == 0
    waiting = asyncio.create_task(waits.until_moved(job, 3600))
    await asyncio.sleep(0.1)
    store.now[job.id] = (JobStatus.SUCCEEDED, 10)
    waits.poke()
    async with asyncio.timeout(10):  # the interval (an hour) would be the wait without it
        await waiting
    assert store.reads == 1
    await waits.close()
