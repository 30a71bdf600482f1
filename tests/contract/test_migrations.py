"""The migrations build exactly the schema ``store/tables.py`` describes, on SQLite and
PostgreSQL: nothing a new table or column needs was left out of either."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection

from dragoman.store.sql import SqlJobStore
from dragoman.store.tables import metadata
from tests.contract.conftest import drop_postgres_database, fresh_postgres_database


def _differences(connection: Connection) -> list[object]:
    return list(compare_metadata(MigrationContext.configure(connection), metadata))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_the_migrated_schema_is_the_described_one(backend: str, tmp_path: Path) -> None:
    name = None
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    else:
        url, name = await fresh_postgres_database()
    store = SqlJobStore(url)
    try:
        await store.open()
        async with store._db.read() as connection:
            assert await connection.run_sync(_differences) == []
    finally:
        await store.close()
        if name is not None:
            await drop_postgres_database(name)
