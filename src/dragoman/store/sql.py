"""``JobStore`` on SQLAlchemy 2 async: SQLite (aiosqlite) and PostgreSQL (asyncpg)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import (
    Connection,
    bindparam,
    case,
    delete,
    event,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy import text as sql_text
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from dragoman.errors import StoreUnavailable
from dragoman.models import (
    FINISHED,
    IN_FLIGHT,
    Document,
    Job,
    JobError,
    JobStatus,
    Pool,
    Priority,
    RelayRequest,
    RelayStatus,
)
from dragoman.scaling import WorkerInfo
from dragoman.store.tables import documents, jobs, leases, relay_requests, segments, workers

_MIGRATIONS = Path(__file__).parent / "migrations"
_IN_FLIGHT = [s.value for s in IN_FLIGHT]
_FINISHED = [s.value for s in FINISHED]
_UNFINISHED = [s.value for s in JobStatus if s not in FINISHED]
# Plain jobs and shards are dispatched; a parent only follows its shards.
_DISPATCHABLE = jobs.c.shards == 0


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def _job(row: Any) -> Job:
    error = JobError(row.error_code, row.error_message or "") if row.error_code else None
    return Job(
        id=row.id,
        tenant=row.tenant,
        source_lang=row.source_lang,
        target_lang=row.target_lang,
        engine=row.engine,
        pool=Pool(row.pool),
        priority=Priority(row.priority),
        documents=row.documents,
        segments_total=row.segments_total,
        status=JobStatus(row.status),
        segments_done=row.segments_done,
        attempts=row.attempts,
        created_at=_aware(row.created_at) or datetime.now(UTC),
        submitted_at=_aware(row.submitted_at),
        started_at=_aware(row.started_at),
        finished_at=_aware(row.finished_at),
        heartbeat_at=_aware(row.heartbeat_at),
        error=error,
        parent_id=row.parent_id,
        first_position=row.first_position,
        end_position=row.end_position,
        shards=row.shards,
    )


# SQLSTATE classes of a server going away or not there yet: 08 connection exception,
# 57P01..57P03 admin shutdown, crash shutdown, cannot connect now.
_UNAVAILABLE_STATES = ("08", "57P")


def _unavailable(exc: DBAPIError) -> Exception:
    """Connection trouble becomes ``StoreUnavailable``; anything else is a bug and stays."""
    state = str(getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None) or "")
    if (
        exc.connection_invalidated
        or isinstance(exc, OperationalError | InterfaceError)
        or state.startswith(_UNAVAILABLE_STATES)
    ):
        return StoreUnavailable(f"database unavailable: {type(exc.orig).__name__}")
    return exc


def _worker(row: Any) -> WorkerInfo:
    return WorkerInfo(
        id=row.id,
        pool=Pool(row.pool),
        host=row.host,
        busy=bool(row.busy),
        warm_pairs=frozenset(json.loads(row.warm_pairs)),
        last_seen=_aware(row.last_seen),
        pid=row.pid,
    )


def _request(row: Any) -> RelayRequest:
    return RelayRequest(
        id=row.id,
        reply_to=row.reply_to,
        target=row.target,
        payload=json.loads(row.payload),
        status=RelayStatus(row.status),
        created_at=_aware(row.created_at) or row.created_at,
        heartbeat_at=_aware(row.heartbeat_at) or row.heartbeat_at,
        finished_at=_aware(row.finished_at),
    )


def _upgrade(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        # Processes starting together (api, watchdog, workers) migrate one at a time.
        connection.execute(sql_text("SELECT pg_advisory_xact_lock(4242001)"))
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def _tune_sqlite(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers (result polling) run beside the writer; NORMAL sync is still
    # crash-safe in WAL mode and keeps commits cheap.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class SqlJobStore:
    def __init__(self, url: str) -> None:
        self._url = url
        self._engine: AsyncEngine | None = None
        self._sqlite = url.startswith("sqlite")
        # SQLite allows one writer at a time; serialising writes here avoids lock waits.
        self._write_lock = asyncio.Lock() if self._sqlite else None
        self._pending_creates: list[
            tuple[Job, Sequence[Document], Sequence[Job], asyncio.Future[None]]
        ] = []
        self._create_flusher: asyncio.Task[None] | None = None

    async def open(self) -> None:
        if self._sqlite:
            path = self._url.split("///", 1)[-1]
            if path and path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            engine = create_async_engine(self._url, connect_args={"timeout": 30})
            event.listen(engine.sync_engine, "connect", _tune_sqlite)
        else:
            engine = create_async_engine(self._url, pool_pre_ping=True, pool_size=10)
        self._engine = engine
        async with self._tx() as conn:
            await conn.run_sync(_upgrade)

    async def close(self) -> None:
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None

    @asynccontextmanager
    async def _tx(self) -> AsyncIterator[AsyncConnection]:
        if self._engine is None:
            raise StoreUnavailable("the store is not open")
        try:
            if self._write_lock is not None:
                async with self._write_lock, self._engine.begin() as conn:
                    yield conn
            else:
                async with self._engine.begin() as conn:
                    yield conn
        except DBAPIError as exc:
            raise _unavailable(exc) from None
        except OSError as exc:
            raise StoreUnavailable(f"database unavailable: {exc}") from None

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncConnection]:
        if self._engine is None:
            raise StoreUnavailable("the store is not open")
        try:
            async with self._engine.connect() as conn:
                yield conn
        except DBAPIError as exc:
            raise _unavailable(exc) from None
        except OSError as exc:
            raise StoreUnavailable(f"database unavailable: {exc}") from None

    async def ping(self) -> None:
        async with self._read() as conn:
            await conn.execute(select(1))

    async def create(self, job: Job, docs: Sequence[Document], shards: Sequence[Job] = ()) -> None:
        if len(shards) != job.shards or any(shard.parent_id != job.id for shard in shards):
            raise ValueError(
                f"job {job.id} announces {job.shards} shards; {len(shards)} given, "
                f"{sum(shard.parent_id == job.id for shard in shards)} of them its own"
            )
        # Concurrent submissions share one transaction (group commit): a commit costs far
        # more than the rows it writes, and bursts of small jobs are the common case.
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending_creates.append((job, docs, shards, future))
        if self._create_flusher is None or self._create_flusher.done():
            self._create_flusher = asyncio.create_task(self._flush_creates())
        await future

    async def _flush_creates(self) -> None:
        await asyncio.sleep(0)  # let the submissions already on their way join this batch
        while self._pending_creates:
            batch, self._pending_creates = self._pending_creates, []
            job_rows: list[dict[str, Any]] = []
            doc_rows: list[dict[str, Any]] = []
            seg_rows: list[dict[str, Any]] = []
            for job, docs, shards, _ in batch:
                job_rows.append(self._job_row(job))
                job_rows.extend(self._job_row(shard) for shard in shards)
                self._content_rows(job.id, docs, doc_rows, seg_rows)
            try:
                async with self._tx() as conn:
                    await conn.execute(insert(jobs), job_rows)
                    if doc_rows:
                        await conn.execute(insert(documents), doc_rows)
                    if seg_rows:
                        await conn.execute(insert(segments), seg_rows)
            except Exception as exc:
                for *_, future in batch:
                    if not future.done():
                        future.set_exception(exc)
            else:
                for *_, future in batch:
                    if not future.done():
                        future.set_result(None)

    @staticmethod
    def _content_rows(
        job_id: str,
        docs: Sequence[Document],
        doc_rows: list[dict[str, Any]],
        seg_rows: list[dict[str, Any]],
    ) -> None:
        position = 0
        for ordinal, doc in enumerate(docs):
            doc_rows.append(
                {
                    "job_id": job_id,
                    "ordinal": ordinal,
                    "name": doc.name,
                    "first_position": position,
                    "segment_count": len(doc.segments),
                }
            )
            for text in doc.segments:
                seg_rows.append({"job_id": job_id, "position": position, "source": text})
                position += 1

    @staticmethod
    def _job_row(job: Job) -> dict[str, Any]:
        return {
            "id": job.id,
            "tenant": job.tenant,
            "source_lang": job.source_lang,
            "target_lang": job.target_lang,
            "engine": job.engine,
            "pool": job.pool.value,
            "priority": job.priority.value,
            "status": job.status.value,
            "documents": job.documents,
            "segments_total": job.segments_total,
            "segments_done": job.segments_done,
            "attempts": job.attempts,
            "created_at": job.created_at,
            "parent_id": job.parent_id,
            "first_position": job.first_position,
            "end_position": job.end_position,
            "shards": job.shards,
        }

    async def get(self, job_id: str) -> Job | None:
        async with self._read() as conn:
            row = (await conn.execute(select(jobs).where(jobs.c.id == job_id))).first()
        return _job(row) if row else None

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
        async with self._read() as conn:
            rows = (await conn.execute(query)).all()
        next_cursor = str(rows[limit - 1].seq) if len(rows) > limit else None
        return [_job(row) for row in rows[:limit]], next_cursor

    async def sources(self, job_id: str) -> list[tuple[int, str]]:
        unit = select(jobs.c.parent_id, jobs.c.first_position, jobs.c.end_position).where(
            jobs.c.id == job_id
        )
        query = (
            select(segments.c.position, segments.c.source)
            .where(segments.c.target.is_(None))
            .order_by(segments.c.position)
        )
        async with self._read() as conn:
            shard = (await conn.execute(unit)).first()
            if shard is not None and shard.parent_id is not None:
                query = query.where(
                    segments.c.job_id == shard.parent_id,
                    segments.c.position >= shard.first_position,
                    segments.c.position < shard.end_position,
                )
            else:
                query = query.where(segments.c.job_id == job_id)
            return [(row.position, row.source) for row in await conn.execute(query)]

    async def results(self, job_id: str) -> list[tuple[str, list[str | None]]]:
        doc_query = (
            select(documents.c.name, documents.c.segment_count)
            .where(documents.c.job_id == job_id)
            .order_by(documents.c.ordinal)
        )
        seg_query = (
            select(segments.c.target)
            .where(segments.c.job_id == job_id)
            .order_by(segments.c.position)
        )
        async with self._read() as conn:
            docs = (await conn.execute(doc_query)).all()
            targets: list[str | None] = [row.target for row in await conn.execute(seg_query)]
        out, start = [], 0
        for doc in docs:
            out.append((doc.name, targets[start : start + doc.segment_count]))
            start += doc.segment_count
        return out

    def _unclaimed(self, job_id: str, attempt: int) -> Any:
        """``attempt`` of the job, submitted and not yet claimed by a worker."""
        return update(jobs).where(
            jobs.c.id == job_id,
            jobs.c.attempts == attempt,
            jobs.c.status == JobStatus.SUBMITTED.value,
            _DISPATCHABLE,
        )

    def _current(self, job_id: str, attempt: int) -> Any:
        return (
            update(jobs)
            .where(jobs.c.id == job_id, jobs.c.attempts == attempt)
            .where(jobs.c.status.in_(_IN_FLIGHT), _DISPATCHABLE)
        )

    # Lock order within a family, so that no two transactions wait on each other: shards
    # first (several only all at once, in position order), the parent last. A write on one
    # shard locks it by its fence and updates the parent after; finishing a shard and
    # cancelling a parent lock all the family's shards before anything else.

    @staticmethod
    async def _lock_shards(conn: AsyncConnection, parent_id: Any) -> list[str]:
        """Locks the shards of ``parent_id`` (a value or a scalar subquery); their ids by
        position."""
        query = (
            select(jobs.c.id)
            .where(jobs.c.parent_id == parent_id)
            .order_by(jobs.c.first_position, jobs.c.seq)
            .with_for_update()
        )
        return [row.id for row in await conn.execute(query)]

    @staticmethod
    def _parent_of(job_id: str) -> Any:
        shard = jobs.alias("shard")
        return select(shard.c.parent_id).where(shard.c.id == job_id).scalar_subquery()

    @staticmethod
    def _at_least(attempt: int) -> Any:
        """The parent shows its most retried shard's attempt."""
        return case((jobs.c.attempts < attempt, attempt), else_=jobs.c.attempts)

    def _parent_submitted(self, parent_id: str, attempt: int, now: datetime) -> Any:
        return (
            update(jobs)
            .where(jobs.c.id == parent_id, jobs.c.status.in_(_UNFINISHED))
            .where(or_(jobs.c.status == JobStatus.QUEUED.value, jobs.c.attempts < attempt))
            .values(
                status=case(
                    (jobs.c.status == JobStatus.QUEUED.value, JobStatus.SUBMITTED.value),
                    else_=jobs.c.status,
                ),
                submitted_at=func.coalesce(jobs.c.submitted_at, now),
                attempts=self._at_least(attempt),
            )
        )

    def _parent_running(self, parent_id: str, attempt: int, now: datetime, done: int = 0) -> Any:
        query = update(jobs).where(jobs.c.id == parent_id, jobs.c.status.in_(_UNFINISHED))
        if not done:
            # Most heartbeats change nothing on the parent: skip the write and its row lock.
            query = query.where(
                or_(jobs.c.status != JobStatus.RUNNING.value, jobs.c.attempts < attempt)
            )
        return query.values(
            status=JobStatus.RUNNING.value,
            started_at=func.coalesce(jobs.c.started_at, now),
            attempts=self._at_least(attempt),
            segments_done=jobs.c.segments_done + done,
        )

    async def _roll_up(
        self,
        conn: AsyncConnection,
        parent_id: str,
        shard: str,
        siblings: list[str],
        status: JobStatus,
        error: JobError | None,
        now: datetime,
    ) -> None:
        """Ends the parent of a shard that ended with ``status``, when that ends it."""
        unfinished = update(jobs).where(jobs.c.id == parent_id, jobs.c.status.in_(_UNFINISHED))
        if status is JobStatus.SUCCEEDED:
            other = jobs.alias("other")
            pending = (
                select(other.c.id)
                .where(other.c.parent_id == parent_id)
                .where(other.c.status != JobStatus.SUCCEEDED.value)
            )
            await conn.execute(
                unfinished.where(~pending.exists()).values(status=status.value, finished_at=now)
            )
            return
        prefix = f"shard {siblings.index(shard) + 1}/{len(siblings)}"
        if error is None and status is JobStatus.FAILED:
            error = JobError("shard_failed", "failed")
        ended = await conn.execute(
            unfinished.values(
                status=status.value,
                finished_at=now,
                error_code=error.code if error else None,
                error_message=f"{prefix}: {error.message}" if error else None,
            )
        )
        if ended.rowcount == 1:
            # The other shards' workers learn it at their next heartbeat and stop.
            await conn.execute(
                update(jobs)
                .where(jobs.c.parent_id == parent_id, jobs.c.status.in_(_UNFINISHED))
                .values(status=JobStatus.CANCELLED.value, finished_at=now)
            )

    async def mark_submitted(self, job_id: str, now: datetime) -> Job | None:
        async with self._tx() as conn:
            row = (
                await conn.execute(
                    update(jobs)
                    .where(jobs.c.id == job_id, jobs.c.status == JobStatus.QUEUED.value)
                    .where(_DISPATCHABLE)
                    .values(
                        status=JobStatus.SUBMITTED.value,
                        attempts=jobs.c.attempts + 1,
                        submitted_at=now,
                        heartbeat_at=now,
                    )
                    .returning(*jobs.c)
                )
            ).first()
            if row is not None and row.parent_id is not None:
                await conn.execute(self._parent_submitted(row.parent_id, row.attempts, now))
        return _job(row) if row else None

    async def claim(self, job_id: str, attempt: int, now: datetime) -> bool:
        async with self._tx() as conn:
            row = (
                await conn.execute(
                    self._unclaimed(job_id, attempt)
                    .values(
                        status=JobStatus.RUNNING.value,
                        heartbeat_at=now,
                        started_at=func.coalesce(jobs.c.started_at, now),
                    )
                    .returning(jobs.c.parent_id)
                )
            ).first()
            if row is not None and row.parent_id is not None:
                await conn.execute(self._parent_running(row.parent_id, attempt, now))
        return row is not None

    async def acquire_lease(self, name: str, holder: str, ttl_s: float, now: datetime) -> bool:
        expires = now + timedelta(seconds=ttl_s)
        async with self._tx() as conn:
            taken = await conn.execute(
                update(leases)
                .where(leases.c.name == name)
                .where(or_(leases.c.holder == holder, leases.c.expires_at < now))
                .values(holder=holder, expires_at=expires)
            )
            if taken.rowcount == 1:
                return True
            exists = (
                await conn.execute(select(leases.c.name).where(leases.c.name == name))
            ).first()
            if exists:
                return False
            await conn.execute(insert(leases).values(name=name, holder=holder, expires_at=expires))
        return True

    async def heartbeat(self, job_id: str, attempt: int, now: datetime) -> JobStatus | None:
        async with self._tx() as conn:
            beat = (
                await conn.execute(
                    self._current(job_id, attempt)
                    .values(
                        heartbeat_at=now,
                        status=JobStatus.RUNNING.value,
                        started_at=func.coalesce(jobs.c.started_at, now),
                    )
                    .returning(jobs.c.parent_id)
                )
            ).first()
            if beat is not None:
                if beat.parent_id is not None:
                    await conn.execute(self._parent_running(beat.parent_id, attempt, now))
                return JobStatus.RUNNING
            row = (
                await conn.execute(
                    select(jobs.c.status, jobs.c.attempts, jobs.c.shards).where(jobs.c.id == job_id)
                )
            ).first()
        if row is None or row.shards or row.attempts != attempt:
            return None
        return JobStatus(row.status)

    async def write_results(
        self, job_id: str, attempt: int, results: Sequence[tuple[int, str]], now: datetime
    ) -> bool:
        async with self._tx() as conn:
            # The fence and the write share one transaction: the job row stays locked until
            # commit, so a retry cannot slip in between and both attempts write.
            fenced = (
                await conn.execute(
                    self._current(job_id, attempt)
                    .values(
                        segments_done=jobs.c.segments_done + len(results),
                        heartbeat_at=now,
                        status=JobStatus.RUNNING.value,
                        started_at=func.coalesce(jobs.c.started_at, now),
                    )
                    .returning(jobs.c.parent_id, jobs.c.first_position, jobs.c.end_position)
                )
            ).first()
            if fenced is None:
                return False
            owner = fenced.parent_id or job_id
            if fenced.parent_id is not None:
                kept = [r for r in results if fenced.first_position <= r[0] < fenced.end_position]
                if len(kept) != len(results):
                    strays = len(results) - len(kept)
                    await conn.execute(
                        update(jobs)
                        .where(jobs.c.id == job_id)
                        .values(segments_done=jobs.c.segments_done - strays)
                    )
                results = kept
            if results:
                await conn.execute(
                    update(segments)
                    .where(
                        segments.c.job_id == owner,
                        segments.c.position == bindparam("p"),
                    )
                    .values(target=bindparam("t")),
                    [{"p": position, "t": text} for position, text in results],
                )
            if fenced.parent_id is not None:
                await conn.execute(self._parent_running(owner, attempt, now, done=len(results)))
        return True

    async def finish(
        self,
        job_id: str,
        attempt: int,
        status: JobStatus,
        error: JobError | None,
        now: datetime,
    ) -> bool:
        async with self._tx() as conn:
            siblings = await self._lock_shards(conn, self._parent_of(job_id))
            row = (
                await conn.execute(
                    self._current(job_id, attempt)
                    .values(
                        status=status.value,
                        finished_at=now,
                        error_code=error.code if error else None,
                        error_message=error.message if error else None,
                    )
                    .returning(jobs.c.parent_id)
                )
            ).first()
            if row is not None and row.parent_id is not None:
                await self._roll_up(conn, row.parent_id, job_id, siblings, status, error, now)
        return row is not None

    async def requeue(self, job_id: str, attempt: int, now: datetime) -> bool:
        async with self._tx() as conn:
            result = await conn.execute(
                self._current(job_id, attempt).values(
                    status=JobStatus.QUEUED.value, heartbeat_at=None
                )
            )
        return result.rowcount == 1

    async def cancel(self, job_id: str, now: datetime) -> Job | None:
        async with self._tx() as conn:
            await self._lock_shards(conn, job_id)
            row = (
                await conn.execute(
                    update(jobs)
                    .where(jobs.c.id == job_id, jobs.c.status.in_(_UNFINISHED))
                    .values(status=JobStatus.CANCELLED.value, finished_at=now)
                    .returning(*jobs.c)
                )
            ).first()
            if row is None:
                return None
            if row.shards:
                await conn.execute(
                    update(jobs)
                    .where(jobs.c.parent_id == job_id, jobs.c.status.in_(_UNFINISHED))
                    .values(status=JobStatus.CANCELLED.value, finished_at=now)
                )
        return _job(row)

    async def in_status(self, statuses: Sequence[JobStatus]) -> list[Job]:
        query = (
            select(jobs)
            .where(jobs.c.status.in_([s.value for s in statuses]), _DISPATCHABLE)
            .order_by(jobs.c.seq)
        )
        async with self._read() as conn:
            return [_job(row) for row in await conn.execute(query)]

    async def stale(self, heartbeat_before: datetime) -> list[Job]:
        query = select(jobs).where(
            jobs.c.status == JobStatus.RUNNING.value,
            jobs.c.heartbeat_at < heartbeat_before,
            _DISPATCHABLE,
        )
        async with self._read() as conn:
            return [_job(row) for row in await conn.execute(query)]

    async def unclaimed(self, submitted_before: datetime) -> list[Job]:
        query = select(jobs).where(
            jobs.c.status == JobStatus.SUBMITTED.value,
            jobs.c.heartbeat_at < submitted_before,
            _DISPATCHABLE,
        )
        async with self._read() as conn:
            return [_job(row) for row in await conn.execute(query)]

    async def reroute(self, job_id: str, pool: Pool, now: datetime) -> bool:
        async with self._tx() as conn:
            result = await conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.status == JobStatus.QUEUED.value)
                .where(_DISPATCHABLE)
                .values(pool=pool.value)
            )
        return bool(result.rowcount == 1)

    async def resubmit(self, job_id: str, attempt: int, now: datetime) -> bool:
        async with self._tx() as conn:
            result = await conn.execute(self._unclaimed(job_id, attempt).values(heartbeat_at=now))
        return bool(result.rowcount == 1)

    # -- relayed requests -----------------------------------------------------------------

    async def open_request(self, request: RelayRequest) -> bool:
        async with self._tx() as conn:
            exists = (
                await conn.execute(
                    select(relay_requests.c.id).where(relay_requests.c.id == request.id)
                )
            ).first()
            if exists:
                return False
            await conn.execute(
                insert(relay_requests).values(
                    id=request.id,
                    reply_to=request.reply_to,
                    target=request.target,
                    payload=json.dumps(request.payload),
                    status=RelayStatus.OPEN.value,
                    created_at=request.created_at,
                    heartbeat_at=request.heartbeat_at,
                )
            )
        return True

    async def get_request(self, request_id: str) -> RelayRequest | None:
        query = select(relay_requests).where(relay_requests.c.id == request_id)
        async with self._read() as conn:
            row = (await conn.execute(query)).first()
        return _request(row) if row else None

    async def request_heartbeat(self, request_id: str, now: datetime) -> bool:
        async with self._tx() as conn:
            result = await conn.execute(
                update(relay_requests)
                .where(
                    relay_requests.c.id == request_id,
                    relay_requests.c.status == RelayStatus.OPEN.value,
                )
                .values(heartbeat_at=now)
            )
        return bool(result.rowcount == 1)

    async def close_request(self, request_id: str, status: RelayStatus, now: datetime) -> bool:
        async with self._tx() as conn:
            result = await conn.execute(
                update(relay_requests)
                .where(
                    relay_requests.c.id == request_id,
                    relay_requests.c.status == RelayStatus.OPEN.value,
                )
                .values(status=status.value, finished_at=now)
            )
        return bool(result.rowcount == 1)

    async def stale_requests(self, heartbeat_before: datetime) -> list[RelayRequest]:
        query = select(relay_requests).where(
            relay_requests.c.status == RelayStatus.OPEN.value,
            relay_requests.c.heartbeat_at < heartbeat_before,
        )
        async with self._read() as conn:
            return [_request(row) for row in await conn.execute(query)]

    async def purge(self, finished_before: datetime) -> int:
        async with self._tx() as conn:
            # Only top-level jobs expire; a parent takes its shards with it.
            ids = select(jobs.c.id).where(
                jobs.c.status.in_(_FINISHED),
                jobs.c.finished_at < finished_before,
                jobs.c.parent_id.is_(None),
            )
            doomed = [row.id for row in await conn.execute(ids)]
            if doomed:
                await conn.execute(delete(segments).where(segments.c.job_id.in_(doomed)))
                await conn.execute(delete(documents).where(documents.c.job_id.in_(doomed)))
                await conn.execute(delete(jobs).where(jobs.c.parent_id.in_(doomed)))
                await conn.execute(delete(jobs).where(jobs.c.id.in_(doomed)))
            await conn.execute(
                delete(relay_requests).where(
                    relay_requests.c.status != RelayStatus.OPEN.value,
                    relay_requests.c.finished_at < finished_before,
                )
            )
        return len(doomed)

    # -- worker registry ------------------------------------------------------------------

    async def register_worker(self, worker: WorkerInfo, now: datetime) -> None:
        values = {
            "pool": worker.pool.value,
            "host": worker.host,
            "pid": worker.pid,
            "busy": worker.busy,
            "warm_pairs": json.dumps(sorted(worker.warm_pairs)),
            "last_seen": now,
        }
        async with self._tx() as conn:
            updated = await conn.execute(
                update(workers).where(workers.c.id == worker.id).values(**values)
            )
            if updated.rowcount == 0:
                await conn.execute(insert(workers).values(id=worker.id, **values))

    async def live_workers(self, pool: Pool, seen_after: datetime) -> list[WorkerInfo]:
        query = (
            select(workers)
            .where(workers.c.pool == pool.value, workers.c.last_seen >= seen_after)
            .order_by(workers.c.id)
        )
        async with self._read() as conn:
            return [_worker(row) for row in await conn.execute(query)]

    async def forget_worker(self, worker_id: str) -> None:
        async with self._tx() as conn:
            await conn.execute(delete(workers).where(workers.c.id == worker_id))

    async def expire_workers(self, seen_before: datetime) -> int:
        async with self._tx() as conn:
            result = await conn.execute(delete(workers).where(workers.c.last_seen < seen_before))
        return int(result.rowcount)

    async def counts(self, pool: Pool | None = None) -> dict[JobStatus, int]:
        query = select(jobs.c.status, func.count()).where(_DISPATCHABLE).group_by(jobs.c.status)
        if pool is not None:
            query = query.where(jobs.c.pool == pool.value)
        async with self._read() as conn:
            rows = (await conn.execute(query)).all()
        found = {JobStatus(status): count for status, count in rows}
        return {status: found.get(status, 0) for status in JobStatus}
