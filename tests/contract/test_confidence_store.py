"""What made each translation, and the segments to review, on SQLite and PostgreSQL: a
chunk's write stores each segment's engine, model, glossary terms and confidence with its
target and counts those below the job's threshold on the job row (a shard's on its parent
too), and a cache hit keeps the confidence its entry was stored with."""

from __future__ import annotations

from dataclasses import replace

from dragoman.models import Document, JobOptions, Origin
from dragoman.reuse.keys import digest
from dragoman.reuse.store import CacheRows, CacheWrite
from dragoman.store import ChunkWrite, JobStore, Prefill
from tests.attempts import claim, mark_submitted
from tests.contract.test_job_store import DOCS, SHARDED_DOCS, T0, a_job, a_parent

K = [digest("confidence", str(i)) for i in range(4)]
SURE = JobOptions(review_below=0.5)


async def running(store: JobStore, job_id: str, options: JobOptions = SURE) -> None:
    await store.create(replace(a_job(job_id), options=options), DOCS)
    assert await mark_submitted(store, job_id, T0) is not None
    assert await claim(store, job_id, 1, T0)


def scored(job_id: str, results: list[tuple[int, str, float | None, bool]]) -> ChunkWrite:
    return ChunkWrite(
        job_id,
        1,
        [(position, text) for position, text, _, _ in results],
        engine="ctranslate2",
        model="1.9",
        confidences=[confidence for _, _, confidence, _ in results],
        terms=[terms for *_, terms in results],
        review_below=0.5,
    )


async def test_a_chunk_stores_what_made_each_translation_and_counts_those_to_review(
    store: JobStore,
) -> None:
    await running(store, "j")
    write = scored("j", [(0, "uno", 0.9, False), (2, "tres", 0.2, True)])
    assert await store.write_chunk([write], T0) == {"j"}
    assert await store.write_chunk([scored("j", [(1, "dos", 0.4999, False)])], T0) == {"j"}

    first, second = await store.documents("j")
    assert (first.targets, second.targets) == (["uno", "dos"], ["tres"])
    assert first.engines + second.engines == ["ctranslate2"] * 3
    assert first.models + second.models == ["1.9"] * 3
    assert first.terms + second.terms == [False, False, True]
    assert first.confidences + second.confidences == [0.9, 0.4999, 0.2]
    job = await store.get("j")
    assert job is not None
    assert (job.options.review_below, job.segments_done, job.segments_to_review) == (0.5, 3, 2)


async def test_a_translation_without_a_score_is_never_counted_nor_is_a_job_without_threshold(
    store: JobStore,
) -> None:
    await running(store, "j")
    await running(store, "free", JobOptions())
    unscored = ChunkWrite("j", 1, [(0, "uno")], engine="apertium", review_below=0.5)
    loose = replace(scored("free", [(0, "uno", 0.1, False)]), review_below=None)
    assert await store.write_chunk([unscored, loose], T0) == {"j", "free"}

    [doc, _] = await store.documents("j")
    assert (doc.engines, doc.models, doc.terms, doc.confidences) == (
        ["apertium", None],
        [None, None],
        [False, None],
        [None, None],
    )
    counted = [await store.get(job_id) for job_id in ("j", "free")]
    assert [job.segments_to_review for job in counted if job] == [0, 0]


async def test_a_shard_counts_to_review_on_itself_and_on_its_parent(store: JobStore) -> None:
    parent, shards = a_parent("p")
    parent.options = SURE
    shards = [replace(shard, options=SURE) for shard in shards]
    await store.create(parent, SHARDED_DOCS, shards)
    for shard in shards:
        assert await mark_submitted(store, shard.id, T0) is not None
        assert await claim(store, shard.id, 1, T0)

    # Position 5 is the third shard's: a stray in the second's write is counted on neither.
    write = scored("p.1", [(2, "t2", 0.1, False), (3, "t3", 0.9, False), (5, "x", 0.1, False)])
    assert await store.write_chunk([write, scored("p.0", [(0, "t0", 0.3, False)])], T0)

    counts = {
        job.id: (job.segments_done, job.segments_to_review)
        for job_id in ("p", "p.0", "p.1")
        if (job := await store.get(job_id)) is not None
    }
    assert counts == {"p": (3, 2), "p.0": (1, 1), "p.1": (2, 1)}
    [first, _] = await store.documents("p")
    assert first.confidences == [0.3, None, 0.1, 0.9]


async def test_a_cache_hit_keeps_the_confidence_and_terms_of_its_entry(
    store: JobStore, cache_rows: CacheRows
) -> None:
    await running(store, "w", JobOptions())
    entries = [CacheWrite(K[0], "uno", "w", 1, 0.3, True), CacheWrite(K[1], "dos", "w", 1, 0.8)]
    assert await cache_rows.cache_put(entries, T0) == {K[0]: "uno", K[1]: "dos"}
    # A synchronous request's entry has no confidence.
    await cache_rows.cache_put([CacheWrite(K[2], "tres")], T0)
    lookups = Prefill(
        cache_keys={0: K[0], 1: K[1], 2: K[2]},
        cache_models={i: ("ctranslate2", "1.9") for i in range(3)},
    )

    job = replace(a_job("j"), options=SURE)
    created = await store.create(job, [Document("a", ["one", "two", "three"])], (), lookups)

    assert (created.found, created.to_review) == (3, 1)
    [doc] = await store.documents("j")
    assert doc.origins == [Origin.CACHE] * 3
    assert (doc.engines, doc.models) == (["ctranslate2"] * 3, ["1.9"] * 3)
    assert (doc.confidences, doc.terms) == ([0.3, 0.8, None], [True, False, False])
    stored = await store.get("j")
    assert stored is not None and stored.segments_to_review == 1
