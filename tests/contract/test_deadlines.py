"""Deadlines in the store, on SQLite and PostgreSQL: a job keeps its deadline wherever it is
read (the watchdog's reload too), the forecast's predicted ends land on the rows (a parent
takes its shards' latest), and a job at risk is warned once."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from dragoman.models import JobOptions, JobStatus
from dragoman.store import JobStore
from dragoman.store.sql import SqlJobStore
from dragoman.store.tables import jobs
from dragoman.webhooks import Deliveries
from dragoman.webhooks.store import AT_RISK
from tests.attempts import claim, mark_submitted
from tests.contract.test_deliveries import a_delivery, with_callback
from tests.contract.test_job_store import DOCS, SHARDED_DOCS, T0, a_job, a_parent

pytestmark = pytest.mark.timeout(30)

DUE = datetime(2026, 1, 1, 17, 30, 15, 123456, tzinfo=UTC)


async def test_a_deadline_is_kept_wherever_its_job_is_read(store: JobStore) -> None:
    job = a_job("due")
    job.options = JobOptions(deadline=DUE)
    await store.create(job, DOCS)
    await store.create(a_job("plain"), DOCS)
    read = await store.get("due")
    assert read is not None and read.options.deadline == DUE
    assert read.options.deadline.utcoffset() == timedelta(0)
    assert read.eta_at is None
    reloaded = {j.id: j.options.deadline for j in await store.in_status([JobStatus.QUEUED])}
    assert reloaded == {"due": DUE, "plain": None}
    listed, _ = await store.list_jobs(tenant=None, status=None, limit=10, cursor=None)
    assert {j.id: j.options.deadline for j in listed} == reloaded


async def test_shards_carry_their_parents_deadline(store: JobStore) -> None:
    parent, shards = a_parent("p")
    parent.options = JobOptions(deadline=DUE)
    await store.create(parent, SHARDED_DOCS, [replace(s, options=parent.options) for s in shards])
    queued = await store.in_status([JobStatus.QUEUED])
    assert [job.options.deadline for job in queued] == [DUE] * 3


async def test_predicted_ends_are_written_and_a_parent_takes_its_latest_unfinished_shards(
    store: JobStore,
) -> None:
    parent, shards = a_parent("p")
    await store.create(parent, SHARDED_DOCS, shards)
    await store.create(a_job("plain"), DOCS)
    at = [T0 + timedelta(minutes=m) for m in (5, 9, 7)]
    written = await store.set_etas({"p.0": at[0], "p.1": at[1], "p.2": at[2], "gone": T0})
    assert written == {"p.0", "p.1", "p.2"}
    assert [(await store.get(f"p.{i}")).eta_at for i in range(3)] == at  # type: ignore[union-attr]
    assert (await store.get("p")).eta_at == at[1]  # type: ignore[union-attr]

    # Its latest shard ends: the parent's end is now its other shards' latest.
    assert await mark_submitted(store, "p.1", T0) is not None
    assert await claim(store, "p.1", 1, T0)
    assert await store.finish("p.1", 1, JobStatus.SUCCEEDED, None, T0)
    await store.set_etas({"p.0": at[0] + timedelta(minutes=1)})
    assert (await store.get("p")).eta_at == at[2]  # type: ignore[union-attr]

    # A shard with no prediction leaves its parent with none.
    await store.set_etas({"p.2": None, "plain": at[0]})
    assert (await store.get("p")).eta_at is None  # type: ignore[union-attr]
    assert (await store.get("plain")).eta_at == at[0]  # type: ignore[union-attr]


async def test_a_row_another_transaction_holds_is_left_for_the_next_forecast(
    store: SqlJobStore,
) -> None:
    if store.database._sqlite:
        pytest.skip("SQLite has one writer at a time: no row is ever held beside the forecast")
    await store.create(a_job("held"), DOCS)
    await store.create(a_job("free"), DOCS)
    locked, release = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with store.database.tx() as conn:
            await conn.execute(select(jobs.c.id).where(jobs.c.id == "held").with_for_update())
            locked.set()
            await release.wait()

    holder = asyncio.create_task(hold())
    await locked.wait()
    try:
        async with asyncio.timeout(5):  # it never waits for the lock
            written = await store.set_etas({"held": T0, "free": T0})
    finally:
        release.set()
        await holder
    assert written == {"free"}
    assert (await store.get("held")).eta_at is None  # type: ignore[union-attr]
    assert await store.set_etas({"held": T0}) == {"held"}


async def test_a_job_that_will_miss_its_deadline_is_warned_once(
    store: JobStore, deliveries: Deliveries
) -> None:
    now = T0 + timedelta(hours=1)

    async def create(job_id: str, deadline: datetime | None, *, callback: bool = True) -> None:
        job = with_callback(job_id) if callback else a_job(job_id)
        job.options = replace(job.options, deadline=deadline)
        await store.create(job, DOCS)

    await create("overdue", now - timedelta(minutes=1))
    await create("late", now + timedelta(minutes=30))
    await create("on-time", now + timedelta(minutes=30))
    await create("no-deadline", None)
    await create("no-callback", now - timedelta(hours=1), callback=False)
    await create("ended", now - timedelta(minutes=5))
    assert await store.cancel("ended", now) is not None
    await store.set_etas(
        {
            "late": now + timedelta(minutes=31),
            "on-time": now + timedelta(minutes=29),
            "no-deadline": now + timedelta(days=1),
        }
    )
    at_risk = await deliveries.at_risk(now, 10)
    assert [job.id for job in at_risk] == ["overdue", "late"]  # the earliest deadline first
    assert at_risk[1].at_risk(now) and not at_risk[1].status.finished

    warning = replace(a_delivery(at_risk[0], "msg_warn"), event=AT_RISK)
    assert await deliveries.add_delivery(warning)
    assert not await deliveries.add_delivery(replace(warning, id="msg_again"))
    assert [job.id for job in await deliveries.at_risk(now, 10)] == ["late"]

    # The warning is no notification of its end: that one is still made.
    assert await store.cancel("overdue", now) is not None
    (ended,) = [job for job in await deliveries.unnotified(10) if job.id == "overdue"]
    assert await deliveries.add_delivery(a_delivery(ended, "msg_end"))
    events = [d.event for d in await deliveries.deliveries("overdue")]
    assert sorted(events) == [AT_RISK, "job.succeeded"]
