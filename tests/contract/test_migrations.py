"""The migrations build exactly the schema ``store/tables.py`` describes, on SQLite and
PostgreSQL: nothing a new table or column needs was left out of either; and the rows of
before come through them."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import Connection
from sqlalchemy import text as sql_text
from sqlalchemy.ext.asyncio import create_async_engine

from dragoman.glossaries.store import SqlGlossaries
from dragoman.models import Dictionary, Pair
from dragoman.store.database import _MIGRATIONS as MIGRATIONS
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


def _upgrade_to(connection: Connection, revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


_OLD_GLOSSARY = (
    "INSERT INTO glossaries (id, tenant, name, source_lang, target_lang, entry_count, created_at)"
    " VALUES ('old', 'acme', 'terms', 'en', 'es', 2, '2026-01-01 00:00:00+00:00')"
)
_OLD_ENTRIES = (
    "INSERT INTO glossary_entries (glossary_id, position, source, target)"
    " VALUES ('old', 0, 'server', 'servidor'), ('old', 1, 'Dragoman', 'Dragoman')"
)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_glossary_of_one_pair_becomes_one_of_one_dictionary(
    backend: str, tmp_path: Path
) -> None:
    name = None
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    else:
        url, name = await fresh_postgres_database()
    before = create_async_engine(url)
    try:
        async with before.begin() as connection:
            await connection.run_sync(_upgrade_to, "0016")
            await connection.execute(sql_text(_OLD_GLOSSARY))
            await connection.execute(sql_text(_OLD_ENTRIES))
        await before.dispose()
        store = SqlJobStore(url)  # brings the schema up to date, with its foreign keys on
        await store.open()
        try:
            glossaries = SqlGlossaries(store.database)
            found = await glossaries.get_glossary("old")
            assert found is not None and (found.name, found.revision) == ("terms", 1)
            assert found.dictionaries == (Dictionary("en", "es", 2, 1),)
            assert await glossaries.dictionary_entries("old", Pair("en", "es")) == (
                1,
                [("server", "servidor"), ("Dragoman", "Dragoman")],
            )
        finally:
            await store.close()
    finally:
        await before.dispose()
        if name is not None:
            await drop_postgres_database(name)
