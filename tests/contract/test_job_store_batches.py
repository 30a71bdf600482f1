"""The ``JobStore`` contract for several jobs at once (a message of small jobs is submitted,
claimed, beaten, written and finished in one transaction), against SQLite and PostgreSQL.
Each job stays fenced by its own attempt."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from dragoman.models import JobError, JobStatus
from dragoman.store import ChunkWrite, Ending, JobStore
from tests.attempts import mark_submitted, results
from tests.contract.test_job_store import (
    DOCS,
    T0,
    a_job,
    running_shards,
    sharded,
    status_of,
    submitted,
)


async def running(store: JobStore, *ids: str) -> None:
    for job_id in ids:
        await submitted(store, job_id)
    assert len(await store.claim_many([(job_id, 1) for job_id in ids], T0)) == len(ids)


async def test_submitting_many_moves_the_queued_ones_in_the_order_given(store: JobStore) -> None:
    for job_id in ("a", "b", "c"):
        await store.create(a_job(job_id), DOCS)
    assert await store.cancel("b", T0) is not None

    found = await store.mark_submitted_many(["c", "b", "a"], T0)

    assert [(job.id, job.status, job.attempts) for job in found] == [
        ("c", JobStatus.SUBMITTED, 1),
        ("a", JobStatus.SUBMITTED, 1),
    ]
    assert await store.mark_submitted_many(["a", "c"], T0) == []


async def test_claiming_many_takes_each_current_attempt_once(store: JobStore) -> None:
    for job_id in ("a", "b", "c", "d"):
        await submitted(store, job_id)
    await store.cancel("b", T0)
    assert await store.requeue("c", 1, T0)
    assert await mark_submitted(store, "c", T0) is not None  # attempt 2: attempt 1 is stale

    claimed = await store.claim_many([("a", 1), ("b", 1), ("c", 1), ("d", 1)], T0)

    assert [(job.id, job.status) for job in claimed] == [
        ("a", JobStatus.RUNNING),
        ("d", JobStatus.RUNNING),
    ]
    assert await store.claim_many([("a", 1), ("d", 1)], T0) == []  # a second delivery
    assert [job.id for job in await store.claim_many([("c", 2)], T0)] == ["c"]


async def test_heartbeats_of_many_answer_for_each_job(store: JobStore) -> None:
    await running(store, "a", "b", "c")
    await store.cancel("b", T0)
    later = T0 + timedelta(seconds=3)

    answers = await store.heartbeat_many([("a", 1), ("b", 1), ("c", 2), ("gone", 1)], later)

    assert answers == {
        "a": JobStatus.RUNNING,
        "b": JobStatus.CANCELLED,
        "c": None,  # not the current attempt
        "gone": None,
    }
    job = await store.get("a")
    assert job is not None and job.heartbeat_at == later


async def test_a_chunk_of_many_jobs_is_written_each_behind_its_own_fence(store: JobStore) -> None:
    await running(store, "a", "b", "c")
    await store.cancel("b", T0)
    assert await store.requeue("c", 1, T0)
    assert await mark_submitted(store, "c", T0) is not None  # attempt 2

    written = await store.write_chunk(
        [
            ChunkWrite("a", 1, [(0, "uno"), (2, "tres")]),
            ChunkWrite("b", 1, [(0, "late")]),
            ChunkWrite("c", 1, [(1, "stale")]),
        ],
        T0,
    )

    assert written == {"a"}
    assert await results(store, "a") == [("a.txt", ["uno", None]), ("b.txt", ["tres"])]
    assert await results(store, "b") == [("a.txt", [None, None]), ("b.txt", [None])]
    assert await results(store, "c") == [("a.txt", [None, None]), ("b.txt", [None])]
    job = await store.get("a")
    assert job is not None and job.segments_done == 2
    assert (await store.sources_many(["a", "c"])) == {
        "a": [(1, "two")],
        "c": [(0, "one"), (1, "two"), (2, "three")],
    }


async def test_a_chunk_write_keeps_a_shard_to_its_range_beside_plain_jobs(
    store: JobStore,
) -> None:
    ids = await running_shards(store)
    await running(store, "a")

    written = await store.write_chunk(
        [ChunkWrite(ids[1], 1, [(2, "t2"), (3, "t3"), (5, "stray")]), ChunkWrite("a", 1, [])],
        T0,
    )

    assert written == {ids[1], "a"}
    assert await results(store, "p") == [
        ("a.txt", [None, None, "t2", "t3"]),
        ("b.txt", [None, None]),
    ]
    parent = await store.get("p")
    shard = await store.get(ids[1])
    assert parent is not None and shard is not None
    assert (parent.segments_done, shard.segments_done) == (2, 2)
    assert await store.sources_many([ids[0], ids[1]]) == {
        ids[0]: [(0, "s0"), (1, "s1")],
        ids[1]: [],
    }


async def test_many_attempts_end_at_once_each_as_told_and_stale_ones_not(
    store: JobStore,
) -> None:
    await running(store, "a", "b", "c", "d")
    assert await store.requeue("d", 1, T0)
    broke = JobError("engine_error", "it broke")

    finished = await store.finish_many(
        [
            Ending("a", 1, JobStatus.SUCCEEDED),
            Ending("b", 1, JobStatus.FAILED, broke),
            Ending("c", 1, JobStatus.SUCCEEDED),
            Ending("d", 1, JobStatus.SUCCEEDED),
        ],
        T0,
    )

    assert finished == {"a", "b", "c"}
    b = await store.get("b")
    assert b is not None and (b.status, b.error, b.finished_at) == (JobStatus.FAILED, broke, T0)
    assert await status_of(store, "c") is JobStatus.SUCCEEDED
    assert await status_of(store, "d") is JobStatus.QUEUED
    assert await store.finish_many([Ending("a", 1, JobStatus.FAILED, broke)], T0) == set()


async def test_the_last_shard_ending_among_many_ends_its_parent(store: JobStore) -> None:
    ids = await running_shards(store)
    await running(store, "a")
    for shard_id in ids[:2]:
        assert await store.finish(shard_id, 1, JobStatus.SUCCEEDED, None, T0)

    finished = await store.finish_many(
        [Ending("a", 1, JobStatus.SUCCEEDED), Ending(ids[2], 1, JobStatus.SUCCEEDED)], T0
    )

    assert finished == {"a", ids[2]}
    assert await status_of(store, "p") is JobStatus.SUCCEEDED


async def test_overlapping_batches_in_any_order_neither_deadlock_nor_mix_fences(
    store: JobStore,
) -> None:
    ids = [f"j{i}" for i in range(8)]
    await running(store, *ids)
    backwards = ids[::-1]
    calls = []
    for _ in range(3):
        calls += [
            store.heartbeat_many([(job_id, 1) for job_id in backwards], T0),
            store.write_chunk([ChunkWrite(job_id, 1, [(0, job_id)]) for job_id in ids], T0),
            store.heartbeat_many([(job_id, 1) for job_id in ids], T0),
            store.write_chunk([ChunkWrite(job_id, 1, [(1, job_id)]) for job_id in backwards], T0),
        ]
    calls.append(store.finish_many([Ending(job_id, 1, JobStatus.SUCCEEDED) for job_id in ids], T0))

    await asyncio.wait_for(asyncio.gather(*calls), timeout=30)

    for job_id in ids:
        assert await status_of(store, job_id) is JobStatus.SUCCEEDED
        # Written before the end or refused after it: never another job's text.
        assert set((await results(store, job_id))[0][1]) <= {job_id, None}


async def test_a_shard_submitted_among_none_submits_its_parent(store: JobStore) -> None:
    ids = await sharded(store)

    (shard,) = await store.mark_submitted_many([ids[0]], T0)

    assert shard.id == ids[0]
    assert await status_of(store, "p") is JobStatus.SUBMITTED
