"""The writes made on behalf of attempts, for several jobs in one transaction: submit,
claim, heartbeat, a chunk's results, finish.

A message of small jobs is dispatched, claimed, beaten, written and finished as one: a
transaction costs far more than the rows it touches. Each job stays fenced by its own
attempt: the ``UPDATE`` matches a job only while the attempt it names is the job's current
one, so a stale attempt's rows are refused alone and its batch mates go on.

Lock order, so that two of these transactions never wait on each other: on PostgreSQL, the
plain jobs of a call are locked first, by id (``_lock_plain``); a shard's family follows the
rule of ``shards`` (shards, then the parent). SQLite has one writer at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, case, func, select, update

from dragoman.models import Job, JobError, JobStatus
from dragoman.store import shards as family
from dragoman.store.database import Database
from dragoman.store.rows import DISPATCHABLE, IN_FLIGHT_VALUES, to_job
from dragoman.store.tables import jobs, segments
from dragoman.store.writes import ChunkWrite, Ending

# One statement writes a chunk's translations, every job's at once. A column more per segment
# (where a translation came from) is one more key in each row and one more bound value here.
_WRITE_SEGMENT = (
    update(segments)
    .where(segments.c.job_id == bindparam("j"), segments.c.position == bindparam("p"))
    .values(target=bindparam("t"))
)


def _at(attempts: Mapping[str, int]) -> Any:
    """The rows of these jobs at exactly these attempts."""
    return and_(
        jobs.c.id.in_(list(attempts)),
        jobs.c.attempts == case(dict(attempts), value=jobs.c.id),
        DISPATCHABLE,
    )


def _in_flight(attempts: Mapping[str, int]) -> Any:
    """These attempts while in flight: the fence of a worker's writes."""
    return update(jobs).where(_at(attempts), jobs.c.status.in_(IN_FLIGHT_VALUES))


def _lock_plain(conn: Connection, ids: Iterable[str]) -> None:
    """Locks the plain jobs among ``ids`` in id order (PostgreSQL; SQLite has one writer)."""
    ordered = sorted(set(ids))
    if len(ordered) < 2 or conn.dialect.name != "postgresql":
        return
    conn.execute(
        select(jobs.c.id)
        .where(jobs.c.id.in_(ordered), jobs.c.parent_id.is_(None))
        .order_by(jobs.c.id)
        .with_for_update()
    )


def _running(now: datetime) -> dict[str, Any]:
    return {
        "heartbeat_at": now,
        "status": JobStatus.RUNNING.value,
        "started_at": func.coalesce(jobs.c.started_at, now),
    }


def _in_order(ids: Sequence[str], rows: Iterable[Any]) -> list[Job]:
    found = {row.id: row for row in rows}
    return [to_job(found[job_id]) for job_id in ids if job_id in found]


class SqlAttempts:
    """``mark_submitted_many``, ``claim_many``, ``heartbeat_many``, ``write_chunk`` and
    ``finish_many``; ``SqlJobStore``'s one-job calls are these with one job. Each
    transaction runs in one hand-off (``Database.writing``, ADR 0021)."""

    _db: Database

    async def mark_submitted_many(self, job_ids: Sequence[str], now: datetime) -> list[Job]:
        if not job_ids:
            return []
        rows = await self._db.writing(lambda conn: _mark_submitted(conn, job_ids, now))
        return _in_order(job_ids, rows)

    async def claim_many(self, attempts: Sequence[tuple[str, int]], now: datetime) -> list[Job]:
        if not attempts:
            return []
        rows = await self._db.writing(lambda conn: _claim(conn, dict(attempts), now))
        return _in_order([job_id for job_id, _ in attempts], rows)

    async def heartbeat_many(
        self, attempts: Sequence[tuple[str, int]], now: datetime
    ) -> dict[str, JobStatus | None]:
        wanted = dict(attempts)
        if not wanted:
            return {}
        return await self._db.writing(lambda conn: _heartbeat(conn, wanted, now))

    async def write_chunk(self, writes: Sequence[ChunkWrite], now: datetime) -> set[str]:
        by_job = {write.job_id: write for write in writes}
        if len(by_job) != len(writes):
            raise ValueError("one write per job and chunk")
        if not by_job:
            return set()
        return await self._db.writing(lambda conn: _write_chunk(conn, by_job, now))

    async def finish_many(self, ends: Sequence[Ending], now: datetime) -> set[str]:
        if not ends:
            return set()
        return await self._db.writing(lambda conn: _finish(conn, ends, now))


def _mark_submitted(conn: Connection, job_ids: Sequence[str], now: datetime) -> list[Any]:
    _lock_plain(conn, job_ids)
    rows = conn.execute(
        update(jobs)
        .where(jobs.c.id.in_(list(job_ids)), DISPATCHABLE)
        .where(jobs.c.status == JobStatus.QUEUED.value)
        .values(
            status=JobStatus.SUBMITTED.value,
            attempts=jobs.c.attempts + 1,
            submitted_at=now,
            heartbeat_at=now,
        )
        .returning(*jobs.c)
    ).all()
    for row in rows:
        if row.parent_id is not None:
            family.parent_submitted(conn, row.parent_id, row.attempts, now)
    return list(rows)


def _claim(conn: Connection, wanted: dict[str, int], now: datetime) -> list[Any]:
    _lock_plain(conn, wanted)
    rows = conn.execute(
        update(jobs)
        .where(_at(wanted), jobs.c.status == JobStatus.SUBMITTED.value)
        .values(_running(now))
        .returning(*jobs.c)
    ).all()
    for row in rows:
        if row.parent_id is not None:
            family.parent_running(conn, row.parent_id, row.attempts, now)
    return list(rows)


def _heartbeat(
    conn: Connection, wanted: dict[str, int], now: datetime
) -> dict[str, JobStatus | None]:
    _lock_plain(conn, wanted)
    beats = conn.execute(
        _in_flight(wanted)
        .values(_running(now))
        .returning(jobs.c.id, jobs.c.parent_id, jobs.c.attempts)
    ).all()
    for beat in beats:
        if beat.parent_id is not None:
            family.parent_running(conn, beat.parent_id, beat.attempts, now)
    out: dict[str, JobStatus | None] = {beat.id: JobStatus.RUNNING for beat in beats}
    rest = [job_id for job_id in wanted if job_id not in out]
    if rest:
        query = select(jobs.c.id, jobs.c.status, jobs.c.attempts, jobs.c.shards)
        for row in conn.execute(query.where(jobs.c.id.in_(rest))):
            current = not row.shards and row.attempts == wanted[row.id]
            out[row.id] = JobStatus(row.status) if current else None
    return {job_id: out.get(job_id) for job_id in wanted}


def _write_chunk(conn: Connection, by_job: dict[str, ChunkWrite], now: datetime) -> set[str]:
    # The fence and the writes share one transaction: each job row stays locked until
    # commit, so a retry cannot slip in between and both attempts write.
    _lock_plain(conn, by_job)
    writes = list(by_job.values())
    done = case({w.job_id: len(w.results) for w in writes}, value=jobs.c.id)
    fenced = conn.execute(
        _in_flight({w.job_id: w.attempt for w in writes})
        .values({**_running(now), "segments_done": jobs.c.segments_done + done})
        .returning(jobs.c.id, jobs.c.parent_id, jobs.c.first_position, jobs.c.end_position)
    ).all()
    rows: list[dict[str, Any]] = []
    kept: dict[str, int] = {}
    for unit in fenced:
        results = by_job[unit.id].results
        if unit.parent_id is not None:
            results = family.own_range(conn, unit, unit.id, results)
            kept[unit.id] = len(results)
        owner = unit.parent_id or unit.id
        rows += [{"j": owner, "p": position, "t": text} for position, text in results]
    if rows:
        conn.execute(_WRITE_SEGMENT, rows)
    for unit in fenced:
        if unit.parent_id is not None:
            attempt = by_job[unit.id].attempt
            family.parent_running(conn, unit.parent_id, attempt, now, done=kept[unit.id])
    return {unit.id for unit in fenced}


def _finish(conn: Connection, ends: Sequence[Ending], now: datetime) -> set[str]:
    ids = [end.job_id for end in ends]
    kinds = select(jobs.c.id, jobs.c.parent_id).where(jobs.c.id.in_(ids))
    parents = {row.id: row.parent_id for row in conn.execute(kinds)}
    plain = [end for end in ends if parents.get(end.job_id) is None]
    _lock_plain(conn, [end.job_id for end in plain])
    finished: set[str] = set()
    for (status, error), group in _by_outcome(plain).items():
        ended = conn.execute(
            _in_flight({end.job_id: end.attempt for end in group})
            .values(_ended(status, error, now))
            .returning(jobs.c.id)
        )
        finished.update(row.id for row in ended)
    for end in ends:
        parent_id = parents.get(end.job_id)
        if parent_id is not None and _finish_shard(conn, parent_id, end, now):
            finished.add(end.job_id)
    return finished


def _by_outcome(ends: Sequence[Ending]) -> dict[tuple[JobStatus, JobError | None], list[Ending]]:
    groups: dict[tuple[JobStatus, JobError | None], list[Ending]] = {}
    for end in ends:
        groups.setdefault((end.status, end.error), []).append(end)
    return groups


def _ended(status: JobStatus, error: JobError | None, now: datetime) -> dict[str, Any]:
    return {
        "status": status.value,
        "finished_at": now,
        "error_code": error.code if error else None,
        "error_message": error.message if error else None,
    }


def _finish_shard(conn: Connection, parent_id: str, end: Ending, now: datetime) -> bool:
    """Ends a shard's attempt and rolls its end up to the parent; False if stale."""
    siblings = family.lock_shards(conn, parent_id)
    row = (
        conn.execute(
            _in_flight({end.job_id: end.attempt})
            .values(_ended(end.status, end.error, now))
            .returning(jobs.c.id)
        )
    ).first()
    if row is None:
        return False
    family.roll_up(conn, parent_id, end.job_id, siblings, end.status, end.error, now)
    return True
