"""``JobStore`` on SQLAlchemy 2 async: SQLite (aiosqlite) and PostgreSQL (asyncpg).

``SqlJobStore`` implements ``Jobs`` here and in ``attempts`` and ``results``; it implements
``Leases``, ``RelayLog`` and ``WorkerRegistry`` too (their own modules), all on one
``Database``. The shard family's writes are in ``shards``, the group commit of creations in
``group_commit``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import BindParameter, Connection, bindparam, case, delete, func, select, update

from dragoman.models import Document, Job, JobError, JobStatus, Pool, RelayStatus
from dragoman.store import shards as family
from dragoman.store.attempts import SqlAttempts
from dragoman.store.database import Database
from dragoman.store.group_commit import GroupCommit
from dragoman.store.leases import SqlLeases
from dragoman.store.prefill import Created, Prefill
from dragoman.store.relay_log import SqlRelayLog
from dragoman.store.results import SqlResults
from dragoman.store.rows import (
    DISPATCHABLE,
    FINISHED_VALUES,
    IN_FLIGHT_VALUES,
    UNFINISHED_VALUES,
    to_job,
)
from dragoman.store.tables import documents, jobs, relay_requests, segments, webhook_deliveries
from dragoman.store.targets import with_targets
from dragoman.store.worker_registry import SqlWorkerRegistry
from dragoman.store.writes import Ending

# Built once: building a statement costs more than SQLite's read by primary key.
_JOB = select(jobs).where(jobs.c.id == bindparam("id"))
# Statements of the hot reads, built once: building one costs more than SQLite's read.
_IDS: BindParameter[str] = bindparam("ids", expanding=True)
_PROGRESS = select(jobs.c.id, jobs.c.status, jobs.c.segments_done).where(jobs.c.id.in_(_IDS))
_UNITS = select(jobs.c.id, jobs.c.parent_id, jobs.c.first_position, jobs.c.end_position).where(
    jobs.c.id.in_(_IDS)
)
_UNTRANSLATED = (
    select(segments.c.job_id, segments.c.position, segments.c.source)
    .where(segments.c.target.is_(None))
    .order_by(segments.c.job_id, segments.c.position)
)
_UNTRANSLATED_OF = _UNTRANSLATED.where(segments.c.job_id.in_(_IDS))
_ETA = update(jobs).where(jobs.c.id == bindparam("i")).values(eta_at=bindparam("e"))
_SHARD = jobs.alias("shard")
# A parent's predicted end: its unfinished shards' latest, or NULL while one has none.
_LATEST_SHARD_ETA = (
    select(case((func.count() == func.count(_SHARD.c.eta_at), func.max(_SHARD.c.eta_at))))
    .where(_SHARD.c.parent_id == jobs.c.id, _SHARD.c.status.in_(UNFINISHED_VALUES))
    .scalar_subquery()
)
ETA_ROWS = 500  # ids per statement: SQLite's bound parameters are limited


def _unclaimed(job_id: str, attempt: int) -> Any:
    """``attempt`` of the job, submitted and not yet claimed by a worker."""
    return update(jobs).where(
        jobs.c.id == job_id,
        jobs.c.attempts == attempt,
        jobs.c.status == JobStatus.SUBMITTED.value,
        DISPATCHABLE,
    )


def _current(job_id: str, attempt: int) -> Any:
    """``attempt`` of the job while it is in flight: the fence of a worker's writes."""
    return (
        update(jobs)
        .where(jobs.c.id == job_id, jobs.c.attempts == attempt)
        .where(jobs.c.status.in_(IN_FLIGHT_VALUES), DISPATCHABLE)
    )


class SqlJobStore(
    SqlAttempts,
    SqlResults,
    SqlLeases,
    SqlRelayLog,
    SqlWorkerRegistry,
):
    """``JobStore``, ``Leases``, ``RelayLog`` and ``WorkerRegistry`` on one database."""

    def __init__(self, url: str) -> None:
        self._db = Database(url)
        self._creates = GroupCommit(self._db)

    @property
    def database(self) -> Database:
        return self._db

    async def open(self) -> None:
        """Opens the database (``Database.open``): for a store used without a ``Runtime``."""
        await self._db.open()

    async def close(self) -> None:
        await self._db.close()

    async def create(
        self,
        job: Job,
        docs: Sequence[Document],
        shards: Sequence[Job] = (),
        lookups: Prefill | None = None,
    ) -> Created:
        if len(shards) != job.shards or any(shard.parent_id != job.id for shard in shards):
            raise ValueError(
                f"job {job.id} announces {job.shards} shards; {len(shards)} given, "
                f"{sum(shard.parent_id == job.id for shard in shards)} of them its own"
            )
        # Concurrent submissions share one transaction (group commit): a commit costs far
        # more than the rows it writes, and bursts of small jobs are the common case.
        return await self._creates.create(job, docs, shards, lookups)

    async def get(self, job_id: str) -> Job | None:
        def read(conn: Connection) -> Job | None:
            row = conn.execute(_JOB, {"id": job_id}).first()
            if row is None:
                return None
            return with_targets(conn, [to_job(row)])[0] if row.target_langs else to_job(row)

        return await self._db.reading(read)

    async def progress_many(self, job_ids: Sequence[str]) -> dict[str, tuple[JobStatus, int]]:
        ids = {"ids": list(job_ids)}
        rows = await self._db.reading(lambda conn: conn.execute(_PROGRESS, ids).all())
        return {job_id: (JobStatus(status), done) for job_id, status, done in rows}

    async def list_jobs(
        self, *, tenant: str | None, status: JobStatus | None, limit: int, cursor: str | None
    ) -> tuple[list[Job], str | None]:
        query = (
            select(jobs)
            .where(jobs.c.parent_id.is_(None))
            .order_by(jobs.c.seq.desc())
            .limit(limit + 1)
        )
        if tenant is not None:
            query = query.where(jobs.c.tenant == tenant)
        if status is not None:
            query = query.where(jobs.c.status == status.value)
        if cursor is not None:
            query = query.where(jobs.c.seq < int(cursor))

        def read(conn: Connection) -> tuple[list[Job], str | None]:
            found = conn.execute(query).all()
            next_cursor = str(found[limit - 1].seq) if len(found) > limit else None
            return with_targets(conn, [to_job(row) for row in found[:limit]]), next_cursor

        return await self._db.reading(read)

    async def sources(self, job_id: str) -> list[tuple[int, str]]:
        return (await self.sources_many([job_id]))[job_id]

    async def sources_many(self, job_ids: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
        def read(conn: Connection) -> dict[str, list[tuple[int, str]]]:
            found: dict[str, list[tuple[int, str]]] = {job_id: [] for job_id in job_ids}
            units = conn.execute(_UNITS, {"ids": list(job_ids)})
            shards = [row for row in units if row.parent_id is not None]
            plain = [job_id for job_id in job_ids if job_id not in {s.id for s in shards}]
            if plain:
                for job_id, position, source in conn.execute(_UNTRANSLATED_OF, {"ids": plain}):
                    found[job_id].append((position, source))
            for shard in shards:
                query = _UNTRANSLATED.where(
                    segments.c.job_id == shard.parent_id,
                    segments.c.position >= shard.first_position,
                    segments.c.position < shard.end_position,
                )
                rows = conn.execute(query)
                found[shard.id] = [(position, source) for _, position, source in rows]
            return found

        return await self._db.reading(read)

    async def finish(
        self,
        job_id: str,
        attempt: int,
        status: JobStatus,
        error: JobError | None,
        now: datetime,
    ) -> bool:
        return bool(await self.finish_many([Ending(job_id, attempt, status, error)], now))

    async def requeue(self, job_id: str, attempt: int, now: datetime) -> bool:
        async with self._db.tx() as conn:
            result = await conn.execute(
                _current(job_id, attempt).values(status=JobStatus.QUEUED.value, heartbeat_at=None)
            )
        return result.rowcount == 1

    async def cancel(self, job_id: str, now: datetime) -> Job | None:
        def cancel(conn: Connection) -> Any:
            family.lock_shards(conn, job_id)
            row = conn.execute(
                family.unfinished(job_id)
                .values(status=JobStatus.CANCELLED.value, finished_at=now)
                .returning(*jobs.c)
            ).first()
            if row is not None and row.shards:
                family.cancel_shards(conn, job_id, now)
            return row

        row = await self._db.writing(cancel)
        return to_job(row) if row is not None else None

    async def in_status(self, statuses: Sequence[JobStatus]) -> list[Job]:
        query = (
            select(jobs)
            .where(jobs.c.status.in_([s.value for s in statuses]), DISPATCHABLE)
            .order_by(jobs.c.seq)
        )
        return await self._jobs(query)

    async def stale(self, heartbeat_before: datetime) -> list[Job]:
        query = select(jobs).where(
            jobs.c.status == JobStatus.RUNNING.value,
            jobs.c.heartbeat_at < heartbeat_before,
            DISPATCHABLE,
        )
        return await self._jobs(query)

    async def unclaimed(self, submitted_before: datetime) -> list[Job]:
        query = select(jobs).where(
            jobs.c.status == JobStatus.SUBMITTED.value,
            jobs.c.heartbeat_at < submitted_before,
            DISPATCHABLE,
        )
        return await self._jobs(query)

    async def _jobs(self, query: Any) -> list[Job]:
        return await self._db.reading(lambda conn: [to_job(row) for row in conn.execute(query)])

    async def set_etas(self, etas: Mapping[str, datetime | None]) -> set[str]:
        def write(conn: Connection) -> set[str]:
            written: set[str] = set()
            parents: set[str] = set()
            ids = sorted(etas)
            for start in range(0, len(ids), ETA_ROWS):
                rows = _lock_free(conn, ids[start : start + ETA_ROWS], jobs.c.parent_id)
                if rows:
                    conn.execute(_ETA, [{"i": row.id, "e": etas[row.id]} for row in rows])
                written |= {row.id for row in rows}
                parents |= {row.parent_id for row in rows if row.parent_id is not None}
            ordered = sorted(parents)
            for start in range(0, len(ordered), ETA_ROWS):
                free = [row.id for row in _lock_free(conn, ordered[start : start + ETA_ROWS])]
                if free:
                    conn.execute(
                        update(jobs).where(jobs.c.id.in_(free)).values(eta_at=_LATEST_SHARD_ETA)
                    )
            return written

        return await self._db.writing(write, rows=len(etas))

    async def reroute(self, job_id: str, pool: Pool, now: datetime) -> bool:
        async with self._db.tx() as conn:
            result = await conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.status == JobStatus.QUEUED.value)
                .where(DISPATCHABLE)
                .values(pool=pool.value)
            )
        return bool(result.rowcount == 1)

    async def resubmit(self, job_id: str, attempt: int, now: datetime) -> bool:
        async with self._db.tx() as conn:
            result = await conn.execute(_unclaimed(job_id, attempt).values(heartbeat_at=now))
        return bool(result.rowcount == 1)

    async def purge(self, finished_before: datetime) -> int:
        async with self._db.tx() as conn:
            # Only top-level jobs expire; a parent takes its shards with it.
            ids = select(jobs.c.id).where(
                jobs.c.status.in_(FINISHED_VALUES),
                jobs.c.finished_at < finished_before,
                jobs.c.parent_id.is_(None),
            )
            doomed = [row.id for row in await conn.execute(ids)]
            if doomed:
                await conn.execute(delete(segments).where(segments.c.job_id.in_(doomed)))
                await conn.execute(delete(documents).where(documents.c.job_id.in_(doomed)))
                await conn.execute(
                    delete(webhook_deliveries).where(webhook_deliveries.c.job_id.in_(doomed))
                )
                await conn.execute(delete(jobs).where(jobs.c.parent_id.in_(doomed)))
                await conn.execute(delete(jobs).where(jobs.c.id.in_(doomed)))
            await conn.execute(
                delete(relay_requests).where(
                    relay_requests.c.status != RelayStatus.OPEN.value,
                    relay_requests.c.finished_at < finished_before,
                )
            )
        return len(doomed)

    async def counts(self, pool: Pool | None = None) -> dict[JobStatus, int]:
        query = select(jobs.c.status, func.count()).where(DISPATCHABLE).group_by(jobs.c.status)
        if pool is not None:
            query = query.where(jobs.c.pool == pool.value)
        rows = await self._db.reading(lambda conn: conn.execute(query).all())
        found = {JobStatus(status): count for status, count in rows}
        return {status: found.get(status, 0) for status in JobStatus}


def _lock_free(conn: Connection, ids: Sequence[str], *columns: Any) -> Sequence[Any]:
    """The rows of ``ids`` no other transaction holds, locked (PostgreSQL; SQLite has one
    writer at a time)."""
    query = select(jobs.c.id, *columns).where(jobs.c.id.in_(list(ids)))
    return conn.execute(query.with_for_update(skip_locked=True)).all()
