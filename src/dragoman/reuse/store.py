"""What reuse keeps in the store (ADR 0014): the segment cache's rows (engine outputs by
key, shared by every process; first write wins, the least recently used rows are trimmed)
and translation memories (a tenant's memories by name, their units by key).

Keys and forms are computed by the caller (``reuse.keys``, ``reuse.matching``); here rows
are only stored, found and trimmed, on the shared ``Database``. The lookups a new job makes
run inside the job store's transaction instead (``store.prefill``, with ``store.lookups``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Connection, bindparam, delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from dragoman.errors import Conflict
from dragoman.models import MemoryInfo
from dragoman.store.database import Database
from dragoman.store.lookups import find, look_up, matches, slices, touch
from dragoman.store.rows import IN_FLIGHT_VALUES, aware
from dragoman.store.tables import jobs, memories, memory_units, segment_cache

TRIM_BATCH = 5000
ROWS_PER_INSERT = 1000


@dataclass(frozen=True, slots=True)
class CacheWrite:
    """An engine output to cache, made for attempt ``attempt`` of job ``job_id``: stored only
    while that attempt is in flight, so cancelled or retried work is never cached. Without a
    job (``job_id`` None: a synchronous request, answered already), it is stored as is."""

    key: bytes
    target: str
    job_id: str | None = None
    attempt: int = 0
    # What the model said of it (None: nothing), and whether the key's glossary had terms
    # in the segment: a hit reports them as this translation did.
    confidence: float | None = None
    terms: bool = False


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One direction of one unit: the key of its source's matching form, and both sides."""

    key: bytes
    source_lang: str
    target_lang: str
    source: str
    target: str


class CacheRows(Protocol):
    """Engine outputs by key (``reuse.keys``) in the store: first write wins, least
    recently used out. (``batcher.SegmentCache`` is what a synchronous request sees of it.)"""

    async def cached(self, keys: Sequence[bytes], now: datetime) -> dict[bytes, str]:
        """The stored targets of ``keys`` (those found)."""
        ...

    async def cache_put(self, entries: Sequence[CacheWrite], now: datetime) -> dict[bytes, str]:
        """Stores each entry whose key has no target yet and whose attempt is still in
        flight (an entry made for no job is stored as is); returns what is stored for the
        entries' keys afterwards (an earlier writer's target wins; a key with nothing stored
        is absent)."""
        ...

    async def trim_cache(self, max_segments: int, unused_since: datetime) -> int:
        """Deletes the entries not used since ``unused_since``, then the least recently used
        beyond ``max_segments``; how many."""
        ...


class Memories(Protocol):
    """Translation memories per tenant (``""`` when authentication is off)."""

    async def save_memory(
        self, tenant: str, info: MemoryInfo, entries: Sequence[MemoryEntry]
    ) -> bool:
        """Stores a memory and its entries (keys unique), replacing the tenant's memory of
        that name and all its entries; True when one was replaced."""
        ...

    async def list_memories(self, tenant: str) -> list[MemoryInfo]:
        """The tenant's memories, by name."""
        ...

    async def memory_ids(self, tenant: str, names: Sequence[str]) -> dict[str, int]:
        """The ids of those of ``names`` that are the tenant's memories."""
        ...

    async def matches(
        self, memory_ids: Sequence[int], keys: Sequence[bytes]
    ) -> dict[tuple[int, bytes], str]:
        """The targets of ``keys`` in the memories ``memory_ids``, by (memory, key)."""
        ...

    async def delete_memory(self, tenant: str, name: str) -> bool:
        """Deletes a memory and its entries; False if the tenant has none of that name."""
        ...


class SqlCacheRows:
    """``CacheRows`` on the shared database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def cached(self, keys: Sequence[bytes], now: datetime) -> dict[bytes, str]:
        # A read: a hit waits for no writer (SQLite's one write lock is often a worker's
        # chunk). Only hits last marked used over an hour ago take a write to be marked.
        found, stale = await self._db.reading(lambda conn: look_up(conn, keys, now))
        if stale:
            await self._db.writing(lambda conn: touch(conn, stale, now), rows=len(stale))
        return {key: hit.target for key, hit in found.items()}

    async def cache_put(self, entries: Sequence[CacheWrite], now: datetime) -> dict[bytes, str]:
        if not entries:
            return {}
        return await self._db.writing(lambda conn: _put(conn, entries, now), rows=len(entries))

    async def trim_cache(self, max_segments: int, unused_since: datetime) -> int:
        async with self._db.tx() as conn:
            stale = await conn.execute(
                delete(segment_cache).where(segment_cache.c.last_used_at < unused_since)
            )
        async with self._db.read() as conn:
            count = (await conn.execute(select(func.count()).select_from(segment_cache))).scalar()
        excess = int(count or 0) - max_segments
        removed = int(stale.rowcount)
        while excess > 0:
            batch = min(excess, TRIM_BATCH)
            oldest = (
                select(segment_cache.c.key)
                .order_by(segment_cache.c.last_used_at, segment_cache.c.key)
                .limit(batch)
            )
            async with self._db.tx() as conn:
                result = await conn.execute(
                    delete(segment_cache).where(segment_cache.c.key.in_(oldest.scalar_subquery()))
                )
            removed += result.rowcount
            excess -= batch
        return removed


def _put(conn: Connection, entries: Sequence[CacheWrite], now: datetime) -> dict[bytes, str]:
    fenced = {(e.job_id, e.attempt) for e in entries if e.job_id is not None}
    current = _in_flight(conn, fenced) if fenced else set()
    kept = [e for e in entries if e.job_id is None or (e.job_id, e.attempt) in current]
    rows = {e.key: e for e in kept}
    statement = _INSERTS[conn.dialect.name]
    for part in slices(sorted(rows)):
        conn.execute(statement, [_cache_row(rows[key], now) for key in part])
    found = find(conn, [e.key for e in entries], now)
    return {key: hit.target for key, hit in found.items()}


def _cache_row(entry: CacheWrite, now: datetime) -> dict[str, Any]:
    return {
        "key": entry.key,
        "target": entry.target,
        "created_at": now,
        "last_used_at": now,
        "confidence": entry.confidence,
        "terms": entry.terms,
    }


# First write wins: a key already stored keeps its target.
_INSERTS = {
    dialect: make(segment_cache).on_conflict_do_nothing(index_elements=[segment_cache.c.key])
    for dialect, make in (("postgresql", pg_insert), ("sqlite", sqlite_insert))
}
_IN_FLIGHT = select(jobs.c.id, jobs.c.attempts).where(
    jobs.c.id.in_(bindparam("ids", expanding=True)), jobs.c.status.in_(IN_FLIGHT_VALUES)
)


def _in_flight(conn: Connection, attempts: set[tuple[str, int]]) -> set[tuple[str, int]]:
    """Those of ``attempts`` (job id, attempt) that are their job's current one, in flight."""
    ids = sorted({job_id for job_id, _ in attempts})
    return {(row.id, row.attempts) for row in conn.execute(_IN_FLIGHT, {"ids": ids})} & attempts


def _info(row: Any) -> MemoryInfo:
    return MemoryInfo(
        name=row.name,
        units=row.units,
        languages=tuple(json.loads(row.languages)),
        source_lang=row.source_lang,
        created_at=aware(row.created_at) or row.created_at,
        updated_at=aware(row.updated_at) or row.updated_at,
    )


class SqlMemories:
    """``Memories`` on the shared database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def save_memory(
        self,
        tenant: str,
        info: MemoryInfo,
        entries: Sequence[MemoryEntry],
    ) -> bool:
        try:
            return await self._save(tenant, info, entries)
        except IntegrityError:
            # Two first imports of one name at once: the unique (tenant, name) refused one.
            raise Conflict(f"memory {info.name!r} is being imported by another request") from None

    async def _save(self, tenant: str, info: MemoryInfo, entries: Sequence[MemoryEntry]) -> bool:
        async with self._db.tx() as conn:
            memory_id, replaced = await _claim(conn, tenant, info)
            rows = [
                {
                    "memory_id": memory_id,
                    "key": e.key,
                    "source_lang": e.source_lang,
                    "target_lang": e.target_lang,
                    "source": e.source,
                    "target": e.target,
                }
                for e in entries
            ]
            for start in range(0, len(rows), ROWS_PER_INSERT):
                await conn.execute(insert(memory_units), rows[start : start + ROWS_PER_INSERT])
        return replaced

    async def list_memories(self, tenant: str) -> list[MemoryInfo]:
        query = select(memories).where(memories.c.tenant == tenant).order_by(memories.c.name)
        async with self._db.read() as conn:
            return [_info(row) for row in await conn.execute(query)]

    async def memory_ids(self, tenant: str, names: Sequence[str]) -> dict[str, int]:
        if not names:
            return {}
        query = select(memories.c.name, memories.c.id).where(
            memories.c.tenant == tenant, memories.c.name.in_(list(names))
        )
        async with self._db.read() as conn:
            return {row.name: row.id for row in await conn.execute(query)}

    async def matches(
        self, memory_ids: Sequence[int], keys: Sequence[bytes]
    ) -> dict[tuple[int, bytes], str]:
        if not memory_ids or not keys:
            return {}
        return await self._db.reading(lambda conn: matches(conn, memory_ids, keys))

    async def delete_memory(self, tenant: str, name: str) -> bool:
        async with self._db.tx() as conn:
            row = (
                await conn.execute(
                    delete(memories)
                    .where(memories.c.tenant == tenant, memories.c.name == name)
                    .returning(memories.c.id)
                )
            ).first()
            if row is None:
                return False
            # Not left to ON DELETE CASCADE: SQLite enforces it only with foreign keys on.
            await conn.execute(delete(memory_units).where(memory_units.c.memory_id == row.id))
        return True


async def _claim(conn: AsyncConnection, tenant: str, info: MemoryInfo) -> tuple[int, bool]:
    """The id of the memory ``info.name`` of ``tenant``, emptied of its units if it existed
    (then True), created otherwise."""
    values = {
        "units": info.units,
        "languages": json.dumps(list(info.languages)),
        "source_lang": info.source_lang,
        "updated_at": info.updated_at,
    }
    row = (
        await conn.execute(
            select(memories.c.id)
            .where(memories.c.tenant == tenant, memories.c.name == info.name)
            .with_for_update()
        )
    ).first()
    if row is not None:
        await conn.execute(update(memories).where(memories.c.id == row.id).values(**values))
        await conn.execute(delete(memory_units).where(memory_units.c.memory_id == row.id))
        return int(row.id), True
    created = await conn.execute(
        insert(memories)
        .values(tenant=tenant, name=info.name, created_at=info.created_at, **values)
        .returning(memories.c.id)
    )
    return int(created.scalar_one()), False
