"""The segment cache on the store's database (ADR 0014): engine outputs by key, shared by
every process; first write wins, the least recently used rows are trimmed.

Keys are computed by the caller (``reuse.keys``); the store only stores, finds and trims.
A hit refreshes ``last_used_at`` only when it is older than ``REFRESH_S``, so a busy cache
is read far more often than written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from dragoman.store.database import Database
from dragoman.store.rows import IN_FLIGHT_VALUES, aware
from dragoman.store.tables import jobs, segment_cache

REFRESH_S = 3600.0
# Keys per statement: well under SQLite's and asyncpg's limits on bound parameters.
KEYS_PER_QUERY = 500
TRIM_BATCH = 5000


@dataclass(frozen=True, slots=True)
class CacheWrite:
    """An engine output to cache, made for attempt ``attempt`` of job ``job_id``: stored only
    while that attempt is in flight, so cancelled or retried work is never cached. Without a
    job (``job_id`` None: a synchronous request, answered already), it is stored as is."""

    key: bytes
    target: str
    job_id: str | None = None
    attempt: int = 0


def slices(keys: Sequence[bytes]) -> list[Sequence[bytes]]:
    return [keys[i : i + KEYS_PER_QUERY] for i in range(0, len(keys), KEYS_PER_QUERY)]


async def find(conn: AsyncConnection, keys: Sequence[bytes], now: datetime) -> dict[bytes, str]:
    """The cached targets of ``keys``; hits not used for ``REFRESH_S`` are marked used."""
    found: dict[bytes, str] = {}
    stale: list[bytes] = []
    before = now - timedelta(seconds=REFRESH_S)
    for part in slices(sorted(set(keys))):
        query = select(segment_cache).where(segment_cache.c.key.in_(part))
        for row in await conn.execute(query):
            found[row.key] = row.target
            used = aware(row.last_used_at)
            if used is not None and used < before:
                stale.append(row.key)
    for part in slices(stale):
        await conn.execute(
            update(segment_cache).where(segment_cache.c.key.in_(part)).values(last_used_at=now)
        )
    return found


class SqlSegmentCache:
    _db: Database

    async def cached(self, keys: Sequence[bytes], now: datetime) -> dict[bytes, str]:
        async with self._db.tx() as conn:
            return await find(conn, keys, now)

    async def cache_put(self, entries: Sequence[CacheWrite], now: datetime) -> dict[bytes, str]:
        if not entries:
            return {}
        async with self._db.tx() as conn:
            fenced = {(e.job_id, e.attempt) for e in entries if e.job_id is not None}
            current = await _in_flight(conn, fenced) if fenced else set()
            rows = {
                e.key: e.target
                for e in entries
                if e.job_id is None or (e.job_id, e.attempt) in current
            }
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            statement = insert(segment_cache).on_conflict_do_nothing(
                index_elements=[segment_cache.c.key]
            )
            for part in slices(sorted(rows)):
                await conn.execute(
                    statement,
                    [
                        {"key": k, "target": rows[k], "created_at": now, "last_used_at": now}
                        for k in part
                    ],
                )
            return await find(conn, [e.key for e in entries], now)

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


async def _in_flight(conn: AsyncConnection, attempts: set[tuple[str, int]]) -> set[tuple[str, int]]:
    """Those of ``attempts`` (job id, attempt) that are their job's current one, in flight."""
    ids = sorted({job_id for job_id, _ in attempts})
    query = select(jobs.c.id, jobs.c.attempts).where(
        jobs.c.id.in_(ids), jobs.c.status.in_(IN_FLIGHT_VALUES)
    )
    return {(row.id, row.attempts) for row in await conn.execute(query)} & attempts
