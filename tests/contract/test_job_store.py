"""The ``JobStore`` contract, run against SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from dragoman.models import (
    Document,
    Job,
    JobError,
    JobOptions,
    JobStatus,
    Origin,
    Pool,
    SourceFile,
)
from dragoman.store import JobStore
from tests.attempts import claim, heartbeat, mark_submitted, results, write_results

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def a_job(job_id: str, *, tenant: str | None = None, segments: int = 3) -> Job:
    return Job(
        id=job_id,
        tenant=tenant,
        source_lang="en",
        target_lang="es",
        engine="apertium",
        pool=Pool.CPU,
        documents=2,
        segments_total=segments,
        created_at=T0,
    )


DOCS = [Document("a.txt", ["one", "two"]), Document("b.txt", ["three"])]


async def submitted(store: JobStore, job_id: str = "j1") -> Job:
    await store.create(a_job(job_id), DOCS)
    job = await mark_submitted(store, job_id, T0)
    assert job is not None
    return job


async def test_a_job_created_failed_keeps_its_error_and_end(store: JobStore) -> None:
    error = JobError("source_is_target", "Source and target language are equal.")
    failed = replace(a_job("j1"), status=JobStatus.FAILED, error=error, finished_at=T0)
    await store.create(failed, DOCS)
    job = await store.get("j1")
    assert job is not None
    assert (job.status, job.error, job.finished_at) == (JobStatus.FAILED, error, T0)
    assert await store.in_status([JobStatus.QUEUED]) == []  # never dispatched


async def test_a_created_job_reads_back_queued_with_its_segments(store: JobStore) -> None:
    await store.create(a_job("j1", tenant="t"), DOCS)
    job = await store.get("j1")
    assert job is not None
    assert (job.status, job.tenant, job.segments_total, job.attempts) == (
        JobStatus.QUEUED,
        "t",
        3,
        0,
    )
    assert job.created_at == T0
    assert await store.sources("j1") == [(0, "one"), (1, "two"), (2, "three")]
    assert await results(store, "j1") == [("a.txt", [None, None]), ("b.txt", [None])]


async def test_a_job_keeps_its_memories_glossary_and_cache_switch(store: JobStore) -> None:
    job = a_job("j1")
    job.options = JobOptions(memories=("product", "legal"), glossary="g-1", use_cache=False)
    await store.create(job, DOCS)
    found = await store.get("j1")
    assert found is not None
    assert found.options == job.options
    await store.create(a_job("j2"), DOCS)
    plain = await store.get("j2")
    assert plain is not None
    assert plain.options == JobOptions()


async def test_a_creation_that_cannot_be_stored_fails_its_caller_and_not_the_next(
    store: JobStore,
) -> None:
    broken = Document("broken", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        await asyncio.wait_for(store.create(a_job("bad"), [broken]), 5)
    await asyncio.wait_for(store.create(a_job("j1"), DOCS), 5)
    assert await store.get("bad") is None and await store.get("j1") is not None


async def stored_file(
    store: JobStore, job_id: str, ordinal: int
) -> tuple[str, SourceFile, list[str | None]] | None:
    found = await store.source_file(job_id, ordinal)
    return None if found is None else (found[1].name, found[0], found[1].targets)


async def test_an_uploaded_file_is_kept_with_its_job_byte_for_byte(store: JobStore) -> None:
    content = bytes(range(256)) * 4  # any bytes, NUL included
    upload = SourceFile("docx", content, (2, 0, 1))
    docs = [Document("a.txt", ["one"]), Document("r.docx", ["<g1>x</g1>", "y", "z"], upload)]
    await store.create(replace(a_job("j1", segments=4), options=JobOptions(markup=True)), docs)
    job = await store.get("j1")
    assert job is not None and job.options.markup
    assert await stored_file(store, "j1", 1) == ("r.docx", upload, [None, None, None])
    assert await write_results(store, "j1", 0, [(2, "Y")], T0) is False  # not claimed yet
    await mark_submitted(store, "j1", T0)
    assert await claim(store, "j1", 1, T0)
    assert await write_results(store, "j1", 1, [(2, "Y")], T0)
    assert await stored_file(store, "j1", 1) == ("r.docx", upload, [None, "Y", None])
    assert await store.source_file("j1", 0) is None  # plain segments: no file
    assert await store.source_file("j1", 2) is None
    assert await store.sources("j1") == [(0, "one"), (1, "<g1>x</g1>"), (3, "z")]
    await store.create(a_job("j2"), DOCS)
    plain = await store.get("j2")
    assert plain is not None and not plain.options.markup


async def test_an_unknown_job_is_none(store: JobStore) -> None:
    assert await store.get("missing") is None


async def test_submitting_counts_an_attempt_and_only_once(store: JobStore) -> None:
    job = await submitted(store)
    assert (job.status, job.attempts, job.submitted_at) == (JobStatus.SUBMITTED, 1, T0)
    assert await mark_submitted(store, "j1", T0) is None


async def test_the_first_heartbeat_starts_running(store: JobStore) -> None:
    await submitted(store)
    later = T0 + timedelta(seconds=5)
    assert await heartbeat(store, "j1", 1, later) is JobStatus.RUNNING
    job = await store.get("j1")
    assert job is not None
    assert (job.status, job.started_at, job.heartbeat_at) == (JobStatus.RUNNING, later, later)


async def test_results_are_written_in_chunks_and_read_partially(store: JobStore) -> None:
    await submitted(store)
    assert await write_results(store, "j1", 1, [(0, "uno"), (2, "tres")], T0)
    assert await results(store, "j1") == [("a.txt", ["uno", None]), ("b.txt", ["tres"])]
    assert [d.origins for d in await store.documents("j1")] == [[Origin.MT, None], [Origin.MT]]
    assert await store.sources("j1") == [(1, "two")]
    job = await store.get("j1")
    assert job is not None and job.segments_done == 2


async def test_a_stale_attempt_can_neither_write_nor_finish(store: JobStore) -> None:
    await submitted(store)
    assert await store.requeue("j1", 1, T0)
    assert await mark_submitted(store, "j1", T0) is not None  # attempt 2
    assert not await write_results(store, "j1", 1, [(0, "stale")], T0)
    assert not await store.finish("j1", 1, JobStatus.SUCCEEDED, None, T0)
    assert await heartbeat(store, "j1", 1, T0) is None
    assert await results(store, "j1") == [("a.txt", [None, None]), ("b.txt", [None])]
    assert await write_results(store, "j1", 2, [(0, "uno")], T0)


async def test_finishing_records_status_time_and_error(store: JobStore) -> None:
    await submitted(store)
    error = JobError("engine_error", "it broke")
    assert await store.finish("j1", 1, JobStatus.FAILED, error, T0)
    job = await store.get("j1")
    assert job is not None
    assert (job.status, job.error, job.finished_at) == (JobStatus.FAILED, error, T0)


async def test_cancelling_stops_writes_and_reports_to_heartbeats(store: JobStore) -> None:
    await submitted(store)
    cancelled = await store.cancel("j1", T0)
    assert cancelled is not None and cancelled.status is JobStatus.CANCELLED
    assert await heartbeat(store, "j1", 1, T0) is JobStatus.CANCELLED
    assert not await write_results(store, "j1", 1, [(0, "late")], T0)
    assert await store.cancel("j1", T0) is None


async def test_stale_lists_running_jobs_with_old_heartbeats(store: JobStore) -> None:
    for job_id in ("old", "fresh", "waiting"):
        await submitted(store, job_id)
    assert await claim(store, "old", 1, T0)
    assert await claim(store, "fresh", 1, T0)
    await heartbeat(store, "fresh", 1, T0 + timedelta(seconds=60))
    stale = await store.stale(T0 + timedelta(seconds=30))
    # A submitted job no worker has claimed yet has no heartbeats to miss.
    assert [job.id for job in stale] == ["old"]


async def test_unclaimed_submissions_are_listed_and_their_wait_restarts(store: JobStore) -> None:
    await submitted(store, "waiting")
    await submitted(store, "taken")
    assert await claim(store, "taken", 1, T0)
    later = T0 + timedelta(seconds=30)
    assert [job.id for job in await store.unclaimed(later)] == ["waiting"]
    assert await store.resubmit("waiting", 1, later)
    assert await store.unclaimed(later) == []
    assert not await store.resubmit("waiting", 2, later)  # not its attempt
    assert not await store.resubmit("taken", 1, later)  # claimed already
    assert await claim(store, "waiting", 1, later)


async def test_listing_is_newest_first_paged_and_per_tenant(store: JobStore) -> None:
    for i in range(5):
        await store.create(a_job(f"a{i}", tenant="a"), DOCS)
    await store.create(a_job("b0", tenant="b"), DOCS)
    page, cursor = await store.list_jobs(tenant="a", status=None, limit=2, cursor=None)
    assert [job.id for job in page] == ["a4", "a3"]
    page, cursor = await store.list_jobs(tenant="a", status=None, limit=2, cursor=cursor)
    assert [job.id for job in page] == ["a2", "a1"]
    page, cursor = await store.list_jobs(tenant="a", status=None, limit=2, cursor=cursor)
    assert [job.id for job in page] == ["a0"] and cursor is None
    everyone, _ = await store.list_jobs(tenant=None, status=None, limit=10, cursor=None)
    assert len(everyone) == 6


async def test_listing_filters_by_status(store: JobStore) -> None:
    await store.create(a_job("q"), DOCS)
    await submitted(store, "s")
    page, _ = await store.list_jobs(tenant=None, status=JobStatus.SUBMITTED, limit=10, cursor=None)
    assert [job.id for job in page] == ["s"]


async def test_purge_deletes_only_finished_jobs_past_the_cutoff(store: JobStore) -> None:
    await submitted(store, "done")
    await store.finish("done", 1, JobStatus.SUCCEEDED, None, T0)
    await submitted(store, "busy")
    assert await store.purge(T0 + timedelta(seconds=1)) == 1
    assert await store.get("done") is None
    assert await results(store, "done") == []
    assert await store.get("busy") is not None


async def test_counts_cover_every_status(store: JobStore) -> None:
    await store.create(a_job("q"), DOCS)
    await submitted(store, "s")
    counts = await store.counts()
    assert counts[JobStatus.QUEUED] == 1 and counts[JobStatus.SUBMITTED] == 1
    assert set(counts) == set(JobStatus)


async def test_ping_answers_when_open(store: JobStore) -> None:
    await store.database.ping()


async def test_one_delivery_of_an_attempt_claims_it(store: JobStore) -> None:
    await submitted(store)
    assert await claim(store, "j1", 1, T0)
    assert not await claim(store, "j1", 1, T0)  # a redelivered message finds it claimed
    assert not await claim(store, "j1", 2, T0)
    job = await store.get("j1")
    assert job is not None and job.status is JobStatus.RUNNING and job.started_at == T0


async def test_a_cancelled_job_cannot_be_claimed(store: JobStore) -> None:
    await submitted(store)
    await store.cancel("j1", T0)
    assert not await claim(store, "j1", 1, T0)


async def test_counts_are_per_pool_on_request(store: JobStore) -> None:
    await store.create(a_job("c"), DOCS)
    gpu = a_job("g")
    gpu.pool = Pool.GPU
    await store.create(gpu, DOCS)
    assert (await store.counts())[JobStatus.QUEUED] == 2
    assert (await store.counts(Pool.GPU))[JobStatus.QUEUED] == 1


# -- sharded jobs ---------------------------------------------------------------------------

SHARDED_DOCS = [Document("a.txt", ["s0", "s1", "s2", "s3"]), Document("b.txt", ["s4", "s5"])]
BOUNDS = [(0, 2), (2, 4), (4, 6)]


def a_parent(job_id: str = "p", bounds: list[tuple[int, int]] = BOUNDS) -> tuple[Job, list[Job]]:
    parent = a_job(job_id, segments=bounds[-1][1])
    parent.shards = len(bounds)
    shards = [
        replace(
            parent,
            id=f"{job_id}.{i}",
            parent_id=job_id,
            first_position=first,
            end_position=end,
            shards=0,
            documents=0,
            segments_total=end - first,
        )
        for i, (first, end) in enumerate(bounds)
    ]
    return parent, shards


async def sharded(store: JobStore, job_id: str = "p") -> list[str]:
    """Creates a parent with three shards; returns the shards' ids."""
    parent, shards = a_parent(job_id)
    await store.create(parent, SHARDED_DOCS, shards)
    return [shard.id for shard in shards]


async def running_shards(store: JobStore, job_id: str = "p") -> list[str]:
    """A parent whose three shards were each submitted and claimed (attempt 1) at T0."""
    ids = await sharded(store, job_id)
    for shard_id in ids:
        assert await mark_submitted(store, shard_id, T0) is not None
        assert await claim(store, shard_id, 1, T0)
    return ids


async def status_of(store: JobStore, job_id: str) -> JobStatus:
    job = await store.get(job_id)
    assert job is not None
    return job.status


async def test_a_sharded_job_lists_as_one_and_dispatches_as_its_shards(store: JobStore) -> None:
    ids = await sharded(store)
    listed, _ = await store.list_jobs(tenant=None, status=None, limit=10, cursor=None)
    assert [job.id for job in listed] == ["p"]
    assert [job.id for job in await store.in_status([JobStatus.QUEUED])] == ids
    parent, shard = await store.get("p"), await store.get("p.1")
    assert parent is not None and shard is not None
    assert (parent.shards, parent.is_parent, parent.is_shard) == (3, True, False)
    assert (shard.parent_id, shard.first_position, shard.end_position) == ("p", 2, 4)
    assert (shard.is_shard, shard.documents, shard.segments_total, shard.shards) == (
        True,
        0,
        2,
        0,
    )


async def test_a_parent_must_bring_as_many_shards_as_it_announces(store: JobStore) -> None:
    parent, shards = a_parent()
    with pytest.raises(ValueError):
        await store.create(parent, SHARDED_DOCS, shards[:2])
    assert await store.get("p") is None


async def test_a_shard_reads_the_untranslated_sources_of_its_range(store: JobStore) -> None:
    await running_shards(store)
    assert await store.sources("p.1") == [(2, "s2"), (3, "s3")]
    assert await write_results(store, "p.1", 1, [(2, "t2")], T0)
    assert await store.sources("p.1") == [(3, "s3")]
    assert await store.sources("p.2") == [(4, "s4"), (5, "s5")]


async def test_shard_results_land_in_the_parents_results_in_order(store: JobStore) -> None:
    await running_shards(store)
    assert await write_results(store, "p.2", 1, [(4, "t4")], T0)
    assert await write_results(store, "p.0", 1, [(0, "t0"), (1, "t1")], T0)
    # A position outside the shard's range is not the shard's to write.
    assert await write_results(store, "p.1", 1, [(3, "t3"), (5, "stray")], T0)
    assert await results(store, "p") == [
        ("a.txt", ["t0", "t1", None, "t3"]),
        ("b.txt", ["t4", None]),
    ]
    done = {}
    for job_id in ("p", "p.0", "p.1", "p.2"):
        job = await store.get(job_id)
        assert job is not None
        done[job_id] = job.segments_done
    assert done == {"p": 4, "p.0": 2, "p.1": 1, "p.2": 1}


async def test_a_stale_shard_attempt_changes_nothing(store: JobStore) -> None:
    await running_shards(store)
    assert await store.requeue("p.0", 1, T0)
    assert await mark_submitted(store, "p.0", T0) is not None  # attempt 2
    assert not await write_results(store, "p.0", 1, [(0, "stale")], T0)
    assert not await store.finish("p.0", 1, JobStatus.FAILED, JobError("x", "stale"), T0)
    assert await heartbeat(store, "p.0", 1, T0) is None
    assert await results(store, "p") == [("a.txt", [None] * 4), ("b.txt", [None, None])]
    parent = await store.get("p")
    assert parent is not None
    assert (parent.status, parent.segments_done, parent.error) == (JobStatus.RUNNING, 0, None)


async def test_the_parent_goes_queued_submitted_running_with_its_shards(store: JobStore) -> None:
    await sharded(store)
    t1, t2, t3 = (T0 + timedelta(seconds=s) for s in (1, 2, 3))
    assert await mark_submitted(store, "p", T0) is None  # a parent is never dispatched
    assert await status_of(store, "p") is JobStatus.QUEUED
    assert await mark_submitted(store, "p.0", T0) is not None
    parent = await store.get("p")
    assert parent is not None
    assert (parent.status, parent.submitted_at) == (JobStatus.SUBMITTED, T0)
    assert not await claim(store, "p", 1, t1)
    assert await claim(store, "p.0", 1, t1)
    assert await mark_submitted(store, "p.1", t2) is not None
    parent = await store.get("p")
    assert parent is not None
    assert (parent.status, parent.submitted_at, parent.started_at, parent.attempts) == (
        JobStatus.RUNNING,
        T0,
        t1,
        1,
    )
    # A retried shard shows on its parent as one more attempt.
    assert await store.requeue("p.0", 1, t2)
    assert await mark_submitted(store, "p.0", t2) is not None
    assert await heartbeat(store, "p.0", 2, t3) is JobStatus.RUNNING
    parent = await store.get("p")
    assert parent is not None
    assert (parent.status, parent.started_at, parent.attempts) == (JobStatus.RUNNING, t1, 2)


async def test_the_parent_succeeds_when_its_last_shard_does(store: JobStore) -> None:
    ids = await running_shards(store)
    later = T0 + timedelta(seconds=9)
    for shard_id in ids[:-1]:
        assert await store.finish(shard_id, 1, JobStatus.SUCCEEDED, None, T0)
        assert await status_of(store, "p") is JobStatus.RUNNING
    assert await store.finish(ids[-1], 1, JobStatus.SUCCEEDED, None, later)
    parent = await store.get("p")
    assert parent is not None
    assert (parent.status, parent.finished_at, parent.error) == (JobStatus.SUCCEEDED, later, None)


async def test_a_failed_shard_fails_the_parent_and_cancels_the_others(store: JobStore) -> None:
    await running_shards(store)
    later = T0 + timedelta(seconds=9)
    assert await store.finish("p.0", 1, JobStatus.SUCCEEDED, None, T0)
    assert await store.finish("p.1", 1, JobStatus.FAILED, JobError("engine_error", "broke"), later)
    parent = await store.get("p")
    assert parent is not None
    assert (parent.status, parent.error, parent.finished_at) == (
        JobStatus.FAILED,
        JobError("engine_error", "shard 2/3: broke"),
        later,
    )
    sibling = await store.get("p.2")
    assert sibling is not None
    assert (sibling.status, sibling.finished_at) == (JobStatus.CANCELLED, later)
    assert await status_of(store, "p.0") is JobStatus.SUCCEEDED
    assert await heartbeat(store, "p.2", 1, later) is JobStatus.CANCELLED
    assert not await write_results(store, "p.2", 1, [(4, "late")], later)
    assert not await store.finish("p.2", 1, JobStatus.SUCCEEDED, None, later)
    assert await status_of(store, "p") is JobStatus.FAILED


async def test_a_silent_shard_is_stale_but_never_its_parent(store: JobStore) -> None:
    await running_shards(store)
    await heartbeat(store, "p.1", 1, T0 + timedelta(seconds=60))
    await heartbeat(store, "p.2", 1, T0 + timedelta(seconds=60))
    assert [job.id for job in await store.stale(T0 + timedelta(seconds=30))] == ["p.0"]
    assert await store.stale(T0 - timedelta(seconds=1)) == []


async def test_unclaimed_lists_shards_never_their_parent(store: JobStore) -> None:
    ids = await sharded(store)
    for shard_id in ids:
        await mark_submitted(store, shard_id, T0)
    assert [job.id for job in await store.unclaimed(T0 + timedelta(seconds=30))] == ids
    assert not await store.resubmit("p", 1, T0)


async def test_requeueing_a_shard_leaves_its_siblings_and_parent_running(store: JobStore) -> None:
    await running_shards(store)
    assert await store.requeue("p.1", 1, T0)
    assert not await store.requeue("p", 1, T0)
    statuses = {job_id: await status_of(store, job_id) for job_id in ("p", "p.0", "p.1", "p.2")}
    assert statuses == {
        "p": JobStatus.RUNNING,
        "p.0": JobStatus.RUNNING,
        "p.1": JobStatus.QUEUED,
        "p.2": JobStatus.RUNNING,
    }
    assert [job.id for job in await store.in_status([JobStatus.QUEUED])] == ["p.1"]


async def test_cancelling_a_parent_cancels_its_unfinished_shards(store: JobStore) -> None:
    await running_shards(store)
    assert await store.finish("p.0", 1, JobStatus.SUCCEEDED, None, T0)
    later = T0 + timedelta(seconds=9)
    cancelled = await store.cancel("p", later)
    assert cancelled is not None
    assert (cancelled.id, cancelled.status, cancelled.finished_at) == (
        "p",
        JobStatus.CANCELLED,
        later,
    )
    assert await status_of(store, "p.0") is JobStatus.SUCCEEDED
    assert await status_of(store, "p.1") is JobStatus.CANCELLED
    assert await heartbeat(store, "p.2", 1, later) is JobStatus.CANCELLED
    assert await store.cancel("p", later) is None
    assert all(job.is_shard for job in await store.in_status(sorted(JobStatus)))


async def test_purge_removes_a_finished_parent_with_its_shards(store: JobStore) -> None:
    ids = await running_shards(store, "p")
    for shard_id in ids:
        await store.finish(shard_id, 1, JobStatus.SUCCEEDED, None, T0)
    others = await running_shards(store, "q")
    await store.finish(others[0], 1, JobStatus.SUCCEEDED, None, T0)
    assert await store.purge(T0 + timedelta(seconds=1)) == 1
    for job_id in ("p", *ids):
        assert await store.get(job_id) is None
    assert await results(store, "p") == []
    # A finished shard stays while its parent runs.
    assert await store.get(others[0]) is not None
    assert await store.get("q") is not None


async def test_counts_count_shards_not_their_parent(store: JobStore) -> None:
    await sharded(store)
    await store.create(a_job("plain"), DOCS)
    assert await mark_submitted(store, "p.0", T0) is not None
    counts = await store.counts(Pool.CPU)
    assert (counts[JobStatus.QUEUED], counts[JobStatus.SUBMITTED]) == (3, 1)
    assert (await store.counts())[JobStatus.QUEUED] == 3


async def test_reroute_moves_a_queued_unit_to_another_pool(store: JobStore) -> None:
    gpu = a_job("g")
    gpu.pool = Pool.GPU
    await store.create(gpu, DOCS)
    assert await store.reroute("g", Pool.CPU, T0)
    moved = await store.get("g")
    assert moved is not None and moved.pool is Pool.CPU
    assert (await store.counts(Pool.GPU))[JobStatus.QUEUED] == 0
    await submitted(store, "busy")
    assert await claim(store, "busy", 1, T0)
    assert not await store.reroute("busy", Pool.GPU, T0)
    assert not await store.reroute("missing", Pool.GPU, T0)
    await sharded(store)
    assert not await store.reroute("p", Pool.GPU, T0)  # a parent is never dispatched
    assert await store.reroute("p.0", Pool.GPU, T0)
    assert (await store.counts(Pool.GPU))[JobStatus.QUEUED] == 1


async def test_concurrent_finishes_of_the_last_shards_leave_the_parent_succeeded(
    store: JobStore,
) -> None:
    families = [await running_shards(store, f"p{i}") for i in range(6)]
    for ids in families:
        await store.finish(ids[0], 1, JobStatus.SUCCEEDED, None, T0)
    await asyncio.gather(
        *(
            store.finish(shard_id, 1, JobStatus.SUCCEEDED, None, T0)
            for ids in families
            for shard_id in ids[1:]
        )
    )
    for i in range(6):
        assert await status_of(store, f"p{i}") is JobStatus.SUCCEEDED


async def test_concurrent_writes_to_one_family_neither_deadlock_nor_lose_the_end(
    store: JobStore,
) -> None:
    families = [await running_shards(store, f"p{i}") for i in range(4)]
    error = JobError("engine_error", "broke")
    calls = []
    for ids in families:
        calls += [
            write_results(store, ids[0], 1, [(0, "t0"), (1, "t1")], T0),
            heartbeat(store, ids[2], 1, T0),
            store.finish(ids[1], 1, JobStatus.FAILED, error, T0),
            heartbeat(store, ids[0], 1, T0),
            store.cancel(ids[0].split(".")[0], T0),
            write_results(store, ids[2], 1, [(4, "t4")], T0),
        ]
    await asyncio.gather(*calls)
    for ids in families:
        parent_id = ids[0].split(".")[0]
        assert (await status_of(store, parent_id)).finished
        for shard_id in ids:
            assert (await status_of(store, shard_id)).finished


async def test_documents_give_their_sources_in_order_when_asked(store: JobStore) -> None:
    upload = SourceFile("po", b'msgid "x"\nmsgstr ""\n', (0,))
    job = Job(
        id="j1",
        tenant=None,
        source_lang="en",
        target_lang="es",
        engine="apertium",
        pool=Pool.CPU,
        documents=2,
        segments_total=3,
        created_at=T0,
        options=JobOptions(markup=True),
    )
    docs = [Document("a.txt", ["one", "two"]), Document("<b>.po", ["<g1>x</g1>"], upload)]
    await store.create(job, docs)
    found = await store.documents("j1", sources=True)
    assert [(d.name, d.format, d.sources) for d in found] == [
        ("a.txt", None, ["one", "two"]),
        ("<b>.po", "po", ["<g1>x</g1>"]),
    ]
    assert [d.sources for d in await store.documents("j1")] == [None, None]
    assert await store.documents("missing", sources=True) == []


async def test_the_progress_of_many_jobs_is_read_at_once(store: JobStore) -> None:
    await store.create(a_job("j1"), DOCS)
    await submitted(store, "j2")
    assert await store.progress_many(["j1", "j2", "gone"]) == {
        "j1": (JobStatus.QUEUED, 0),
        "j2": (JobStatus.SUBMITTED, 0),
    }
    assert await store.progress_many([]) == {}
