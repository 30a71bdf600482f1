"""Translation memories on the store's database: a tenant's memories by name, and their
units by key (the caller computes keys and forms: ``reuse``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from dragoman.errors import Conflict
from dragoman.models import MemoryInfo
from dragoman.store.database import Database
from dragoman.store.rows import aware
from dragoman.store.segment_cache import slices
from dragoman.store.tables import memories, memory_units

ROWS_PER_INSERT = 1000


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One direction of one unit: the key of its source's matching form, and both sides."""

    key: bytes
    source_lang: str
    target_lang: str
    source: str
    target: str


def _info(row: Any) -> MemoryInfo:
    return MemoryInfo(
        name=row.name,
        units=row.units,
        languages=tuple(json.loads(row.languages)),
        source_lang=row.source_lang,
        created_at=aware(row.created_at) or row.created_at,
        updated_at=aware(row.updated_at) or row.updated_at,
    )


async def matches(
    conn: AsyncConnection, memory_ids: Sequence[int], keys: Sequence[bytes]
) -> dict[tuple[int, bytes], str]:
    """The targets of ``keys`` in the memories ``memory_ids``, by (memory, key)."""
    found: dict[tuple[int, bytes], str] = {}
    if not memory_ids:
        return found
    for part in slices(sorted(set(keys))):
        query = select(memory_units.c.memory_id, memory_units.c.key, memory_units.c.target).where(
            memory_units.c.memory_id.in_(sorted(set(memory_ids))), memory_units.c.key.in_(part)
        )
        for row in await conn.execute(query):
            found[(row.memory_id, row.key)] = row.target
    return found


class SqlMemories:
    _db: Database

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
