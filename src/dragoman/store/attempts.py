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

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BindParameter,
    Connection,
    Integer,
    and_,
    bindparam,
    case,
    func,
    select,
    update,
)

from dragoman.models import Job, JobError, JobStatus
from dragoman.store import shards as family
from dragoman.store.database import Database
from dragoman.store.rows import DISPATCHABLE, IN_FLIGHT_VALUES, to_job
from dragoman.store.tables import jobs, segments
from dragoman.store.writes import ChunkWrite, Ending, under_review

# One statement writes a chunk's translations, every job's at once. A column more per segment
# (where a translation came from) is one more key in each row and one more bound value here.
_WRITE_SEGMENT = (
    update(segments)
    .where(segments.c.job_id == bindparam("j"), segments.c.position == bindparam("p"))
    .values(
        target=bindparam("t"),
        engine=bindparam("e"),
        model=bindparam("m"),
        terms=bindparam("g"),
        confidence=bindparam("c"),
    )
)
_NOW = bindparam("now", type_=jobs.c.heartbeat_at.type)
_RUNNING: dict[str, Any] = {
    "heartbeat_at": _NOW,
    "status": JobStatus.RUNNING.value,
    "started_at": func.coalesce(jobs.c.started_at, _NOW),
}
_ENDED: dict[str, Any] = {
    "status": bindparam("ended_as", type_=jobs.c.status.type),
    "finished_at": _NOW,
    "error_code": bindparam("code", type_=jobs.c.error_code.type),
    "error_message": bindparam("message", type_=jobs.c.error_message.type),
}


def _ids(count: int) -> list[BindParameter[str]]:
    return [bindparam(f"i{k}", type_=jobs.c.id.type) for k in range(count)]


def _at(count: int) -> Any:
    """The rows of ``count`` jobs (``i0``…) at exactly their attempts (``a0``…)."""
    attempts = [(i, bindparam(f"a{k}", type_=Integer)) for k, i in enumerate(_ids(count))]
    return and_(
        jobs.c.id.in_(_ids(count)),
        jobs.c.attempts == case(*attempts, value=jobs.c.id),
        DISPATCHABLE,
    )


def _in_flight(count: int) -> Any:
    """These attempts while in flight: the fence of a worker's writes."""
    return update(jobs).where(_at(count), jobs.c.status.in_(IN_FLIGHT_VALUES))


def _build_submit(count: int) -> Any:
    return (
        update(jobs)
        .where(jobs.c.id.in_(_ids(count)), DISPATCHABLE, jobs.c.status == JobStatus.QUEUED.value)
        .values(
            status=JobStatus.SUBMITTED.value,
            attempts=jobs.c.attempts + 1,
            submitted_at=_NOW,
            heartbeat_at=_NOW,
        )
        .returning(*jobs.c)
    )


def _build_claim(count: int) -> Any:
    return (
        update(jobs)
        .where(_at(count), jobs.c.status == JobStatus.SUBMITTED.value)
        .values(_RUNNING)
        .returning(*jobs.c)
    )


def _build_beat(count: int) -> Any:
    return (
        _in_flight(count).values(_RUNNING).returning(jobs.c.id, jobs.c.parent_id, jobs.c.attempts)
    )


def _build_write(count: int) -> Any:
    done = [(i, bindparam(f"d{k}", type_=Integer)) for k, i in enumerate(_ids(count))]
    review = [(i, bindparam(f"r{k}", type_=Integer)) for k, i in enumerate(_ids(count))]
    return (
        _in_flight(count)
        .values(
            {
                **_RUNNING,
                "segments_done": jobs.c.segments_done + case(*done, value=jobs.c.id),
                "segments_to_review": jobs.c.segments_to_review + case(*review, value=jobs.c.id),
            }
        )
        .returning(jobs.c.id, jobs.c.parent_id, jobs.c.first_position, jobs.c.end_position)
    )


def _build_end(count: int) -> Any:
    return _in_flight(count).values(_ENDED).returning(jobs.c.id)


def _build_kinds(count: int) -> Any:
    return select(jobs.c.id, jobs.c.parent_id).where(jobs.c.id.in_(_ids(count)))


def _build_states(count: int) -> Any:
    query = select(jobs.c.id, jobs.c.status, jobs.c.attempts, jobs.c.shards)
    return query.where(jobs.c.id.in_(_ids(count)))


_BUILDERS: dict[str, Callable[[int], Any]] = {
    "submit": _build_submit,
    "claim": _build_claim,
    "beat": _build_beat,
    "write": _build_write,
    "end": _build_end,
    "kinds": _build_kinds,
    "states": _build_states,
}


@functools.lru_cache(maxsize=128)
def _statement(kind: str, count: int) -> Any:
    """Each statement built once per number of jobs, its values bound at execution:
    building one (its ``IN`` list, its ``CASE``) cost more than SQLite's work on a few rows."""
    return _BUILDERS[kind](count)


def _bound(
    ids: Sequence[str], now: datetime | None = None, **per_job: Sequence[Any]
) -> dict[str, Any]:
    """The parameters of ``_statement``: ``i0``… for ``ids``, each of ``per_job``'s
    sequences under its own letter (``a0``… for ``a=``), and ``now``."""
    params: dict[str, Any] = {f"i{k}": job_id for k, job_id in enumerate(ids)}
    for letter, values in per_job.items():
        params |= {f"{letter}{k}": value for k, value in enumerate(values)}
    if now is not None:
        params["now"] = now
    return params


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
        rows = sum(len(write.results) for write in by_job.values())
        return await self._db.writing(lambda conn: _write_chunk(conn, by_job, now), rows=rows)

    async def finish_many(self, ends: Sequence[Ending], now: datetime) -> set[str]:
        if not ends:
            return set()
        return await self._db.writing(lambda conn: _finish(conn, ends, now))


def _mark_submitted(conn: Connection, job_ids: Sequence[str], now: datetime) -> list[Any]:
    _lock_plain(conn, job_ids)
    rows = conn.execute(_statement("submit", len(job_ids)), _bound(job_ids, now)).all()
    for row in rows:
        if row.parent_id is not None:
            family.parent_submitted(conn, row.parent_id, row.attempts, now)
    return list(rows)


def _fenced(kind: str, wanted: Mapping[str, int], now: datetime, **per_job: Any) -> Any:
    """``_statement(kind)`` for these attempts and its parameters."""
    params = _bound(list(wanted), now, a=list(wanted.values()), **per_job)
    return _statement(kind, len(wanted)), params


def _claim(conn: Connection, wanted: dict[str, int], now: datetime) -> list[Any]:
    _lock_plain(conn, wanted)
    rows = conn.execute(*_fenced("claim", wanted, now)).all()
    for row in rows:
        if row.parent_id is not None:
            family.parent_running(conn, row.parent_id, row.attempts, now)
    return list(rows)


def _heartbeat(
    conn: Connection, wanted: dict[str, int], now: datetime
) -> dict[str, JobStatus | None]:
    _lock_plain(conn, wanted)
    beats = conn.execute(*_fenced("beat", wanted, now)).all()
    for beat in beats:
        if beat.parent_id is not None:
            family.parent_running(conn, beat.parent_id, beat.attempts, now)
    out: dict[str, JobStatus | None] = {beat.id: JobStatus.RUNNING for beat in beats}
    rest = [job_id for job_id in wanted if job_id not in out]
    if rest:
        for row in conn.execute(_statement("states", len(rest)), _bound(rest)):
            current = not row.shards and row.attempts == wanted[row.id]
            out[row.id] = JobStatus(row.status) if current else None
    return {job_id: out.get(job_id) for job_id in wanted}


def _write_chunk(conn: Connection, by_job: dict[str, ChunkWrite], now: datetime) -> set[str]:
    # The fence and the writes share one transaction: each job row stays locked until
    # commit, so a retry cannot slip in between and both attempts write.
    _lock_plain(conn, by_job)
    wanted = {job_id: write.attempt for job_id, write in by_job.items()}
    written = {job_id: write.rows() for job_id, write in by_job.items()}
    done = [len(rows) for rows in written.values()]
    review = [under_review(written[job_id], w.review_below) for job_id, w in by_job.items()]
    fenced = conn.execute(*_fenced("write", wanted, now, d=done, r=review)).all()
    rows: list[dict[str, Any]] = []
    kept: dict[str, list[dict[str, Any]]] = {}
    for unit in fenced:
        own = written[unit.id]
        if unit.parent_id is not None:
            own = kept[unit.id] = family.own_range(conn, unit, own, by_job[unit.id].review_below)
        owner = unit.parent_id or unit.id
        rows += [{"j": owner, **row} for row in own]
    if rows:
        conn.execute(_WRITE_SEGMENT, rows)
    for unit in fenced:
        if unit.parent_id is not None:
            write = by_job[unit.id]
            to_review = under_review(kept[unit.id], write.review_below)
            family.parent_running(
                conn, unit.parent_id, write.attempt, now, len(kept[unit.id]), to_review
            )
    return {unit.id for unit in fenced}


def _finish(conn: Connection, ends: Sequence[Ending], now: datetime) -> set[str]:
    ids = [end.job_id for end in ends]
    parents = {
        row.id: row.parent_id for row in conn.execute(_statement("kinds", len(ids)), _bound(ids))
    }
    plain = [end for end in ends if parents.get(end.job_id) is None]
    _lock_plain(conn, [end.job_id for end in plain])
    finished: set[str] = set()
    for (status, error), group in _by_outcome(plain).items():
        wanted = {end.job_id: end.attempt for end in group}
        statement, params = _fenced("end", wanted, now)
        ended = conn.execute(statement, params | _ending(status, error))
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


def _ending(status: JobStatus, error: JobError | None) -> dict[str, Any]:
    """The bound values of ``_ENDED`` but ``now``."""
    return {
        "ended_as": status.value,
        "code": error.code if error else None,
        "message": error.message if error else None,
    }


def _finish_shard(conn: Connection, parent_id: str, end: Ending, now: datetime) -> bool:
    """Ends a shard's attempt and rolls its end up to the parent; False if stale."""
    siblings = family.lock_shards(conn, parent_id)
    statement, params = _fenced("end", {end.job_id: end.attempt}, now)
    row = conn.execute(statement, params | _ending(end.status, end.error)).first()
    if row is None:
        return False
    family.roll_up(conn, parent_id, end.job_id, siblings, end.status, end.error, now)
    return True
