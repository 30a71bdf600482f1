"""Named leases with a deadline: ``Leases`` on the store's database."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import insert, or_, select, update

from dragoman.store.database import Database
from dragoman.store.tables import leases


class SqlLeases:
    def __init__(self, database: Database) -> None:
        self._db = database

    async def acquire_lease(self, name: str, holder: str, ttl_s: float, now: datetime) -> bool:
        expires = now + timedelta(seconds=ttl_s)
        async with self._db.tx() as conn:
            taken = await conn.execute(
                update(leases)
                .where(leases.c.name == name)
                .where(or_(leases.c.holder == holder, leases.c.expires_at < now))
                .values(holder=holder, expires_at=expires)
            )
            if taken.rowcount == 1:
                return True
            exists = (
                await conn.execute(select(leases.c.name).where(leases.c.name == name))
            ).first()
            if exists:
                return False
            await conn.execute(insert(leases).values(name=name, holder=holder, expires_at=expires))
        return True
