"""Tenants' glossaries, their dictionaries and entries in the store: the ``Glossaries``
protocol and ``SqlGlossaries`` on the shared ``Database``.

A glossary is written with its dictionaries in one transaction; each change after that
(``change_glossary``) is one transaction too, made only if the glossary is still at the
revision the change was computed from, so two edits never lose one another. A read of a
glossary, or of a dictionary's entries, is one statement: it sees one revision whole. A
deletion only marks the row, so a job that named the glossary still finds it, and the rows
go with ``purge_glossaries`` once no job can need them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import groupby
from typing import Any, Protocol

from sqlalchemy import Select, and_, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from dragoman.models import Dictionary, Glossary, Pair
from dragoman.store.database import Database
from dragoman.store.rows import UNFINISHED_VALUES, aware
from dragoman.store.tables import dictionary_entries, glossaries, glossary_dictionaries, jobs

Entries = Sequence[tuple[str, str]]  # (source, target) pairs, in order


@dataclass(frozen=True, slots=True)
class Edit:
    """One change of a glossary: a new name (None: kept), and the dictionary of ``pair``
    written with ``entries`` (added last when it is new) or, with ``entries`` None, removed."""

    name: str | None = None
    pair: Pair | None = None
    entries: Entries | None = None


class Glossaries(Protocol):
    """Tenants' glossaries: written with their dictionaries, changed a revision at a time;
    a deleted one is hidden from lists but stays readable by id until purged."""

    async def add_glossary(
        self, glossary: Glossary, entries: Sequence[Entries], idempotency_key: str | None = None
    ) -> None:
        """Stores a glossary, its dictionaries and the entries of each (``entries[i]``
        those of ``glossary.dictionaries[i]``), in order, at once, with the
        ``Idempotency-Key`` it was created with."""
        ...

    async def glossary_of_key(self, tenant: str | None, idempotency_key: str) -> str | None:
        """The id of the tenant's glossary created with ``idempotency_key``, not deleted."""
        ...

    async def get_glossary(self, glossary_id: str) -> Glossary | None:
        """Any glossary, deleted ones included (``deleted_at`` says so)."""
        ...

    async def list_glossaries(self, tenant: str | None) -> list[Glossary]:
        """A tenant's glossaries (every tenant's with None) not deleted, oldest first."""
        ...

    async def dictionary_entries(
        self, glossary_id: str, pair: Pair
    ) -> tuple[int, list[tuple[str, str]]] | None:
        """The revision and the entries, in order, of a glossary's dictionary for ``pair``;
        None when it has none."""
        ...

    async def change_glossary(self, glossary_id: str, revision: int, edit: Edit) -> bool:
        """Makes ``edit`` revision ``revision + 1`` of a glossary that is at ``revision`` and
        not deleted; False (nothing changed) otherwise."""
        ...

    async def delete_glossary(self, glossary_id: str, now: datetime) -> bool:
        """Marks a glossary deleted; False when it is unknown or deleted already."""
        ...

    async def purge_glossaries(self, deleted_before: datetime) -> int:
        """Removes the glossaries deleted before ``deleted_before`` with their dictionaries;
        returns how many."""
        ...


_D, _E = glossary_dictionaries.c, dictionary_entries.c


def _with_dictionaries() -> Select[Any]:
    return (
        select(
            glossaries, _D.source_lang, _D.target_lang, _D.entry_count, _D.revision.label("d_rev")
        )
        .join(glossary_dictionaries, _D.glossary_id == glossaries.c.id)
        .order_by(glossaries.c.created_at, glossaries.c.id, _D.position)
    )


def _to_glossaries(rows: Sequence[Any]) -> list[Glossary]:
    found = []
    for _, group in groupby(rows, key=lambda row: row.id):
        parts = list(group)
        first = parts[0]
        found.append(
            Glossary(
                id=first.id,
                tenant=first.tenant,
                name=first.name,
                dictionaries=tuple(
                    Dictionary(p.source_lang, p.target_lang, p.entry_count, p.d_rev) for p in parts
                ),
                created_at=aware(first.created_at) or datetime.now(UTC),
                deleted_at=aware(first.deleted_at),
                revision=first.revision,
            )
        )
    return found


def _of(glossary_id: str, pair: Pair, columns: Any = _D) -> Any:
    return and_(
        columns.glossary_id == glossary_id,
        columns.source_lang == pair.source,
        columns.target_lang == pair.target,
    )


class SqlGlossaries:
    """``Glossaries`` on the shared database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def add_glossary(
        self, glossary: Glossary, entries: Sequence[Entries], idempotency_key: str | None = None
    ) -> None:
        async with self._db.tx() as conn:
            await conn.execute(
                insert(glossaries).values(
                    id=glossary.id,
                    tenant=glossary.tenant,
                    name=glossary.name,
                    revision=glossary.revision,
                    created_at=glossary.created_at,
                    deleted_at=glossary.deleted_at,
                    idempotency_key=idempotency_key,
                )
            )
            for position, (dictionary, rows) in enumerate(
                zip(glossary.dictionaries, entries, strict=True)
            ):
                await _write(conn, glossary.id, dictionary, rows, position)

    async def glossary_of_key(self, tenant: str | None, idempotency_key: str) -> str | None:
        query = select(glossaries.c.id).where(
            glossaries.c.tenant.is_(None) if tenant is None else glossaries.c.tenant == tenant,
            glossaries.c.idempotency_key == idempotency_key,
            glossaries.c.deleted_at.is_(None),
        )
        async with self._db.read() as conn:
            found: str | None = (await conn.execute(query)).scalar()
        return found

    async def get_glossary(self, glossary_id: str) -> Glossary | None:
        query = _with_dictionaries().where(glossaries.c.id == glossary_id)
        async with self._db.read() as conn:
            found = _to_glossaries((await conn.execute(query)).all())
        return found[0] if found else None

    async def list_glossaries(self, tenant: str | None) -> list[Glossary]:
        query = _with_dictionaries().where(glossaries.c.deleted_at.is_(None))
        if tenant is not None:
            query = query.where(glossaries.c.tenant == tenant)
        async with self._db.read() as conn:
            return _to_glossaries((await conn.execute(query)).all())

    async def dictionary_entries(
        self, glossary_id: str, pair: Pair
    ) -> tuple[int, list[tuple[str, str]]] | None:
        query = (
            select(_D.revision, _E.source, _E.target)
            .select_from(
                glossary_dictionaries.outerjoin(
                    dictionary_entries,
                    and_(
                        _E.glossary_id == _D.glossary_id,
                        _E.source_lang == _D.source_lang,
                        _E.target_lang == _D.target_lang,
                    ),
                )
            )
            .where(_of(glossary_id, pair))
            .order_by(_E.position)
        )
        async with self._db.read() as conn:
            rows = (await conn.execute(query)).all()
        if not rows:
            return None
        return rows[0].revision, [
            (row.source, row.target) for row in rows if row.source is not None
        ]

    async def change_glossary(self, glossary_id: str, revision: int, edit: Edit) -> bool:
        after = revision + 1
        named = {} if edit.name is None else {"name": edit.name}
        async with self._db.tx() as conn:
            result = await conn.execute(
                update(glossaries)
                .where(
                    glossaries.c.id == glossary_id,
                    glossaries.c.revision == revision,
                    glossaries.c.deleted_at.is_(None),
                )
                .values(revision=after, **named)
            )
            if result.rowcount != 1:
                return False
            if edit.pair is None:
                return True
            await conn.execute(delete(dictionary_entries).where(_of(glossary_id, edit.pair, _E)))
            if edit.entries is None:
                await conn.execute(delete(glossary_dictionaries).where(_of(glossary_id, edit.pair)))
                return True
            dictionary = Dictionary(edit.pair.source, edit.pair.target, len(edit.entries), after)
            kept = await conn.execute(
                update(glossary_dictionaries)
                .where(_of(glossary_id, edit.pair))
                .values(entry_count=dictionary.entry_count, revision=after)
            )
            if kept.rowcount == 1:
                await _insert_entries(conn, glossary_id, edit.pair, edit.entries)
                return True
            last = select(func.max(_D.position)).where(_D.glossary_id == glossary_id)
            position = ((await conn.execute(last)).scalar() or 0) + 1
            await _write(conn, glossary_id, dictionary, edit.entries, position)
        return True

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
                await conn.execute(delete(dictionary_entries).where(_E.glossary_id.in_(ids)))
                await conn.execute(delete(glossary_dictionaries).where(_D.glossary_id.in_(ids)))
                await conn.execute(delete(glossaries).where(glossaries.c.id.in_(ids)))
        return len(ids)


async def _write(
    conn: AsyncConnection, glossary_id: str, dictionary: Dictionary, rows: Entries, position: int
) -> None:
    await conn.execute(
        insert(glossary_dictionaries).values(
            glossary_id=glossary_id,
            source_lang=dictionary.source_lang,
            target_lang=dictionary.target_lang,
            position=position,
            entry_count=dictionary.entry_count,
            revision=dictionary.revision,
        )
    )
    await _insert_entries(conn, glossary_id, dictionary.pair, rows)


async def _insert_entries(
    conn: AsyncConnection, glossary_id: str, pair: Pair, rows: Entries
) -> None:
    if not rows:
        return
    await conn.execute(
        insert(dictionary_entries),
        [
            {
                "glossary_id": glossary_id,
                "source_lang": pair.source,
                "target_lang": pair.target,
                "position": i,
                "source": source,
                "target": target,
            }
            for i, (source, target) in enumerate(rows)
        ],
    )
