"""The ``JobStore`` contract for a job into several languages, run against SQLite and
PostgreSQL: a copy of the segments per target, each translated by its own shards, read
back target by target, with each target's progress from its shards."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from dragoman.models import Document, Job, JobError, JobStatus, Pool, SourceFile, TargetProgress
from dragoman.store import JobStore
from tests.attempts import claim, mark_submitted, write_results

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DOCS = [
    Document("a.txt", ["one", "two"], SourceFile("txt", b"one\ntwo\n", (1, 1))),
    Document("b.txt", ["three"]),
]


def a_job(job_id: str) -> Job:
    """Three segments into es, then fr: six segment rows, a shard per target."""
    return Job(
        id=job_id,
        tenant=None,
        source_lang="en",
        target_lang="es",
        engine="apertium",
        pool=Pool.CPU,
        documents=2,
        segments_total=6,
        shards=2,
        created_at=T0,
        targets=("es", "fr"),
    )


def shards_of(job: Job) -> list[Job]:
    return [
        dataclasses.replace(
            job,
            id=f"{job.id}-{target}",
            target_lang=target,
            segments_total=3,
            parent_id=job.id,
            first_position=3 * copy,
            end_position=3 * copy + 3,
            shards=0,
            targets=(),
        )
        for copy, target in enumerate(job.targets)
    ]


async def translated(store: JobStore, shard_id: str, texts: list[str]) -> None:
    shard = await mark_submitted(store, shard_id, T0)
    assert shard is not None and await claim(store, shard_id, shard.attempts, T0)
    first = shard.first_position or 0
    results = [(first + at, text) for at, text in enumerate(texts)]
    assert await write_results(store, shard_id, shard.attempts, results, T0)
    assert await store.finish(shard_id, shard.attempts, JobStatus.SUCCEEDED, None, T0)


async def test_each_target_has_its_copy_of_the_segments_and_its_progress(
    store: JobStore,
) -> None:
    job = a_job("j1")
    await store.create(job, DOCS, shards_of(job))
    found = await store.get("j1")
    assert found is not None and found.targets == ("es", "fr")
    assert found.by_target == (
        TargetProgress("es", JobStatus.QUEUED, 3, 0),
        TargetProgress("fr", JobStatus.QUEUED, 3, 0),
    )
    # Each shard translates its own copy: the sources are the same.
    sources = await store.sources_many(["j1-es", "j1-fr"])
    assert sources == {
        "j1-es": [(0, "one"), (1, "two"), (2, "three")],
        "j1-fr": [(3, "one"), (4, "two"), (5, "three")],
    }
    await translated(store, "j1-fr", ["un", "deux", "trois"])
    found = await store.get("j1")
    assert found is not None and found.status is JobStatus.RUNNING
    assert found.by_target == (
        TargetProgress("es", JobStatus.QUEUED, 3, 0),
        TargetProgress("fr", JobStatus.SUCCEEDED, 3, 3),
    )
    fr = await store.documents("j1", copy=1)
    assert [(doc.name, doc.targets) for doc in fr] == [
        ("a.txt", ["un", "deux"]),
        ("b.txt", ["trois"]),
    ]
    es = await store.documents("j1", copy=0, sources=True)
    assert [(doc.targets, doc.sources) for doc in es] == [
        ([None, None], ["one", "two"]),
        ([None], ["three"]),
    ]
    await translated(store, "j1-es", ["uno", "dos", "tres"])
    every = await store.documents("j1")
    assert [doc.targets for doc in every] == [
        ["uno", "dos"],
        ["tres"],
        ["un", "deux"],
        ["trois"],
    ]
    file = await store.source_file("j1", 0, copy=1)
    assert file is not None and file[1].targets == ["un", "deux"]
    assert file[0].content == b"one\ntwo\n"
    done = await store.get("j1")
    assert done is not None and (done.status, done.segments_done) == (JobStatus.SUCCEEDED, 6)


async def test_a_listing_shows_each_targets_progress(store: JobStore) -> None:
    job = a_job("j2")
    await store.create(job, DOCS, shards_of(job))
    listed, _ = await store.list_jobs(tenant=None, status=None, limit=10, cursor=None)
    assert [(j.id, [t.target_lang for t in j.by_target]) for j in listed] == [("j2", ["es", "fr"])]


async def test_a_failed_target_leaves_the_others_to_finish(store: JobStore) -> None:
    job = a_job("j3")
    await store.create(job, DOCS, shards_of(job))
    shard = await mark_submitted(store, "j3-fr", T0)
    assert shard is not None and await claim(store, "j3-fr", shard.attempts, T0)
    broke = JobError("engine_error", "broke")
    assert await store.finish("j3-fr", shard.attempts, JobStatus.FAILED, broke, T0)
    found = await store.get("j3")
    assert found is not None and found.status is JobStatus.RUNNING  # es goes on
    assert [(t.target_lang, t.status) for t in found.by_target] == [
        ("es", JobStatus.QUEUED),
        ("fr", JobStatus.FAILED),
    ]
    await translated(store, "j3-es", ["uno", "dos", "tres"])
    done = await store.get("j3")
    assert done is not None
    assert (done.status, done.error) == (
        JobStatus.FAILED,
        JobError("engine_error", "fr: shard 2/2: broke"),
    )
    assert [(t.target_lang, t.status) for t in done.by_target] == [
        ("es", JobStatus.SUCCEEDED),
        ("fr", JobStatus.FAILED),
    ]
    es = await store.documents("j3", copy=0)
    assert [doc.targets for doc in es] == [["uno", "dos"], ["tres"]]


async def test_what_events_have_not_told_is_read_outside_the_sent_ranges(
    store: JobStore,
) -> None:
    job = a_job("j4")
    await store.create(job, DOCS, shards_of(job))
    shapes, found = await store.translated_since("j4", [])
    assert (shapes, found) == ([("a.txt", 2), ("b.txt", 1)], [])
    await translated(store, "j4-fr", ["un", "deux", "trois"])
    await translated(store, "j4-es", ["uno", "dos", "tres"])
    _, found = await store.translated_since("j4", [])
    assert [(s.position, s.text) for s in found] == [
        (0, "uno"),
        (1, "dos"),
        (2, "tres"),
        (3, "un"),
        (4, "deux"),
        (5, "trois"),
    ]
    _, found = await store.translated_since("j4", [(0, 1), (3, 3), (5, 5)])
    assert [(s.position, s.text, s.origin.value) for s in found] == [
        (2, "tres", "mt"),
        (4, "deux", "mt"),
    ]
