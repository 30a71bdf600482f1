"""A job's life one job at a time, for tests: the ``JobStore`` works on several jobs at once
(``*_many``, ``write_chunk``), the roles always so; these write one job's steps over those."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from dragoman.models import Job, JobStatus
from dragoman.store import ChunkWrite, JobStore


async def mark_submitted(store: JobStore, job_id: str, now: datetime) -> Job | None:
    """``queued`` → ``submitted``; None if the job was not queued or is a parent."""
    found = await store.mark_submitted_many([job_id], now)
    return found[0] if found else None


async def claim(store: JobStore, job_id: str, attempt: int, now: datetime) -> bool:
    """``submitted`` → ``running`` for ``attempt``; False if it cannot be claimed."""
    return bool(await store.claim_many([(job_id, attempt)], now))


async def heartbeat(store: JobStore, job_id: str, attempt: int, now: datetime) -> JobStatus | None:
    """The job's status after a heartbeat of ``attempt``; None when it is stale."""
    return (await store.heartbeat_many([(job_id, attempt)], now))[job_id]


async def write_results(
    store: JobStore,
    job_id: str,
    attempt: int,
    results: Sequence[tuple[int, str]],
    now: datetime,
) -> bool:
    """Stores translations by position; False (nothing written) when the attempt is stale."""
    return bool(await store.write_chunk([ChunkWrite(job_id, attempt, results)], now))


async def results(store: JobStore, job_id: str) -> list[tuple[str, list[str | None]]]:
    """Each document's name and its translations so far (``None`` = not yet)."""
    return [(doc.name, doc.targets) for doc in await store.documents(job_id)]
