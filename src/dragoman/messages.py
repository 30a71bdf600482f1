"""What the processes say to each other about jobs, and on which queue.

A job's life, in order (the store is written before anything is said about it):

1. the API stores the job (``queued``), then sends ``Queued`` to the watchdog's queue. The
   embedded service skips the bus: its intake pushes the same notice into the watchdog's
   in-process queue. A lost notice costs one sweep: the watchdog reloads queued jobs;
2. the watchdog marks the jobs ``submitted`` in the store, then sends one ``Work`` (one job,
   or several small jobs of one pair and engine) to an idle worker with the model warm
   (its private queue, ``worker_queue``) or to the pool's queue (``work_queue``);
3. the worker claims each attempt, reads its sources, writes results in chunks and
   heartbeats, all in the store: progress never travels on the bus;
4. the worker sends ``Outcomes`` (one ``Done`` per job of the message, in one message) to the
   watchdog's queue, **then** acks the ``Work``;
5. the watchdog finishes or requeues the jobs in the store (the jobs that end as they were
   meant to, in one transaction). Every write is fenced by the attempt, so a stale or
   repeated message changes nothing.

Requests between services (``relay.*`` on the watchdog's queue) are ``dragoman.relay``'s.
A body that does not parse raises ``ValueError``: its consumer dead-letters it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dragoman.models import Job, JobError, JobStatus, Pool, Priority

Body = dict[str, Any]

WATCHDOG_QUEUE = "watchdog"


def work_queue(pool: str) -> str:
    """The queue a pool's workers consume."""
    return f"work.{pool}"


def worker_queue(worker: str) -> str:
    """One worker's private queue: work routed to it because its model is warm."""
    return f"worker.{worker}"


def model_key(job: Job) -> str:
    """What a worker must have loaded to run ``job`` warm: ``engine:source-target``."""
    return f"{job.engine}:{job.source_lang}-{job.target_lang}"


def _moment(value: Any) -> datetime | None:
    """An ISO 8601 time with its offset, or None."""
    if value is None:
        return None
    moment = datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        raise ValueError(f"{value!r} has no time zone")
    return moment


def _malformed(kind: str, body: Body, exc: Exception) -> ValueError:
    return ValueError(f"malformed {kind} message {body!r}: {exc}")


@dataclass(frozen=True, slots=True)
class Queued:
    """A job (or shard) waits in the store for dispatch."""

    job_id: str
    pool: Pool
    priority: Priority
    tenant: str | None
    batch_key: str = ""  # jobs with the same key may share an engine batch
    segments: int = 0
    # Alone: a retried job (so that a bad job cannot fail its batch mates again) and a
    # shard (shards of one job are meant to run in parallel on several workers).
    alone: bool = False
    deadline: datetime | None = None  # the job's, which orders a tenant's jobs

    @classmethod
    def of(cls, job: Job) -> Queued:
        return cls(
            job.id,
            job.pool,
            job.options.priority,
            job.tenant,
            batch_key=model_key(job),
            segments=job.segments_total,
            alone=job.attempts > 0 or job.is_shard,
            deadline=job.options.deadline,
        )

    def to_body(self) -> Body:
        body: Body = {
            "type": "queued",
            "job_id": self.job_id,
            "pool": self.pool.value,
            "priority": self.priority.value,
            "tenant": self.tenant,
            "batch_key": self.batch_key,
            "segments": self.segments,
            "alone": self.alone,
        }
        if self.deadline is not None:
            body["deadline"] = self.deadline.isoformat()
        return body

    @classmethod
    def from_body(cls, body: Body) -> Queued:
        try:
            return cls(
                str(body["job_id"]),
                Pool(body["pool"]),
                Priority(body["priority"]),
                None if body.get("tenant") is None else str(body["tenant"]),
                batch_key=str(body.get("batch_key", "")),
                segments=int(body.get("segments", 0)),
                alone=bool(body.get("alone", False)),
                deadline=_moment(body.get("deadline")),
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise _malformed("queued", body, exc) from None


@dataclass(frozen=True, slots=True)
class Attempt:
    job_id: str
    attempt: int


@dataclass(frozen=True, slots=True)
class Work:
    """Attempts for one worker slot: one job, or small jobs that share an engine batch."""

    attempts: tuple[Attempt, ...]

    @classmethod
    def of(cls, jobs: Sequence[Job]) -> Work:
        return cls(tuple(Attempt(job.id, job.attempts) for job in jobs))

    def to_body(self) -> Body:
        items = [{"job_id": a.job_id, "attempt": a.attempt} for a in self.attempts]
        return items[0] if len(items) == 1 else {"jobs": items}

    @classmethod
    def from_body(cls, body: Body) -> Work:
        """``{"job_id", "attempt"}`` or ``{"jobs": [{"job_id", "attempt"}, ...]}``."""
        try:
            items = body.get("jobs", [body])
            attempts = tuple(Attempt(str(i["job_id"]), int(i["attempt"])) for i in items)
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise _malformed("work", body, exc) from None
        if not attempts:
            raise ValueError(f"work message without jobs {body!r}")
        return cls(attempts)


@dataclass(frozen=True, slots=True)
class Done:
    """A worker's outcome for one attempt. ``retryable`` failures may run again."""

    job_id: str
    attempt: int
    status: JobStatus
    retryable: bool = False
    error: JobError | None = None

    def to_body(self) -> Body:
        body: Body = {
            "type": "done",
            "job_id": self.job_id,
            "attempt": self.attempt,
            "status": self.status.value,
        }
        if self.status is JobStatus.FAILED:
            body["retryable"] = self.retryable
        if self.error is not None:
            body["error"] = {"code": self.error.code, "message": self.error.message}
        return body

    @classmethod
    def from_body(cls, body: Body) -> Done:
        try:
            error = body.get("error")
            return cls(
                str(body["job_id"]),
                int(body["attempt"]),
                JobStatus(body["status"]),
                retryable=bool(body.get("retryable", False)),
                error=JobError(str(error["code"]), str(error["message"])) if error else None,
            )
        except (KeyError, ValueError, TypeError) as exc:
            raise _malformed("done", body, exc) from None


@dataclass(frozen=True, slots=True)
class Outcomes:
    """A worker's outcomes for the attempts of one message, reported together: one ``Done``
    body, or ``{"type": "done", "jobs": [...]}`` for several."""

    done: tuple[Done, ...]

    def to_body(self) -> Body:
        bodies = [outcome.to_body() for outcome in self.done]
        if len(bodies) == 1:
            return bodies[0]
        for body in bodies:
            del body["type"]
        return {"type": "done", "jobs": bodies}

    @classmethod
    def from_body(cls, body: Body) -> Outcomes:
        items = body.get("jobs", [body])
        if not isinstance(items, list) or not items:
            raise ValueError(f"done message without jobs {body!r}")
        if not all(isinstance(item, dict) for item in items):
            raise ValueError(f"malformed done message {body!r}")
        return cls(tuple(Done.from_body(item) for item in items))
