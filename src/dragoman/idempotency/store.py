"""The keys of idempotent requests in the store: the ``IdempotencyKeys`` protocol and
``SqlIdempotencyKeys`` on the shared ``Database``.

A key's row is claimed by one insert (the primary key is the tenant and the key, so of two
requests at once exactly one claims it), answered by one update, and given back by one
delete; taking over a row (expired, or claimed by a request that never answered) is one
update fenced by the claim it replaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sqlalchemy import delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dragoman.store.database import Database
from dragoman.store.rows import aware
from dragoman.store.tables import idempotency_keys as keys
from dragoman.store.tables import jobs


@dataclass(frozen=True, slots=True)
class Answer:
    """What the first request with a key answered, to be given again as it was."""

    status: int
    content_type: str | None
    location: str | None
    body: bytes


@dataclass(frozen=True, slots=True)
class Claim:
    """A key's row: the first request's fingerprint, when it claimed the key, and its
    answer once it gave one."""

    fingerprint: str
    claimed_at: datetime
    expires_at: datetime
    answer: Answer | None


class IdempotencyKeys(Protocol):
    async def claim(
        self, tenant: str, key: str, fingerprint: str, now: datetime, expires_at: datetime
    ) -> Claim | None:
        """Claims ``key`` for a request; None when it did, else the row that holds it."""
        ...

    async def take_over(
        self,
        tenant: str,
        key: str,
        fingerprint: str,
        held_since: datetime,
        now: datetime,
        expires_at: datetime,
    ) -> bool:
        """Claims a row that was claimed at ``held_since`` and has no answer or has expired;
        False when another request changed it first."""
        ...

    async def answer(self, tenant: str, key: str, claimed_at: datetime, answer: Answer) -> None:
        """Keeps the answer of the request that claimed the key at ``claimed_at``."""
        ...

    async def release(self, tenant: str, key: str, claimed_at: datetime) -> None:
        """Gives back a key whose request ended without an answer worth keeping."""
        ...

    async def job_of(self, tenant: str | None, key: str) -> str | None:
        """The id of the job submitted with ``key``, if one was stored."""
        ...

    async def purge(self, now: datetime) -> int:
        """Deletes the keys expired at ``now``; how many."""
        ...


class SqlIdempotencyKeys:
    """``IdempotencyKeys`` on the shared database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def claim(
        self, tenant: str, key: str, fingerprint: str, now: datetime, expires_at: datetime
    ) -> Claim | None:
        row = {
            "tenant": tenant,
            "key": key,
            "fingerprint": fingerprint,
            "claimed_at": now,
            "expires_at": expires_at,
        }
        async with self._db.tx() as conn:
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            claimed = await conn.execute(insert(keys).values(row).on_conflict_do_nothing())
            if claimed.rowcount == 1:
                return None
            found = (
                await conn.execute(select(keys).where(keys.c.tenant == tenant, keys.c.key == key))
            ).first()
        if found is None:  # deleted between the two statements: claim it again
            return await self.claim(tenant, key, fingerprint, now, expires_at)
        answer = None
        if found.status is not None:
            answer = Answer(found.status, found.content_type, found.location, found.body or b"")
        claimed_at, expires = aware(found.claimed_at), aware(found.expires_at)
        assert claimed_at is not None and expires is not None
        return Claim(found.fingerprint, claimed_at, expires, answer)

    async def take_over(
        self,
        tenant: str,
        key: str,
        fingerprint: str,
        held_since: datetime,
        now: datetime,
        expires_at: datetime,
    ) -> bool:
        async with self._db.tx() as conn:
            taken = await conn.execute(
                update(keys)
                .where(keys.c.tenant == tenant, keys.c.key == key)
                .where(keys.c.claimed_at == held_since)
                .where((keys.c.status.is_(None)) | (keys.c.expires_at <= now))
                .values(
                    fingerprint=fingerprint,
                    claimed_at=now,
                    expires_at=expires_at,
                    status=None,
                    content_type=None,
                    location=None,
                    body=None,
                )
            )
        return bool(taken.rowcount == 1)

    async def answer(self, tenant: str, key: str, claimed_at: datetime, answer: Answer) -> None:
        async with self._db.tx() as conn:
            await conn.execute(
                update(keys)
                .where(keys.c.tenant == tenant, keys.c.key == key)
                .where(keys.c.claimed_at == claimed_at, keys.c.status.is_(None))
                .values(
                    status=answer.status,
                    content_type=answer.content_type,
                    location=answer.location,
                    body=answer.body,
                )
            )

    async def release(self, tenant: str, key: str, claimed_at: datetime) -> None:
        async with self._db.tx() as conn:
            await conn.execute(
                delete(keys)
                .where(keys.c.tenant == tenant, keys.c.key == key)
                .where(keys.c.claimed_at == claimed_at, keys.c.status.is_(None))
            )

    async def job_of(self, tenant: str | None, key: str) -> str | None:
        owner = jobs.c.tenant.is_(None) if tenant is None else jobs.c.tenant == tenant
        query = (
            select(jobs.c.id)
            .where(owner, jobs.c.idempotency_key == key, jobs.c.parent_id.is_(None))
            .order_by(jobs.c.seq)
            .limit(1)
        )
        async with self._db.read() as conn:
            return (await conn.execute(query)).scalar()

    async def purge(self, now: datetime) -> int:
        async with self._db.tx() as conn:
            result = await conn.execute(delete(keys).where(keys.c.expires_at <= now))
        return int(result.rowcount or 0)
