"""Notifications of jobs' ends in the store: ``WebhookDelivery`` (a row), the ``Deliveries``
protocol and ``SqlDeliveries`` on the shared ``Database``.

A job is turned into its delivery once: the ``jobs.notified`` flag is set in the same
transaction as the delivery row is inserted, guarded by its old value, so two notifiers (a
watchdog losing its lease and the one taking over) cannot both create one. A job at risk of
missing its deadline is warned once the same way, by ``jobs.at_risk_notified``. Attempts
are fenced by their number the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

from sqlalchemy import Connection, false, insert, or_, select, update

from dragoman.models import Job, utcnow
from dragoman.store.database import Database
from dragoman.store.rows import FINISHED_VALUES, UNFINISHED_VALUES, aware, to_job
from dragoman.store.tables import jobs, webhook_deliveries
from dragoman.store.targets import with_targets

AT_RISK = "job.at_risk"  # the one event sent before a job ends; the others end it


class DeliveryStatus(StrEnum):
    """A job notification: ``pending`` until a 2xx (``delivered``) or given up (``failed``)."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


@dataclass(slots=True)
class WebhookDelivery:
    """One notification of a job's end to its ``callback_url``. Its ``id`` is the
    ``webhook-id`` of every attempt; its ``payload`` is fixed when it is created."""

    id: str
    job_id: str
    tenant: str | None
    url: str
    event: str  # job.succeeded | job.failed | job.cancelled | job.at_risk
    payload: str
    next_attempt_at: datetime
    status: DeliveryStatus = DeliveryStatus.PENDING
    attempts: int = 0
    created_at: datetime = field(default_factory=utcnow)
    last_status: int | None = None  # the HTTP status of the last attempt, if one came
    last_error: str | None = None
    delivered_at: datetime | None = None


class Deliveries(Protocol):
    """Notifications of jobs' ends, kept until delivered or given up."""

    async def unnotified(self, limit: int) -> list[Job]:
        """Finished top-level jobs with a ``callback_url`` whose delivery is not created yet,
        oldest first."""
        ...

    async def at_risk(self, now: datetime, limit: int) -> list[Job]:
        """Unfinished top-level jobs with a ``callback_url`` and a deadline that they will
        miss (it passed at ``now``, or they should end after it), not warned yet; the
        earliest deadline first."""
        ...

    async def add_delivery(self, delivery: WebhookDelivery) -> bool:
        """Stores ``delivery`` and marks its job notified (of its end, or for ``AT_RISK``
        warned), in one transaction; False (and nothing stored) when it was already."""
        ...

    async def due_deliveries(self, now: datetime, limit: int) -> list[WebhookDelivery]:
        """Pending deliveries whose next attempt is due, soonest first."""
        ...

    async def record_attempt(
        self,
        delivery_id: str,
        attempt: int,
        status: DeliveryStatus,
        *,
        next_attempt_at: datetime | None,
        last_status: int | None,
        last_error: str | None,
        now: datetime,
    ) -> bool:
        """Records attempt number ``attempt`` (1-based) of a pending delivery; False (and
        nothing written) when that attempt was recorded already or it is no longer pending."""
        ...

    async def deliveries(self, job_id: str) -> list[WebhookDelivery]:
        """A job's deliveries, oldest first."""
        ...


_PENDING = webhook_deliveries.c.status == DeliveryStatus.PENDING.value


def _at(value: datetime) -> datetime:
    """A NOT NULL time column (SQLite gives it back without its zone)."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _to_delivery(row: Any) -> WebhookDelivery:
    return WebhookDelivery(
        id=row.id,
        job_id=row.job_id,
        tenant=row.tenant,
        url=row.url,
        event=row.event,
        payload=row.payload,
        next_attempt_at=_at(row.next_attempt_at),
        status=DeliveryStatus(row.status),
        attempts=row.attempts,
        created_at=_at(row.created_at),
        last_status=row.last_status,
        last_error=row.last_error,
        delivered_at=aware(row.delivered_at),
    )


def _delivery_row(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "id": delivery.id,
        "job_id": delivery.job_id,
        "tenant": delivery.tenant,
        "url": delivery.url,
        "event": delivery.event,
        "payload": delivery.payload,
        "status": delivery.status.value,
        "attempts": delivery.attempts,
        "next_attempt_at": delivery.next_attempt_at,
        "last_status": delivery.last_status,
        "last_error": delivery.last_error,
        "created_at": delivery.created_at,
        "delivered_at": delivery.delivered_at,
    }


class SqlDeliveries:
    """``Deliveries`` on the shared database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def unnotified(self, limit: int) -> list[Job]:
        query = (
            select(jobs)
            .where(
                jobs.c.parent_id.is_(None),
                jobs.c.callback_url.is_not(None),
                jobs.c.notified == false(),
                jobs.c.status.in_(FINISHED_VALUES),
            )
            .order_by(jobs.c.finished_at, jobs.c.seq)
            .limit(limit)
        )
        return await self._jobs(query)

    async def at_risk(self, now: datetime, limit: int) -> list[Job]:
        query = (
            select(jobs)
            .where(
                jobs.c.parent_id.is_(None),
                jobs.c.callback_url.is_not(None),
                jobs.c.deadline.is_not(None),
                jobs.c.at_risk_notified == false(),
                jobs.c.status.in_(UNFINISHED_VALUES),
                or_(jobs.c.deadline < now, jobs.c.eta_at > jobs.c.deadline),
            )
            .order_by(jobs.c.deadline, jobs.c.seq)
            .limit(limit)
        )
        return await self._jobs(query)

    async def add_delivery(self, delivery: WebhookDelivery) -> bool:
        flag = jobs.c.at_risk_notified if delivery.event == AT_RISK else jobs.c.notified
        async with self._db.tx() as conn:
            marked = await conn.execute(
                update(jobs)
                .where(jobs.c.id == delivery.job_id, flag == false())
                .values({flag: True})
            )
            if marked.rowcount != 1:
                return False
            await conn.execute(insert(webhook_deliveries).values(**_delivery_row(delivery)))
        return True

    async def due_deliveries(self, now: datetime, limit: int) -> list[WebhookDelivery]:
        query = (
            select(webhook_deliveries)
            .where(_PENDING, webhook_deliveries.c.next_attempt_at <= now)
            .order_by(webhook_deliveries.c.next_attempt_at, webhook_deliveries.c.id)
            .limit(limit)
        )
        async with self._db.read() as conn:
            return [_to_delivery(row) for row in await conn.execute(query)]

    async def record_attempt(
        self,
        delivery_id: str,
        attempt: int,
        status: DeliveryStatus,
        *,
        next_attempt_at: datetime | None,
        last_status: int | None,
        last_error: str | None,
        now: datetime,
    ) -> bool:
        values: dict[str, Any] = {
            "status": status.value,
            "attempts": attempt,
            "last_status": last_status,
            "last_error": last_error,
        }
        if next_attempt_at is not None:
            values["next_attempt_at"] = next_attempt_at
        if status is DeliveryStatus.DELIVERED:
            values["delivered_at"] = now
        async with self._db.tx() as conn:
            result = await conn.execute(
                update(webhook_deliveries)
                .where(
                    webhook_deliveries.c.id == delivery_id,
                    webhook_deliveries.c.attempts == attempt - 1,
                    _PENDING,
                )
                .values(**values)
            )
        return bool(result.rowcount == 1)

    async def deliveries(self, job_id: str) -> list[WebhookDelivery]:
        query = (
            select(webhook_deliveries)
            .where(webhook_deliveries.c.job_id == job_id)
            .order_by(webhook_deliveries.c.created_at, webhook_deliveries.c.id)
        )
        async with self._db.read() as conn:
            return [_to_delivery(row) for row in await conn.execute(query)]

    async def _jobs(self, query: Any) -> list[Job]:
        """The jobs of ``query``, each into several languages with its targets' progress
        (a notification shows the job as ``GET /v1/jobs/{id}`` does)."""

        def read(conn: Connection) -> list[Job]:
            return with_targets(conn, [to_job(row) for row in conn.execute(query)])

        return await self._db.reading(read)
