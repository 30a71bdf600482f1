"""The store's part of reuse (ADR 0014), on SQLite and PostgreSQL: the segment cache (first
write wins, least recently used out, hits refreshed at most hourly), memories per tenant,
and a creation that takes what it finds."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

import pytest

from dragoman.models import Document, JobStatus, MemoryInfo, Origin
from dragoman.reuse.keys import digest
from dragoman.reuse.store import CacheRows, CacheWrite, Memories, MemoryEntry
from dragoman.store import JobStore, Prefill
from tests.attempts import results
from tests.contract.test_job_store import SHARDED_DOCS, T0, a_job, a_parent, submitted

K = [digest("key", str(i)) for i in range(10)]


async def put(
    store: JobStore, cache_rows: CacheRows, entries: list[tuple[bytes, str]], now: datetime = T0
) -> dict[bytes, str]:
    """``cache_put`` on behalf of the in-flight attempt 1 of job "w" (created if needed)."""
    if await store.get("w") is None:
        await submitted(store, "w")
    return await cache_rows.cache_put([CacheWrite(k, t, "w", 1) for k, t in entries], now)


async def test_the_first_stored_output_wins(store: JobStore, cache_rows: CacheRows) -> None:
    assert await put(store, cache_rows, [(K[0], "first"), (K[1], "one")]) == {
        K[0]: "first",
        K[1]: "one",
    }
    assert await put(store, cache_rows, [(K[0], "second"), (K[2], "two")], T0) == {
        K[0]: "first",
        K[2]: "two",
    }
    assert await cache_rows.cached([K[0], K[1], K[2], K[3]], T0) == {
        K[0]: "first",
        K[1]: "one",
        K[2]: "two",
    }


async def test_an_output_made_for_no_job_is_stored_as_is_and_the_first_still_wins(
    store: JobStore,
    cache_rows: CacheRows,
) -> None:
    # A synchronous request's output: no attempt to fence it, and no job row at all.
    assert await cache_rows.cache_put([CacheWrite(K[7], "sync")], T0) == {K[7]: "sync"}
    assert await cache_rows.cache_put([CacheWrite(K[7], "later"), CacheWrite(K[8], "new")], T0) == {
        K[7]: "sync",
        K[8]: "new",
    }
    # Beside a job's stale attempt in one call: the stale one alone is refused.
    await submitted(store, "w")
    stored = await cache_rows.cache_put(
        [CacheWrite(K[9], "stale", "w", 2), CacheWrite(K[6], "s")], T0
    )
    assert stored == {K[6]: "s"}
    assert await cache_rows.cached([K[6], K[7], K[8], K[9]], T0) == {
        K[6]: "s",
        K[7]: "sync",
        K[8]: "new",
    }


async def test_writers_racing_on_one_key_all_get_the_same_output(
    store: JobStore, cache_rows: CacheRows
) -> None:
    await submitted(store, "w")
    got = await asyncio.gather(
        *(cache_rows.cache_put([CacheWrite(K[5], f"w{i}", "w", 1)], T0) for i in range(8))
    )
    assert len({answer[K[5]] for answer in got}) == 1


async def test_trimming_removes_the_least_recently_used_beyond_the_bound(
    store: JobStore, cache_rows: CacheRows
) -> None:
    for i in range(6):
        await put(store, cache_rows, [(K[i], f"t{i}")], T0 + timedelta(hours=i))
    # K[0] and K[1] are old, but a hit long after refreshes K[1]: it is kept.
    await cache_rows.cached([K[1]], T0 + timedelta(hours=10))
    assert await cache_rows.trim_cache(4, T0) == 2
    left = await cache_rows.cached(K[:6], T0 + timedelta(hours=10))
    assert sorted(left) == sorted([K[1], K[3], K[4], K[5]])
    assert await cache_rows.trim_cache(4, T0) == 0


async def test_entries_unused_for_the_maximum_age_are_deleted(
    store: JobStore, cache_rows: CacheRows
) -> None:
    await put(store, cache_rows, [(K[0], "old"), (K[1], "used"), (K[2], "new")], T0)
    await cache_rows.cached([K[1]], T0 + timedelta(days=20))  # a hit refreshes it
    await put(store, cache_rows, [(K[3], "newer")], T0 + timedelta(days=25))
    assert await cache_rows.trim_cache(100, T0 + timedelta(days=10)) == 2
    assert sorted(await cache_rows.cached(K[:4], T0 + timedelta(days=26))) == sorted([K[1], K[3]])


async def test_a_hit_within_the_hour_is_not_a_write(store: JobStore, cache_rows: CacheRows) -> None:
    await put(store, cache_rows, [(K[0], "a"), (K[1], "b")], T0)
    await cache_rows.cached([K[0]], T0 + timedelta(minutes=59))  # not refreshed: too recent
    await cache_rows.cached([K[1]], T0 + timedelta(minutes=61))  # refreshed
    assert await cache_rows.trim_cache(1, T0) == 1
    assert await cache_rows.cached([K[0], K[1]], T0) == {K[1]: "b"}


@pytest.mark.parametrize("asked", [1, 8, 9, 17, 300, 501, 1003])
async def test_a_lookup_of_any_number_of_keys_finds_exactly_the_stored_ones(
    store: JobStore, cache_rows: CacheRows, asked: int
) -> None:
    """Each part of a lookup is padded to its statement's size: the padding finds nothing,
    and a part that fills its statement loses no key."""
    keys = [digest("many", str(i)) for i in range(asked)]
    stored = {key: f"t{i}" for i, key in enumerate(keys) if i % 3 == 0}
    await put(store, cache_rows, list(stored.items()))
    assert await cache_rows.cached(keys, T0) == stored


def memory(name: str, units: int = 1) -> MemoryInfo:
    return MemoryInfo(name, units, ("en", "es"), "en", T0, T0)


def entry(key: bytes, source: str, target: str) -> MemoryEntry:
    return MemoryEntry(key, "en", "es", source, target)


async def test_memories_are_saved_replaced_listed_and_deleted_per_tenant(
    memories: Memories,
) -> None:
    assert not await memories.save_memory("a", memory("m", 2), [entry(K[0], "x", "X")])
    assert not await memories.save_memory("b", memory("m"), [entry(K[0], "x", "other")])
    assert await memories.save_memory("a", memory("m", 5), [entry(K[1], "y", "Y")])
    assert [(m.name, m.units) for m in await memories.list_memories("a")] == [("m", 5)]
    ids = await memories.memory_ids("a", ["m", "ghost"])
    assert list(ids) == ["m"]
    assert ids != await memories.memory_ids("b", ["m"])
    assert await memories.delete_memory("a", "m")
    assert not await memories.delete_memory("a", "m")
    assert await memories.list_memories("a") == []
    assert [m.name for m in await memories.list_memories("b")] == ["m"]


async def test_a_deleted_memorys_id_never_names_another_memory(
    store: JobStore, memories: Memories
) -> None:
    # A job resolves its memories' ids before its creation looks them up: a memory deleted
    # meanwhile must match nothing, even once another tenant imports a memory.
    await memories.save_memory("t2", memory("mine"), [entry(K[0], "one", "T2")])
    stale = (await memories.memory_ids("t2", ["mine"]))["mine"]
    assert await memories.delete_memory("t2", "mine")
    await memories.save_memory("t1", memory("secret"), [entry(K[0], "one", "T1 SECRET")])
    assert (await memories.memory_ids("t1", ["secret"]))["secret"] != stale
    lookups = Prefill(memory_ids=(stale,), memory_keys={0: K[0]})
    await store.create(a_job("j", segments=1), [Document("a", ["one"])], (), lookups)
    assert await results(store, "j") == [("a", [None])]


async def test_a_creation_takes_memory_matches_first_then_cache_hits(
    store: JobStore, cache_rows: CacheRows, memories: Memories
) -> None:
    await memories.save_memory("", memory("first"), [entry(K[0], "one", "UNO")])
    await memories.save_memory(
        "", memory("second"), [entry(K[0], "one", "1"), entry(K[1], "", "2")]
    )
    ids = await memories.memory_ids("", ["first", "second"])
    await put(store, cache_rows, [(K[5], "dos"), (K[6], "tres")], T0)
    lookups = Prefill(
        memory_ids=(ids["first"], ids["second"]),
        memory_keys={0: K[0], 1: K[1]},
        cache_keys={0: K[9], 1: K[5], 2: K[8]},
        fit=lambda position, target: f"{target}!",
    )
    created = await store.create(a_job("j"), [Document("a", ["one", "two", "three"])], (), lookups)
    assert (created.found, created.finished) == (2, frozenset())
    assert await results(store, "j") == [("a", ["UNO!", "2!", None])]
    assert [d.origins for d in await store.documents("j")] == [[Origin.TM, Origin.TM, None]]
    assert await store.sources("j") == [(2, "three")]
    job = await store.get("j")
    assert job is not None and (job.status, job.segments_done) == (JobStatus.QUEUED, 2)


async def test_a_job_found_whole_is_stored_succeeded_at_its_creation(
    store: JobStore, cache_rows: CacheRows
) -> None:
    await put(store, cache_rows, [(K[0], "uno"), (K[1], "dos")], T0)
    lookups = Prefill(cache_keys={0: K[0], 1: K[1]})
    job = a_job("j", segments=2)
    created = await store.create(job, [Document("a", ["one", "two"])], (), lookups)
    assert created.finished == frozenset({"j"})
    stored = await store.get("j")
    assert stored is not None
    assert (stored.status, stored.segments_done, stored.finished_at) == (
        JobStatus.SUCCEEDED,
        2,
        job.created_at,
    )
    assert [d.origins for d in await store.documents("j")] == [[Origin.CACHE, Origin.CACHE]]
    assert await store.in_status([JobStatus.QUEUED]) == []


async def test_a_memory_target_that_does_not_fit_falls_back_to_the_cache(
    store: JobStore, cache_rows: CacheRows, memories: Memories
) -> None:
    await memories.save_memory("", memory("m"), [entry(K[0], "one", "UNO")])
    await put(store, cache_rows, [(K[1], "uno")], T0)
    ids = await memories.memory_ids("", ["m"])
    lookups = Prefill((ids["m"],), {0: K[0]}, {0: K[1]}, fit=lambda _p, _t: None)
    await store.create(a_job("j", segments=1), [Document("a", ["one"])], (), lookups)
    assert [d.origins for d in await store.documents("j")] == [[Origin.CACHE]]


async def test_shards_found_whole_are_succeeded_and_the_parent_counts_them(
    store: JobStore,
    cache_rows: CacheRows,
) -> None:
    parent, shards = a_parent("p")
    await put(store, cache_rows, [(K[i], f"t{i}") for i in (0, 1, 4)], T0)
    lookups = Prefill(cache_keys={i: K[i] for i in range(6)})
    created = await store.create(parent, SHARDED_DOCS, shards, lookups)
    assert created == type(created)(found=3, finished=frozenset({"p.0"}))
    states = {
        s.id: (s.status, s.segments_done)
        for s in [await store.get(i) for i in created.finished | {"p.1", "p.2", "p"}]
        if s
    }
    assert states == {
        "p.0": (JobStatus.SUCCEEDED, 2),
        "p.1": (JobStatus.QUEUED, 0),
        "p.2": (JobStatus.QUEUED, 1),
        "p": (JobStatus.QUEUED, 3),
    }
    assert [j.id for j in await store.in_status([JobStatus.QUEUED])] == ["p.1", "p.2"]
    assert await store.sources("p.2") == [(5, "s5")]


async def test_a_parent_whose_shards_are_all_found_is_succeeded(
    store: JobStore, cache_rows: CacheRows
) -> None:
    parent, shards = a_parent("p")
    await put(store, cache_rows, [(K[i], f"t{i}") for i in range(6)], T0)
    created = await store.create(
        parent, SHARDED_DOCS, shards, Prefill(cache_keys={i: K[i] for i in range(6)})
    )
    assert created.finished == {"p", "p.0", "p.1", "p.2"}
    job = await store.get("p")
    assert job is not None and job.status is JobStatus.SUCCEEDED


async def test_creations_with_and_without_lookups_share_a_group_commit(
    store: JobStore, cache_rows: CacheRows
) -> None:
    await put(store, cache_rows, [(K[0], "uno")], T0)
    plain, found = await asyncio.gather(
        store.create(a_job("plain", segments=1), [Document("a", ["one"])]),
        store.create(
            a_job("found", segments=1), [Document("a", ["one"])], (), Prefill(cache_keys={0: K[0]})
        ),
    )
    assert (plain.found, found.found) == (0, 1)
    assert await results(store, "plain") == [("a", [None])]
    assert await results(store, "found") == [("a", ["uno"])]


async def test_translations_pair_sources_with_targets_and_origins(
    store: JobStore, cache_rows: CacheRows
) -> None:
    await put(store, cache_rows, [(K[0], "uno")], T0)
    await store.create(
        a_job("j", segments=3),
        [Document("a", ["one", "two"]), Document("b", ["x"])],
        (),
        Prefill(cache_keys={0: K[0]}),
    )
    found = await store.documents("j", sources=True)
    assert [list(zip(d.sources or [], d.targets, d.origins, strict=True)) for d in found] == [
        [("one", "uno", Origin.CACHE), ("two", None, None)],
        [("x", None, None)],
    ]


async def test_only_in_flight_attempts_feed_the_cache(
    store: JobStore, cache_rows: CacheRows
) -> None:
    await submitted(store, "live")
    await submitted(store, "gone")
    await store.cancel("gone", T0)
    stored = await cache_rows.cache_put(
        [
            CacheWrite(K[0], "live", "live", 1),
            CacheWrite(K[1], "stale attempt", "live", 2),
            CacheWrite(K[2], "cancelled", "gone", 1),
            CacheWrite(K[3], "unknown", "nobody", 1),
        ],
        T0,
    )
    assert stored == {K[0]: "live"}


async def test_a_cache_hit_waits_for_no_writer(store: JobStore, cache_rows: CacheRows) -> None:
    """A lookup is a read: with a transaction open elsewhere (SQLite's one write lock held,
    as a worker's chunk holds it), a hit answers at once."""
    await put(store, cache_rows, [(K[0], "first")])
    async with store.database.tx():
        found = await asyncio.wait_for(cache_rows.cached([K[0], K[1]], T0), 5)
    assert found == {K[0]: "first"}
