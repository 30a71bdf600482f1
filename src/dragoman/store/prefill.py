"""What a new job takes from translation memories and the segment cache, in the transaction
that stores it (ADR 0014).

The caller (``reuse``) says, per segment position, which memory key and which cache key to
look up, and how a memory's target fits that segment; here the lookups run, one query per
kind for a whole group commit, the found targets go into the segment rows with their origin,
and the units whose every segment was found are stored ``succeeded``: they are never
dispatched.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from dragoman.models import Job, JobStatus, Origin, to_review
from dragoman.store.lookups import Cached, find, matches

_Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Prefill:
    """The lookups of one job, by segment position (0-based, across its documents)."""

    memory_ids: tuple[int, ...] = ()  # the first listed wins
    memory_keys: dict[int, bytes] = field(default_factory=dict)
    cache_keys: dict[int, bytes] = field(default_factory=dict)
    # The engine and model of each cache key's entry (the key names both).
    cache_models: dict[int, tuple[str, str | None]] = field(default_factory=dict)
    # A memory's target (stored form) made into the target of the segment at a position;
    # None when it does not fit.
    fit: Callable[[int, str], str | None] = lambda _position, target: target


@dataclass(frozen=True, slots=True)
class Created:
    """What ``create`` stored: segments already translated, and the units (the job, or its
    shards) stored ``succeeded`` because nothing was left to translate."""

    found: int = 0
    finished: frozenset[str] = frozenset()
    to_review: int = 0  # of those found, under the job's review_below


@dataclass(slots=True)
class Creation:
    """One job's rows on their way into the group commit."""

    job: Job
    shards: Sequence[Job]
    prefill: Prefill | None
    job_rows: list[_Row]  # the job first, then its shards
    seg_rows: list[_Row]


def prefill(conn: Connection, creations: Sequence[Creation], now: datetime) -> None:
    """Looks up every creation's keys (one query per kind for all of them), fills the
    segment rows found and settles the job rows; ``Created`` is left on each by
    ``outcome``."""
    asked = [c for c in creations if c.prefill is not None]
    if not asked:
        return
    memory_ids = [m for c in asked if c.prefill for m in c.prefill.memory_ids]
    memory_keys = [k for c in asked if c.prefill for k in c.prefill.memory_keys.values()]
    cache_keys = [k for c in asked if c.prefill for k in c.prefill.cache_keys.values()]
    in_memories = matches(conn, memory_ids, memory_keys) if memory_keys else {}
    in_cache = find(conn, cache_keys, now) if cache_keys else {}
    for creation in asked:
        _fill(creation, in_memories, in_cache)
        _settle(creation, now)


def _fill(
    creation: Creation, in_memories: dict[tuple[int, bytes], str], in_cache: dict[bytes, Cached]
) -> None:
    ask = creation.prefill
    assert ask is not None
    for row in creation.seg_rows:
        position = row["position"]
        found = _from_memories(ask, position, in_memories)
        if found is not None:
            row.update(target=found, origin=Origin.TM.value, terms=False)
            continue
        key = ask.cache_keys.get(position)
        if key is not None and key in in_cache:
            hit = in_cache[key]
            engine, model = ask.cache_models.get(position, (None, None))
            row.update(target=hit.target, origin=Origin.CACHE.value, engine=engine, model=model)
            row.update(terms=hit.terms, confidence=hit.confidence)


def _from_memories(
    ask: Prefill, position: int, in_memories: dict[tuple[int, bytes], str]
) -> str | None:
    key = ask.memory_keys.get(position)
    if key is None:
        return None
    for memory_id in ask.memory_ids:
        target = in_memories.get((memory_id, key))
        if target is not None:
            fitted = ask.fit(position, target)
            if fitted is not None:
                return fitted
    return None


def _settle(creation: Creation, now: datetime) -> None:
    """Counts what was found into each unit's row; a unit left with nothing to translate
    is stored succeeded, and a parent whose shards all are, too."""
    done = sorted(row["position"] for row in creation.seg_rows if row.get("target") is not None)
    job_row, *shard_rows = creation.job_rows
    review = sorted(
        row["position"]
        for row in creation.seg_rows
        if to_review(row.get("confidence"), job_row["review_below"])
    )
    for row in shard_rows:
        row["segments_done"] = _count(done, row["first_position"], row["end_position"])
        row["segments_to_review"] = _count(review, row["first_position"], row["end_position"])
        _finish_if_done(row, now)
    job_row["segments_done"] = len(done)
    job_row["segments_to_review"] = len(review)
    if shard_rows:
        if all(row["status"] == JobStatus.SUCCEEDED.value for row in shard_rows):
            job_row.update(status=JobStatus.SUCCEEDED.value, finished_at=now)
    else:
        _finish_if_done(job_row, now)


def _count(done: Sequence[int], first: int, end: int) -> int:
    """How many of the sorted positions ``done`` lie in ``[first, end)``."""
    return bisect.bisect_left(done, end) - bisect.bisect_left(done, first)


def _finish_if_done(row: _Row, now: datetime) -> None:
    if row["segments_done"] == row["segments_total"]:
        row.update(status=JobStatus.SUCCEEDED.value, finished_at=now)


def outcome(creation: Creation) -> Created:
    job_row, *_ = creation.job_rows
    finished = frozenset(
        row["id"] for row in creation.job_rows if row["status"] == JobStatus.SUCCEEDED.value
    )
    return Created(
        found=job_row["segments_done"], finished=finished, to_review=job_row["segments_to_review"]
    )
