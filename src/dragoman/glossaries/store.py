"""Tenants' glossaries and their entries in the store: the ``Glossaries`` protocol and
``SqlGlossaries`` on the shared ``Database``.

A glossary and its entries are written in one transaction and never updated; a deletion
only marks the row, so a job that named the glossary still finds it, and the rows go with
``purge_glossaries`` once no job can need them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import delete, insert, select, update

from dragoman.models import Glossary
from dragoman.store.database import Database
from dragoman.store.rows import UNFINISHED_VALUES, aware
from dragoman.store.tables import glossaries, glossary_entries, jobs


class Glossaries(Protocol):
    """Tenants' glossaries: written once with their entries, never changed; a deleted one
    is hidden from lists but stays readable by id until purged."""

    async def add_glossary(self, glossary: Glossary, entries: Sequence[tuple[str, str]]) -> None:
        """Stores a glossary and its ``(source, target)`` entries, in order, at once."""
        ...

    async def get_glossary(self, glossary_id: str) -> Glossary | None:
        """Any glossary, deleted ones included (``deleted_at`` says so)."""
        ...

    async def list_glossaries(self, tenant: str | None) -> list[Glossary]:
        """A tenant's glossaries (every tenant's with None) not deleted, oldest first."""
        ...

    async def glossary_entries(self, glossary_id: str) -> list[tuple[str, str]]:
        """A glossary's ``(source, target)`` entries in their order; none if unknown."""
        ...

    async def delete_glossary(self, glossary_id: str, now: datetime) -> bool:
        """Marks a glossary deleted; False when it is unknown or deleted already."""
        ...

    async def purge_glossaries(self, deleted_before: datetime) -> int:
        """Removes the glossaries deleted before ``deleted_before`` and their entries;
        returns how many."""
        ...


def _to_glossary(row: Any) -> Glossary:
    return Glossary(
        id=row.id,
        tenant=row.tenant,
        name=row.name,
        source_lang=row.source_lang,
        target_lang=row.target_lang,
        entry_count=row.entry_count,
        created_at=aware(row.created_at) or datetime.now(UTC),
        deleted_at=aware(row.deleted_at),
    )


class SqlGlossaries:
    """``Glossaries`` on the shared database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def add_glossary(self, glossary: Glossary, entries: Sequence[tuple[str, str]]) -> None:
        async with self._db.tx() as conn:
            await conn.execute(
                insert(glossaries).values(
                    id=glossary.id,
                    tenant=glossary.tenant,
                    name=glossary.name,
                    source_lang=glossary.source_lang,
                    target_lang=glossary.target_lang,
                    entry_count=glossary.entry_count,
                    created_at=glossary.created_at,
                    deleted_at=glossary.deleted_at,
                )
            )
            await conn.execute(
                insert(glossary_entries),
                [
                    {"glossary_id": glossary.id, "position": i, "source": s, "target": t}
                    for i, (s, t) in enumerate(entries)
                ],
            )

    async def get_glossary(self, glossary_id: str) -> Glossary | None:
        query = select(glossaries).where(glossaries.c.id == glossary_id)
        async with self._db.read() as conn:
            row = (await conn.execute(query)).first()
        return _to_glossary(row) if row else None

    async def list_glossaries(self, tenant: str | None) -> list[Glossary]:
        query = (
            select(glossaries)
            .where(glossaries.c.deleted_at.is_(None))
            .order_by(glossaries.c.created_at, glossaries.c.id)
        )
        if tenant is not None:
            query = query.where(glossaries.c.tenant == tenant)
        async with self._db.read() as conn:
            return [_to_glossary(row) for row in await conn.execute(query)]

    async def glossary_entries(self, glossary_id: str) -> list[tuple[str, str]]:
        query = (
            select(glossary_entries.c.source, glossary_entries.c.target)
            .where(glossary_entries.c.glossary_id == glossary_id)
            .order_by(glossary_entries.c.position)
        )
        async with self._db.read() as conn:
            return [(row.source, row.target) for row in await conn.execute(query)]

    async def delete_glossary(self, glossary_id: str, now: datetime) -> bool:
        async with self._db.tx() as conn:
            result = await conn.execute(
                update(glossaries)
                .where(glossaries.c.id == glossary_id, glossaries.c.deleted_at.is_(None))
                .values(deleted_at=now)
            )
        return bool(result.rowcount == 1)

    async def purge_glossaries(self, deleted_before: datetime) -> int:
        # A job still waiting or running keeps the glossary it named, however old.
        needed = select(jobs.c.glossary_id).where(
            jobs.c.glossary_id.is_not(None), jobs.c.status.in_(UNFINISHED_VALUES)
        )
        doomed = select(glossaries.c.id).where(
            glossaries.c.deleted_at < deleted_before, glossaries.c.id.not_in(needed)
        )
        async with self._db.tx() as conn:
            ids = [row.id for row in await conn.execute(doomed)]
            if ids:
                await conn.execute(
                    delete(glossary_entries).where(glossary_entries.c.glossary_id.in_(ids))
                )
                await conn.execute(delete(glossaries).where(glossaries.c.id.in_(ids)))
        return len(ids)
