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
    """Ends the parent of a shard that ended with ``status``, when that ends it.

    A failed shard fails its own target: the unfinished shards into the same language are
    cancelled, those into the job's other languages go on, and the parent fails once none
    is left unfinished (at once for a job into one language). A cancelled shard ends the
    whole job."""
    if status is JobStatus.SUCCEEDED:
        _end_after_last(conn, parent_id, now)
        return
    if status is JobStatus.FAILED:
        _fail_target(conn, parent_id, shard, now)
        _end_after_last(conn, parent_id, now, siblings)
        return
    prefix = f"shard {siblings.index(shard) + 1}/{len(siblings)}"
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


def _fail_target(conn: Connection, parent_id: str, shard: str, now: datetime) -> None:
    """Cancels the unfinished shards of ``parent_id`` into the language of ``shard``."""
    language = select(jobs.c.target_lang).where(jobs.c.id == shard).scalar_subquery()
    conn.execute(
        update(jobs)
        .where(
            jobs.c.parent_id == parent_id,
            jobs.c.target_lang == language,
            jobs.c.status.in_(UNFINISHED_VALUES),
        )
        .values(status=JobStatus.CANCELLED.value, finished_at=now)
    )


def _end_after_last(
    conn: Connection, parent_id: str, now: datetime, siblings: Sequence[str] = ()
) -> None:
    """Ends the parent once none of its shards is left unfinished: succeeded when all
    succeeded, else failed with the first failed shard's error (``siblings``, the shards
    in position order, number it), naming its language when the job has several."""
    rows = conn.execute(
        select(
            jobs.c.id,
            jobs.c.status,
            jobs.c.target_lang,
            jobs.c.error_code,
            jobs.c.error_message,
        )
        .where(jobs.c.parent_id == parent_id)
        .order_by(jobs.c.first_position, jobs.c.seq)
    ).all()
    if any(row.status in UNFINISHED_VALUES for row in rows):
        return
    failed = [row for row in rows if row.status == JobStatus.FAILED.value]
    if not failed:
        done = all(row.status == JobStatus.SUCCEEDED.value for row in rows)
        ended = JobStatus.SUCCEEDED if done else JobStatus.CANCELLED
        conn.execute(unfinished(parent_id).values(status=ended.value, finished_at=now))
        return
    first = failed[0]
    order = list(siblings) or [row.id for row in rows]
    message = f"shard {order.index(first.id) + 1}/{len(order)}: {first.error_message or 'failed'}"
    languages = sorted({row.target_lang for row in rows})
    if len(languages) > 1:
        lost = sorted({row.target_lang for row in failed})
        message = f"{', '.join(lost)}: {message}"
    conn.execute(
        unfinished(parent_id).values(
            status=JobStatus.FAILED.value,
            finished_at=now,
            error_code=first.error_code or "shard_failed",
            error_message=message,
        )
    )
