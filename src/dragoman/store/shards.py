"""The shard family: a parent follows its shards, in the shard's own transaction.

Lock order within a family, so that no two transactions wait on each other: shards
first (several only all at once, in position order), the parent last. A write on one
shard locks it by its fence and updates the parent after; finishing a shard and
cancelling a parent lock all the family's shards before anything else.

Every function here runs on the caller's connection, inside its transaction, in the one
hand-off of ``Database.writing`` (ADR 0021).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, case, func, or_, select, update

from dragoman.models import JobError, JobStatus
from dragoman.store.rows import UNFINISHED_VALUES
from dragoman.store.tables import jobs
from dragoman.store.writes import under_review


def lock_shards(conn: Connection, parent_id: Any) -> list[str]:
    """Locks the shards of ``parent_id`` (a value or a scalar subquery); their ids by
    position."""
    query = (
        select(jobs.c.id)
        .where(jobs.c.parent_id == parent_id)
        .order_by(jobs.c.first_position, jobs.c.seq)
        .with_for_update()
    )
    return [row.id for row in conn.execute(query)]


def parent_of(job_id: str) -> Any:
    """The parent id of ``job_id``, as a scalar subquery (NULL for a job that is no shard)."""
    shard = jobs.alias("shard")
    return select(shard.c.parent_id).where(shard.c.id == job_id).scalar_subquery()


def unfinished(job_id: str) -> Any:
    """An update of ``job_id`` while it has not finished."""
    return update(jobs).where(jobs.c.id == job_id, jobs.c.status.in_(UNFINISHED_VALUES))


def _at_least(attempt: int) -> Any:
    """The parent shows its most retried shard's attempt."""
    return case((jobs.c.attempts < attempt, attempt), else_=jobs.c.attempts)


def parent_submitted(conn: Connection, parent_id: str, attempt: int, now: datetime) -> None:
    """A shard was submitted: a queued parent becomes ``submitted``, and any parent shows
    the shard's attempt if higher."""
    conn.execute(
        unfinished(parent_id)
        .where(or_(jobs.c.status == JobStatus.QUEUED.value, jobs.c.attempts < attempt))
        .values(
            status=case(
                (jobs.c.status == JobStatus.QUEUED.value, JobStatus.SUBMITTED.value),
                else_=jobs.c.status,
            ),
            submitted_at=func.coalesce(jobs.c.submitted_at, now),
            attempts=_at_least(attempt),
        )
    )


def parent_running(
    conn: Connection,
    parent_id: str,
    attempt: int,
    now: datetime,
    done: int = 0,
    to_review: int = 0,
) -> None:
    """A shard runs (and translated ``done`` more segments, ``to_review`` of them under
    its ``review_below``): so does its parent."""
    query = unfinished(parent_id)
    if not done:
        # Most heartbeats change nothing on the parent: skip the write and its row lock.
        query = query.where(
            or_(jobs.c.status != JobStatus.RUNNING.value, jobs.c.attempts < attempt)
        )
    conn.execute(
        query.values(
            status=JobStatus.RUNNING.value,
            started_at=func.coalesce(jobs.c.started_at, now),
            attempts=_at_least(attempt),
            segments_done=jobs.c.segments_done + done,
            segments_to_review=jobs.c.segments_to_review + to_review,
        )
    )


def own_range(
    conn: Connection, shard: Any, rows: Sequence[dict[str, Any]], review_below: float | None
) -> list[dict[str, Any]]:
    """The segment rows (``ChunkWrite.rows``) inside the range of ``shard`` (its fenced
    row); the others, already counted on it, are taken off its counts again."""
    inside = [shard.first_position <= r["p"] < shard.end_position for r in rows]
    kept = [r for r, ok in zip(rows, inside, strict=True) if ok]
    if len(kept) != len(rows):
        strays = [r for r, ok in zip(rows, inside, strict=True) if not ok]
        conn.execute(
            update(jobs)
            .where(jobs.c.id == shard.id)
            .values(
                segments_done=jobs.c.segments_done - len(strays),
                segments_to_review=jobs.c.segments_to_review - under_review(strays, review_below),
            )
        )
    return kept


def cancel_shards(conn: Connection, parent_id: str, now: datetime) -> None:
    """Cancels the unfinished shards of ``parent_id``."""
    conn.execute(
        update(jobs)
        .where(jobs.c.parent_id == parent_id, jobs.c.status.in_(UNFINISHED_VALUES))
        .values(status=JobStatus.CANCELLED.value, finished_at=now)
    )


def roll_up(
    conn: Connection,
    parent_id: str,
    shard: str,
    siblings: list[str],
    status: JobStatus,
    error: JobError | None,
    now: datetime,
) -> None:
    """Ends the parent of a shard that ended with ``status``, when that ends it."""
    if status is JobStatus.SUCCEEDED:
        _succeed_after_last(conn, parent_id, now)
        return
    prefix = f"shard {siblings.index(shard) + 1}/{len(siblings)}"
    if error is None and status is JobStatus.FAILED:
        error = JobError("shard_failed", "failed")
    ended = conn.execute(
        unfinished(parent_id).values(
            status=status.value,
            finished_at=now,
            error_code=error.code if error else None,
            error_message=f"{prefix}: {error.message}" if error else None,
        )
    )
    if ended.rowcount == 1:
        # The other shards' workers learn it at their next heartbeat and stop.
        cancel_shards(conn, parent_id, now)


def _succeed_after_last(conn: Connection, parent_id: str, now: datetime) -> None:
    other = jobs.alias("other")
    pending = (
        select(other.c.id)
        .where(other.c.parent_id == parent_id)
        .where(other.c.status != JobStatus.SUCCEEDED.value)
    )
    conn.execute(
        unfinished(parent_id)
        .where(~pending.exists())
        .values(status=JobStatus.SUCCEEDED.value, finished_at=now)
    )
