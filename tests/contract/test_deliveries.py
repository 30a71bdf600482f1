"""The ``Deliveries`` contract (notifications of jobs' ends), run against SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from dragoman.models import Job, JobError, JobOptions, JobStatus
from dragoman.store import JobStore
from dragoman.webhooks import Deliveries, DeliveryStatus, WebhookDelivery
from tests.attempts import claim, mark_submitted
from tests.contract.test_job_store import DOCS, SHARDED_DOCS, a_job, a_parent

pytestmark = pytest.mark.timeout(30)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
URL = "https://example.com/hooks/dragoman"


def with_callback(job_id: str, url: str | None = URL) -> Job:
    job = a_job(job_id, tenant="t")
    job.options = JobOptions(callback_url=url)
    return job


async def finished(
    store: JobStore, job_id: str, status: JobStatus = JobStatus.SUCCEEDED, *, at: datetime = T0
) -> Job:
    """A job with a callback URL, submitted, claimed and ended with ``status`` at ``at``."""
    await store.create(with_callback(job_id), DOCS)
    assert await mark_submitted(store, job_id, at) is not None
    assert await claim(store, job_id, 1, at)
    error = JobError("engine_error", "boom") if status is JobStatus.FAILED else None
    assert await store.finish(job_id, 1, status, error, at)
    job = await store.get(job_id)
    assert job is not None
    return job


def a_delivery(job: Job, delivery_id: str | None = None, *, due: datetime = T0) -> WebhookDelivery:
    return WebhookDelivery(
        id=delivery_id or f"msg_{job.id}",
        job_id=job.id,
        tenant=job.tenant,
        url=job.options.callback_url or URL,
        event="job.succeeded",
        payload=json.dumps(
            {"type": "job.succeeded", "data": {"id": job.id, "note": "été ✓"}}, ensure_ascii=False
        ),
        next_attempt_at=due,
        created_at=T0,
    )


async def record(
    deliveries: Deliveries,
    delivery_id: str,
    attempt: int,
    status: DeliveryStatus,
    *,
    next_at: datetime | None = None,
    code: int | None = 500,
) -> bool:
    return await deliveries.record_attempt(
        delivery_id,
        attempt,
        status,
        next_attempt_at=next_at,
        last_status=code,
        last_error=None if status is DeliveryStatus.DELIVERED else f"HTTP {code}",
        now=T0 + timedelta(seconds=attempt),
    )


# -- which jobs are to be notified ------------------------------------------------------------


async def test_finished_jobs_with_a_callback_are_unnotified_oldest_first(
    store: JobStore, deliveries: Deliveries
) -> None:
    await finished(store, "late", at=T0 + timedelta(seconds=5))
    await finished(store, "failed", JobStatus.FAILED, at=T0 + timedelta(seconds=1))
    await store.create(with_callback("cancelled"), DOCS)
    assert await store.cancel("cancelled", T0 + timedelta(seconds=3)) is not None
    unnotified = await deliveries.unnotified(10)
    assert [job.id for job in unnotified] == ["failed", "cancelled", "late"]
    assert unnotified[0].options.callback_url == URL
    assert unnotified[0].error == JobError("engine_error", "boom")
    assert [job.id for job in await deliveries.unnotified(2)] == ["failed", "cancelled"]


async def test_unfinished_jobs_and_jobs_without_a_callback_are_not_notified(
    store: JobStore,
    deliveries: Deliveries,
) -> None:
    await store.create(with_callback("queued"), DOCS)
    await store.create(with_callback("running"), DOCS)
    assert await mark_submitted(store, "running", T0) is not None
    await store.create(with_callback("silent", url=None), DOCS)
    assert await store.cancel("silent", T0) is not None
    assert await deliveries.unnotified(10) == []


async def test_a_sharded_job_is_notified_once_as_its_parent(
    store: JobStore, deliveries: Deliveries
) -> None:
    parent, shards = a_parent("p")
    parent.options = JobOptions(callback_url=URL)
    shards = [replace(shard, options=parent.options) for shard in shards]
    await store.create(parent, SHARDED_DOCS, shards)
    assert await store.cancel("p", T0) is not None
    assert [job.id for job in await deliveries.unnotified(10)] == ["p"]


# -- creating deliveries -------------------------------------------------------------------


async def test_a_delivery_reads_back_as_stored_and_marks_its_job_notified(
    store: JobStore,
    deliveries: Deliveries,
) -> None:
    job = await finished(store, "j1")
    delivery = a_delivery(job)
    assert await deliveries.add_delivery(delivery)
    assert await deliveries.deliveries("j1") == [delivery]
    assert await deliveries.unnotified(10) == []


async def test_a_second_delivery_for_the_same_job_stores_nothing(
    store: JobStore, deliveries: Deliveries
) -> None:
    job = await finished(store, "j1")
    assert await deliveries.add_delivery(a_delivery(job, "msg_first"))
    assert not await deliveries.add_delivery(a_delivery(job, "msg_second"))
    assert [d.id for d in await deliveries.deliveries("j1")] == ["msg_first"]


async def test_concurrent_notifiers_create_one_delivery_per_job(
    store: JobStore, deliveries: Deliveries
) -> None:
    job = await finished(store, "j1")
    made = await asyncio.gather(
        *(deliveries.add_delivery(a_delivery(job, f"msg_{i}")) for i in range(4))
    )
    assert sorted(made) == [False, False, False, True]
    assert len(await deliveries.deliveries("j1")) == 1


# -- attempts ---------------------------------------------------------------------------


async def test_due_deliveries_are_the_pending_ones_whose_time_has_come_soonest_first(
    store: JobStore,
    deliveries: Deliveries,
) -> None:
    for i, delay in enumerate([30, 0, 10, 3600]):
        job = await finished(store, f"j{i}")
        await deliveries.add_delivery(a_delivery(job, due=T0 + timedelta(seconds=delay)))
    await deliveries.add_delivery(a_delivery(await finished(store, "done")))
    assert await record(deliveries, "msg_done", 1, DeliveryStatus.DELIVERED, code=204)
    due = await deliveries.due_deliveries(T0 + timedelta(seconds=60), limit=10)
    assert [d.id for d in due] == ["msg_j1", "msg_j2", "msg_j0"]
    assert [d.id for d in await deliveries.due_deliveries(T0 + timedelta(seconds=60), limit=1)] == [
        "msg_j1"
    ]


async def test_a_failed_attempt_schedules_the_next_and_keeps_the_delivery_pending(
    store: JobStore,
    deliveries: Deliveries,
) -> None:
    await deliveries.add_delivery(a_delivery(await finished(store, "j1")))
    later = T0 + timedelta(seconds=5)
    assert await record(deliveries, "msg_j1", 1, DeliveryStatus.PENDING, next_at=later)
    (delivery,) = await deliveries.deliveries("j1")
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == (
        DeliveryStatus.PENDING,
        1,
        later,
    )
    assert (delivery.last_status, delivery.last_error) == (500, "HTTP 500")
    assert await deliveries.due_deliveries(T0 + timedelta(seconds=4), 10) == []
    assert [d.id for d in await deliveries.due_deliveries(later, 10)] == ["msg_j1"]


async def test_an_attempt_is_recorded_once(store: JobStore, deliveries: Deliveries) -> None:
    await deliveries.add_delivery(a_delivery(await finished(store, "j1")))
    assert await record(deliveries, "msg_j1", 1, DeliveryStatus.PENDING, next_at=T0)
    assert not await record(deliveries, "msg_j1", 1, DeliveryStatus.DELIVERED, code=200)
    assert not await record(deliveries, "msg_j1", 3, DeliveryStatus.PENDING, next_at=T0)
    (delivery,) = await deliveries.deliveries("j1")
    assert (delivery.attempts, delivery.status) == (1, DeliveryStatus.PENDING)


async def test_a_delivered_delivery_is_never_due_again(
    store: JobStore, deliveries: Deliveries
) -> None:
    await deliveries.add_delivery(a_delivery(await finished(store, "j1")))
    assert await record(deliveries, "msg_j1", 1, DeliveryStatus.PENDING, next_at=T0)
    assert await record(deliveries, "msg_j1", 2, DeliveryStatus.DELIVERED, code=204)
    (delivery,) = await deliveries.deliveries("j1")
    assert (delivery.status, delivery.attempts, delivery.last_status) == (
        DeliveryStatus.DELIVERED,
        2,
        204,
    )
    assert delivery.delivered_at == T0 + timedelta(seconds=2)
    assert delivery.last_error is None
    assert await deliveries.due_deliveries(T0 + timedelta(days=30), 10) == []
    assert not await record(deliveries, "msg_j1", 3, DeliveryStatus.PENDING, next_at=T0)


async def test_a_given_up_delivery_keeps_why_and_is_never_due_again(
    store: JobStore, deliveries: Deliveries
) -> None:
    await deliveries.add_delivery(a_delivery(await finished(store, "j1")))
    assert await record(deliveries, "msg_j1", 1, DeliveryStatus.FAILED, code=410)
    (delivery,) = await deliveries.deliveries("j1")
    assert (delivery.status, delivery.last_status, delivery.last_error) == (
        DeliveryStatus.FAILED,
        410,
        "HTTP 410",
    )
    assert delivery.delivered_at is None
    assert await deliveries.due_deliveries(T0 + timedelta(days=30), 10) == []


async def test_an_unknown_delivery_records_nothing(deliveries: Deliveries) -> None:
    assert not await record(deliveries, "msg_nobody", 1, DeliveryStatus.DELIVERED, code=200)


# -- retention --------------------------------------------------------------------------


async def test_purging_a_job_deletes_its_deliveries(
    store: JobStore, deliveries: Deliveries
) -> None:
    await deliveries.add_delivery(a_delivery(await finished(store, "old")))
    await deliveries.add_delivery(
        a_delivery(await finished(store, "new", at=T0 + timedelta(days=2)))
    )
    assert await store.purge(T0 + timedelta(days=1)) == 1
    assert await deliveries.deliveries("old") == []
    assert [d.id for d in await deliveries.deliveries("new")] == ["msg_new"]
    assert [d.id for d in await deliveries.due_deliveries(T0 + timedelta(days=3), 10)] == [
        "msg_new"
    ]
