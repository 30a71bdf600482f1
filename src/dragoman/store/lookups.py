"""The reads of the segment cache and of translation memories that run inside the job
store's own transactions (``prefill``: a new job's lookups, ADR 0014); ``reuse.store`` reads
the same tables the same way.

A hit refreshes ``last_used_at`` only when it is older than ``REFRESH_S``, so a busy cache
is read far more often than written.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import BindParameter, Connection, Select, bindparam, select, update

from dragoman.store.rows import aware
from dragoman.store.tables import memory_units, segment_cache

REFRESH_S = 3600.0
# Keys per statement: well under SQLite's and asyncpg's limits on bound parameters.
KEYS_PER_QUERY = 500


# The lookup statements come in sizes of powers of two from 8 keys up; a part is padded with
# ``_NO_KEY`` (no key is empty: each is a sha256) to the next size. A group commit's key count
# takes any value up to KEYS_PER_QUERY, and a statement per count meant building and
# compiling one at almost every commit.
_SMALLEST = 8
_NO_KEY = b""


def _size(count: int) -> int:
    """The statement size for ``count`` keys: the next power of two, at least ``_SMALLEST``
    and at most ``KEYS_PER_QUERY``."""
    return min(max(_SMALLEST, 1 << (count - 1).bit_length()), KEYS_PER_QUERY)


@functools.cache
def _cached(size: int) -> Select[Any]:
    """The lookup of ``size`` keys (``k0``…), built and compiled once per size: building a
    statement, or expanding an ``IN`` list at each execution, costs more than SQLite's read
    of a few keys."""
    keys: list[BindParameter[bytes]] = [bindparam(f"k{i}") for i in range(size)]
    cache = segment_cache.c
    return select(cache.key, cache.target, cache.last_used_at, cache.confidence, cache.terms).where(
        cache.key.in_(keys)
    )


def _bound(part: Sequence[bytes]) -> tuple[Select[Any], dict[str, bytes]]:
    """The statement for ``part`` and its parameters, padded to the statement's size."""
    size = _size(len(part))
    params = {f"k{i}": key for i, key in enumerate(part)}
    params.update((f"k{i}", _NO_KEY) for i in range(len(part), size))
    return _cached(size), params


class Cached(NamedTuple):
    """A cache entry: the engine's output, the model's confidence in it and whether the
    key's glossary had terms in the segment (None: not known)."""

    target: str
    confidence: float | None
    terms: bool | None


_TOUCH = (
    update(segment_cache)
    .where(segment_cache.c.key.in_(bindparam("keys", expanding=True)))
    .values(last_used_at=bindparam("now"))
)
_MATCHES = select(memory_units.c.memory_id, memory_units.c.key, memory_units.c.target).where(
    memory_units.c.memory_id.in_(bindparam("memories", expanding=True)),
    memory_units.c.key.in_(bindparam("keys", expanding=True)),
)


def slices(keys: Sequence[bytes]) -> list[Sequence[bytes]]:
    return [keys[i : i + KEYS_PER_QUERY] for i in range(0, len(keys), KEYS_PER_QUERY)]


def find(conn: Connection, keys: Sequence[bytes], now: datetime) -> dict[bytes, Cached]:
    """The cached entries of ``keys``; hits not used for ``REFRESH_S`` are marked used."""
    found, stale = look_up(conn, keys, now)
    touch(conn, stale, now)
    return found


def look_up(
    conn: Connection, keys: Sequence[bytes], now: datetime
) -> tuple[dict[bytes, Cached], list[bytes]]:
    """The cached entries of ``keys``, and the hits not marked used for ``REFRESH_S``."""
    found: dict[bytes, Cached] = {}
    stale: list[bytes] = []
    before = now - timedelta(seconds=REFRESH_S)
    for part in slices(sorted(set(keys))):
        for row in conn.execute(*_bound(part)):
            found[row.key] = Cached(row.target, row.confidence, row.terms)
            used = aware(row.last_used_at)
            if used is not None and used < before:
                stale.append(row.key)
    return found, stale


def touch(conn: Connection, keys: Sequence[bytes], now: datetime) -> None:
    """Marks ``keys`` used at ``now`` (the cache's trim keeps the recently used)."""
    for part in slices(keys):
        conn.execute(_TOUCH, {"keys": list(part), "now": now})


def matches(
    conn: Connection, memory_ids: Sequence[int], keys: Sequence[bytes]
) -> dict[tuple[int, bytes], str]:
    """The targets of ``keys`` in the memories ``memory_ids``, by (memory, key)."""
    found: dict[tuple[int, bytes], str] = {}
    if not memory_ids:
        return found
    for part in slices(sorted(set(keys))):
        rows = conn.execute(_MATCHES, {"memories": sorted(set(memory_ids)), "keys": list(part)})
        for row in rows:
            found[(row.memory_id, row.key)] = row.target
    return found
