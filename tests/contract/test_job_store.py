"""The ``JobStore`` contract, run against SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dragoman.models import (
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
from dragoman.store import JobStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def a_job(job_id: str, *, tenant: str | None = None, segments: int = 3) -> Job:
    return Job(
        id=job_id,
        tenant=tenant,
        source_lang="en",
        target_lang="es",
        engine="apertium",
        pool=Pool.CPU,
        priority=Priority.NORMAL,
        documents=2,
        segments_total=segments,
        created_at=T0,
    )


DOCS = [Document("a.txt", ["one", "two"]), Document("b.txt", ["three"])]


async def submitted(store: JobStore, job_id: str = "j1") -> Job:
    await store.create(a_job(job_id), DOCS)
    job = await store.mark_submitted(job_id, T0)
    assert job is not None
    return job


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
    assert await store.results("j1") == [("a.txt", [None, None]), ("b.txt", [None])]


async def test_an_unknown_job_is_none(store: JobStore) -> None:
    assert await store.get("missing") is None


async def test_submitting_counts_an_attempt_and_only_once(store: JobStore) -> None:
    job = await submitted(store)
    assert (job.status, job.attempts, job.submitted_at) == (JobStatus.SUBMITTED, 1, T0)
    assert await store.mark_submitted("j1", T0) is None


async def test_the_first_heartbeat_starts_running(store: JobStore) -> None:
    await submitted(store)
    later = T0 + timedelta(seconds=5)
    assert await store.heartbeat("j1", 1, later) is JobStatus.RUNNING
    job = await store.get("j1")
    assert job is not None
    assert (job.status, job.started_at, job.heartbeat_at) == (JobStatus.RUNNING, later, later)


async def test_results_are_written_in_chunks_and_read_partially(store: JobStore) -> None:
    await submitted(store)
    assert await store.write_results("j1", 1, [(0, "uno"), (2, "tres")], T0)
    assert await store.results("j1") == [("a.txt", ["uno", None]), ("b.txt", ["tres"])]
    assert await store.sources("j1") == [(1, "two")]
    job = await store.get("j1")
    assert job is not None and job.segments_done == 2


async def test_a_stale_attempt_can_neither_write_nor_finish(store: JobStore) -> None:
    await submitted(store)
    assert await store.requeue("j1", 1, T0)
    assert await store.mark_submitted("j1", T0) is not None  # attempt 2
    assert not await store.write_results("j1", 1, [(0, "stale")], T0)
    assert not await store.finish("j1", 1, JobStatus.SUCCEEDED, None, T0)
    assert await store.heartbeat("j1", 1, T0) is None
    assert await store.results("j1") == [("a.txt", [None, None]), ("b.txt", [None])]
    assert await store.write_results("j1", 2, [(0, "uno")], T0)


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
    assert await store.heartbeat("j1", 1, T0) is JobStatus.CANCELLED
    assert not await store.write_results("j1", 1, [(0, "late")], T0)
    assert await store.cancel("j1", T0) is None


async def test_stale_lists_running_jobs_with_old_heartbeats(store: JobStore) -> None:
    for job_id in ("old", "fresh", "waiting"):
        await submitted(store, job_id)
    assert await store.claim("old", 1, T0)
    assert await store.claim("fresh", 1, T0)
    await store.heartbeat("fresh", 1, T0 + timedelta(seconds=60))
    stale = await store.stale(T0 + timedelta(seconds=30))
    # A submitted job no worker has claimed yet has no heartbeats to miss.
    assert [job.id for job in stale] == ["old"]


async def test_unclaimed_submissions_are_listed_and_their_wait_restarts(store: JobStore) -> None:
    await submitted(store, "waiting")
    await submitted(store, "taken")
    assert await store.claim("taken", 1, T0)
    later = T0 + timedelta(seconds=30)
    assert [job.id for job in await store.unclaimed(later)] == ["waiting"]
    assert await store.resubmit("waiting", 1, later)
    assert await store.unclaimed(later) == []
    assert not await store.resubmit("waiting", 2, later)  # not its attempt
    assert not await store.resubmit("taken", 1, later)  # claimed already
    assert await store.claim("waiting", 1, later)


async def test_a_relayed_request_opens_once_beats_and_closes_once(store: JobStore) -> None:
    request = RelayRequest("r1", "reply.a", "svc.b", {"n": 1}, created_at=T0, heartbeat_at=T0)
    assert await store.open_request(request)
    assert not await store.open_request(request)  # a redelivery
    got = await store.get_request("r1")
    assert got is not None
    assert (got.reply_to, got.target, got.payload, got.status) == (
        "reply.a",
        "svc.b",
        {"n": 1},
        RelayStatus.OPEN,
    )
    assert await store.request_heartbeat("r1", T0 + timedelta(seconds=20))
    assert await store.stale_requests(T0 + timedelta(seconds=10)) == []
    assert [r.id for r in await store.stale_requests(T0 + timedelta(seconds=30))] == ["r1"]
    assert await store.close_request("r1", RelayStatus.ANSWERED, T0 + timedelta(seconds=40))
    assert not await store.close_request("r1", RelayStatus.FAILED, T0 + timedelta(seconds=41))
    assert not await store.request_heartbeat("r1", T0 + timedelta(seconds=42))
    closed = await store.get_request("r1")
    assert closed is not None and closed.status is RelayStatus.ANSWERED
    assert await store.stale_requests(T0 + timedelta(days=1)) == []
    await store.purge(T0 + timedelta(days=1))
    assert await store.get_request("r1") is None


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
    assert await store.results("done") == []
    assert await store.get("busy") is not None


async def test_counts_cover_every_status(store: JobStore) -> None:
    await store.create(a_job("q"), DOCS)
    await submitted(store, "s")
    counts = await store.counts()
    assert counts[JobStatus.QUEUED] == 1 and counts[JobStatus.SUBMITTED] == 1
    assert set(counts) == set(JobStatus)


async def test_ping_answers_when_open(store: JobStore) -> None:
    await store.ping()


async def test_one_delivery_of_an_attempt_claims_it(store: JobStore) -> None:
    await submitted(store)
    assert await store.claim("j1", 1, T0)
    assert not await store.claim("j1", 1, T0)  # a redelivered message finds it claimed
    assert not await store.claim("j1", 2, T0)
    job = await store.get("j1")
    assert job is not None and job.status is JobStatus.RUNNING and job.started_at == T0


async def test_a_cancelled_job_cannot_be_claimed(store: JobStore) -> None:
    await submitted(store)
    await store.cancel("j1", T0)
    assert not await store.claim("j1", 1, T0)


async def test_a_lease_has_one_holder_until_it_expires(store: JobStore) -> None:
    assert await store.acquire_lease("watchdog", "a", 10, T0)
    assert await store.acquire_lease("watchdog", "a", 10, T0 + timedelta(seconds=5))
    assert not await store.acquire_lease("watchdog", "b", 10, T0 + timedelta(seconds=6))
    assert await store.acquire_lease("watchdog", "b", 10, T0 + timedelta(seconds=16))
    assert not await store.acquire_lease("watchdog", "a", 10, T0 + timedelta(seconds=17))


async def test_the_worker_registry_refreshes_lists_live_ones_and_expires(store: JobStore) -> None:
    idle = WorkerInfo("cpu-a", Pool.CPU, "pod-a", busy=False, warm_pairs=frozenset({"en-es"}))
    await store.register_worker(idle, T0)
    await store.register_worker(WorkerInfo("cpu-b", Pool.CPU, "pod-b", busy=True, pid=7), T0)
    await store.register_worker(WorkerInfo("gpu-a", Pool.GPU, "pod-c", busy=False), T0)
    later = T0 + timedelta(seconds=10)
    await store.register_worker(
        WorkerInfo("cpu-a", Pool.CPU, "pod-a", busy=True, warm_pairs=frozenset({"en-es", "fr-es"})),
        later,
    )
    live = await store.live_workers(Pool.CPU, T0)
    assert [(w.id, w.host, w.busy, w.pid) for w in live] == [
        ("cpu-a", "pod-a", True, None),
        ("cpu-b", "pod-b", True, 7),
    ]
    assert live[0].warm_pairs == frozenset({"en-es", "fr-es"})
    assert live[0].last_seen == later
    assert [w.id for w in await store.live_workers(Pool.CPU, later)] == ["cpu-a"]
    assert await store.expire_workers(later) == 2
    await store.forget_worker("cpu-a")
    assert await store.live_workers(Pool.CPU, T0) == []


async def test_counts_are_per_pool_on_request(store: JobStore) -> None:
    await store.create(a_job("c"), DOCS)
    gpu = a_job("g")
    gpu.pool = Pool.GPU
    await store.create(gpu, DOCS)
    assert (await store.counts())[JobStatus.QUEUED] == 2
    assert (await store.counts(Pool.GPU))[JobStatus.QUEUED] == 1
