"""Characters and requests per tenant and period in the store: the ``UsageLedger`` protocol
and ``SqlUsage`` on the shared ``Database``.

Increments are added with one upsert per row, so API processes that flush at the same time
add up rather than overwrite each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dragoman.models import Usage
from dragoman.store.database import Database
from dragoman.store.tables import usage


class UsageLedger(Protocol):
    """Characters and requests per tenant (``""`` when authentication is off) and period."""

    async def add_usage(self, increments: Sequence[tuple[str, str, int, int]]) -> None:
        """Adds ``(tenant, period, characters, requests)`` to the ledger, in one transaction."""
        ...

    async def get_usage(self, tenant: str, period: str) -> Usage:
        """What ``tenant`` used in ``period`` (zeros when nothing was recorded)."""
        ...


class SqlUsage:
    """``UsageLedger`` on the shared database."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def add_usage(self, increments: Sequence[tuple[str, str, int, int]]) -> None:
        if not increments:
            return
        async with self._db.tx() as conn:
            insert = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            for tenant, period, characters, requests in increments:
                statement = insert(usage).values(
                    tenant=tenant, period=period, characters=characters, requests=requests
                )
                await conn.execute(
                    statement.on_conflict_do_update(
                        index_elements=[usage.c.tenant, usage.c.period],
                        set_={
                            "characters": usage.c.characters + statement.excluded.characters,
                            "requests": usage.c.requests + statement.excluded.requests,
                        },
                    )
                )

    async def get_usage(self, tenant: str, period: str) -> Usage:
        query = select(usage.c.characters, usage.c.requests).where(
            usage.c.tenant == tenant, usage.c.period == period
        )
        async with self._db.read() as conn:
            row = (await conn.execute(query)).first()
        return Usage(row.characters, row.requests) if row else Usage()
