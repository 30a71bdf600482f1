"""Where jobs, their documents, segments and attempts live: the job's life.

``JobStore`` (``Jobs`` on one database) is what the roles of a job's life use; ``Leases``,
``RelayLog`` and ``WorkerRegistry`` are narrow protocols of their own, on the same database
(``Runtime.leases``, ``.relay_log``, ``.registry``). Each feature keeps its own rows beside
it, on the shared ``Database``: ``glossaries.store``, ``usage.store``, ``webhooks.store``,
``reuse.store``. Tables and migrations are all here: one database, one history.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from dragoman.models import (
    Document,
    Job,
    JobError,
    JobStatus,
    Pool,
    RelayRequest,
    RelayStatus,
    SourceFile,
    Translated,
    WorkerInfo,
)
from dragoman.store.database import Database
from dragoman.store.prefill import Created, Prefill
from dragoman.store.results import NewSegment
from dragoman.store.writes import ChunkWrite, Ending

__all__ = [
    "ChunkWrite",
    "Created",
    "Database",
    "Ending",
    "JobStore",
    "Jobs",
    "Leases",
    "Prefill",
    "RelayLog",
    "WorkerRegistry",
    "open_store",
]


class Jobs(Protocol):
    """Durable job state. Every write that a worker or the watchdog makes on behalf of an
    attempt is fenced: it applies only while that attempt is the job's current one.

    A sharded job is a parent row with child rows, its shards (see ``Job``). The
    *dispatchable units* are the plain jobs and the shards: only they are dispatched,
    claimed, fenced, retried, listed as stale or unclaimed and counted. A parent follows its
    shards: each write on a shard updates the parent in the same transaction.
    """

    async def create(
        self,
        job: Job,
        documents: Sequence[Document],
        shards: Sequence[Job] = (),
        lookups: Prefill | None = None,
    ) -> Created:
        """Stores a job, its shards (as many as ``job.shards``, else ``ValueError``) and its
        documents, all at once. With ``lookups``, the segments found in memories or the
        segment cache are stored translated, and a unit (the job, or a shard) left with
        nothing to translate is stored ``succeeded``: what ``Created`` tells."""
        ...

    async def get(self, job_id: str) -> Job | None:
        """Any job: plain, parent or shard."""
        ...

    async def progress_many(self, job_ids: Sequence[str]) -> dict[str, tuple[JobStatus, int]]:
        """Each job's status and ``segments_done``, in one read; a job not stored is absent."""
        ...

    async def list_jobs(
        self, *, tenant: str | None, status: JobStatus | None, limit: int, cursor: str | None
    ) -> tuple[list[Job], str | None]:
        """Top-level jobs (no shards), newest first; the cursor, when not None, continues
        after the last job returned."""
        ...

    async def sources(self, job_id: str) -> list[tuple[int, str]]:
        """``(position, text)`` of the segments still without a translation, in order; for a
        shard, those of its range of the parent's segments."""
        ...

    async def sources_many(self, job_ids: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
        """``sources`` of each job, in one read."""
        ...

    async def documents(
        self, job_id: str, *, sources: bool = False, copy: int | None = None
    ) -> list[Translated]:
        """Each document of a job, in order, as far as it is translated, in one read (with
        its source segments when ``sources``); a shard has none: read its parent's. A job
        of several targets has a copy of its documents per target: all of them, copy after
        copy, or only copy ``copy`` (from 0, in the order of ``Job.target_langs``)."""
        ...

    async def translated_since(
        self, job_id: str, sent: Sequence[tuple[int, int]]
    ) -> tuple[list[tuple[str, int]], list[NewSegment]]:
        """What a job's events have not told yet, in one read: its documents' names and
        segment counts, in order, and its translated segments outside the ``sent`` ranges
        of positions (sorted, disjoint, inclusive), by position."""
        ...

    async def source_file(
        self, job_id: str, ordinal: int, copy: int = 0
    ) -> tuple[SourceFile, Translated] | None:
        """The stored file of a job's document ``ordinal`` and that document as far as it
        is translated into its target ``copy``; None when there is no such document or it
        was sent as plain segments."""
        ...

    async def finish(
        self,
        job_id: str,
        attempt: int,
        status: JobStatus,
        error: JobError | None,
        now: datetime,
    ) -> bool:
        """Ends an in-flight attempt with ``status``; False if stale. A shard's end rolls up:
        the parent succeeds with its last shard. A failed shard cancels the unfinished
        shards into its language (every shard, in a job of one target); the parent fails
        once none is left unfinished, with the first failed shard's error prefixed
        ``shard i/n: `` (and the failed languages, in a job of several). A cancelled shard
        ends the parent the same way at once and cancels the unfinished siblings."""
        ...

    async def mark_submitted_many(self, job_ids: Sequence[str], now: datetime) -> list[Job]:
        """``queued`` → ``submitted`` with one more attempt, for each job, in one
        transaction: the jobs submitted, in the order given (those no longer queued, and
        parents, are left out). A shard's queued parent becomes ``submitted`` with it."""
        ...

    async def claim_many(self, attempts: Sequence[tuple[str, int]], now: datetime) -> list[Job]:
        """``submitted`` → ``running`` for each ``(job_id, attempt)``, in one transaction:
        the jobs claimed, as they are now, in the order given. Left out: an attempt another
        delivery claimed already, a stale attempt, a cancelled job, a parent. A shard's
        parent becomes ``running`` and shows the shard's attempt if higher."""
        ...

    async def heartbeat_many(
        self, attempts: Sequence[tuple[str, int]], now: datetime
    ) -> dict[str, JobStatus | None]:
        """Records a heartbeat of each ``(job_id, attempt)``, in one transaction (``running``
        starts here, for a shard's parent too): each job's status, or None where its
        attempt is stale."""
        ...

    async def write_chunk(self, writes: Sequence[ChunkWrite], now: datetime) -> set[str]:
        """Stores translations by position for several jobs (one write each), in one
        transaction, each fenced by its own attempt: the ids of the jobs written. A stale
        attempt's rows, or those of a job no longer in flight, are refused and its batch
        mates' written. A shard writes into its parent's segments, those of its own range
        only, and both count them done."""
        ...

    async def finish_many(self, ends: Sequence[Ending], now: datetime) -> set[str]:
        """``finish`` of each attempt, in one transaction: the ids of the jobs that ended (a
        stale attempt's is left out)."""
        ...

    async def requeue(self, job_id: str, attempt: int, now: datetime) -> bool:
        """Puts an in-flight attempt back to ``queued`` for a retry; False if stale. A shard's
        parent stays as it is."""
        ...

    async def cancel(self, job_id: str, now: datetime) -> Job | None:
        """Cancels an unfinished job, and a parent's unfinished shards with it; None if it had
        already finished."""
        ...

    async def in_status(self, statuses: Sequence[JobStatus]) -> list[Job]:
        """Dispatchable units in one of ``statuses``, oldest first."""
        ...

    async def stale(self, heartbeat_before: datetime) -> list[Job]:
        """Running units whose last heartbeat is older than ``heartbeat_before``."""
        ...

    async def unclaimed(self, submitted_before: datetime) -> list[Job]:
        """Submitted units no worker claimed since ``submitted_before`` (last (re)submission)."""
        ...

    async def set_etas(self, etas: Mapping[str, datetime | None]) -> set[str]:
        """Records each unit's predicted end (None: unknown), and each of their parents' the
        latest of its unfinished shards' (None while one of them has none): the ids written.
        A row another transaction holds is left out, for the next call: on PostgreSQL this
        write never waits on an attempt's, so it cannot deadlock with one."""
        ...

    async def reroute(self, job_id: str, pool: Pool, now: datetime) -> bool:
        """Moves a queued unit to ``pool`` (its own has no workers); False if not queued."""
        ...

    async def resubmit(self, job_id: str, attempt: int, now: datetime) -> bool:
        """Restarts the wait of a submitted, unclaimed attempt; False if it moved on."""
        ...

    async def purge(self, finished_before: datetime) -> int:
        """Deletes finished top-level jobs, their shards and their data (and closed relayed
        requests); returns how many top-level jobs."""
        ...

    async def counts(self, pool: Pool | None = None) -> dict[JobStatus, int]:
        """Dispatchable units per status (of one pool, or all)."""
        ...


class Leases(Protocol):
    """Named leases with a deadline: one holder at a time (the active watchdog)."""

    async def acquire_lease(self, name: str, holder: str, ttl_s: float, now: datetime) -> bool:
        """Takes or renews the lease ``name`` for ``holder``; False while another holds it."""
        ...


class RelayLog(Protocol):
    """Requests relayed through the watchdog, from open to answered or failed."""

    async def open_request(self, request: RelayRequest) -> bool:
        """Records a relayed request; False if one with that id exists already."""
        ...

    async def get_request(self, request_id: str) -> RelayRequest | None: ...

    async def request_heartbeat(self, request_id: str, now: datetime) -> bool:
        """Records the target's heartbeat; False unless the request is open."""
        ...

    async def close_request(self, request_id: str, status: RelayStatus, now: datetime) -> bool:
        """``open`` → ``status``; False if it was not open (closed once only)."""
        ...

    async def stale_requests(self, heartbeat_before: datetime) -> list[RelayRequest]:
        """Open requests whose target has not heartbeaten since ``heartbeat_before``."""
        ...


class WorkerRegistry(Protocol):
    """The worker registry: each live worker's ``WorkerInfo`` (with its counters), refreshed
    while it lives; and the figures the other roles publish of each pool, so that any API
    process can show the whole fleet (``fleet.py``)."""

    async def register_worker(self, worker: WorkerInfo, now: datetime) -> None:
        """Adds or refreshes a worker in the registry (``now`` is its last sign of life)."""
        ...

    async def live_workers(self, pool: Pool, seen_after: datetime) -> list[WorkerInfo]:
        """The pool's workers seen since ``seen_after``, by id."""
        ...

    async def forget_worker(self, worker_id: str) -> None:
        """Removes a worker that stopped."""
        ...

    async def expire_workers(self, seen_before: datetime) -> int:
        """Removes workers not seen since ``seen_before``; returns how many."""
        ...

    async def publish_figures(
        self, pool: Pool, figures: Mapping[str, float], now: datetime
    ) -> None:
        """Sets each named figure of ``pool`` (a later value replaces an earlier one), stamped
        ``now``. One role writes each name: the scaler ``workers_desired`` and
        ``workers_current``, the watchdog ``routed_warm`` and ``routed_total``."""
        ...

    async def pool_figures(self, pool: Pool) -> dict[str, tuple[float, datetime]]:
        """Every figure published of ``pool``: name → (value, when it was published)."""
        ...


class JobStore(Jobs, Protocol):
    """The jobs on one database; that database (``database``) is shared with the narrow
    protocols and the features' stores, and opened, pinged and closed by the ``Runtime``."""

    @property
    def database(self) -> Database:
        """The database under the store."""
        ...


def open_store(database_url: str) -> JobStore:
    """The store for a SQLAlchemy async URL (SQLite or PostgreSQL)."""
    from dragoman.store.sql import SqlJobStore

    return SqlJobStore(database_url)
