"""Where each target of a job into several languages stands: read from its shards, which
each translate part of one target's copy of the segments."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, select

from dragoman.models import Job, JobStatus, TargetProgress
from dragoman.store.tables import jobs

_SHARDS = select(
    jobs.c.parent_id,
    jobs.c.target_lang,
    jobs.c.status,
    jobs.c.segments_total,
    jobs.c.segments_done,
)


def status_of(statuses: Iterable[JobStatus]) -> JobStatus:
    """One target's status from its shards': succeeded once all are; failed or cancelled
    as soon as one is (a failure ends the job); running while some work was done or is
    being done; submitted while it waits for a worker; else queued."""
    found = set(statuses)
    for ended in (JobStatus.FAILED, JobStatus.CANCELLED):
        if ended in found:
            return ended
    if found <= {JobStatus.SUCCEEDED}:
        return JobStatus.SUCCEEDED
    if found & {JobStatus.RUNNING, JobStatus.SUCCEEDED}:
        return JobStatus.RUNNING
    return JobStatus.SUBMITTED if JobStatus.SUBMITTED in found else JobStatus.QUEUED


def _progress(job: Job, rows: Sequence[Any]) -> tuple[TargetProgress, ...]:
    out = []
    for target in job.target_langs:
        own = [row for row in rows if row.target_lang == target]
        out.append(
            TargetProgress(
                target,
                status_of(JobStatus(row.status) for row in own) if own else job.status,
                sum(row.segments_total for row in own),
                sum(row.segments_done for row in own),
            )
        )
    return tuple(out)


def with_targets(conn: Connection, found: Sequence[Job]) -> list[Job]:
    """``found``, each job into several languages with its ``by_target`` (one read)."""
    several = [job.id for job in found if job.targets]
    if not several:
        return list(found)
    rows: dict[str, list[Any]] = {job_id: [] for job_id in several}
    for row in conn.execute(_SHARDS.where(jobs.c.parent_id.in_(several))):
        rows[row.parent_id].append(row)
    for job in found:
        if job.targets:
            job.by_target = _progress(job, rows[job.id])
    return list(found)
