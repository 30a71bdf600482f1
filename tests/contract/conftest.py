"""Every ``JobStore`` and ``Bus`` implementation runs the same contract tests."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from dragoman.store import JobStore
from dragoman.store.sql import SqlJobStore

POSTGRES_ADMIN_URL = os.environ.get(
    "DRAGOMAN_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


async def fresh_postgres_database() -> tuple[str, str]:
    """Creates an empty database; returns (its SQLAlchemy URL, its name)."""
    name = f"dragoman_test_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(POSTGRES_ADMIN_URL)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://")
    return f"{base}/{name}", name


async def drop_postgres_database(name: str) -> None:
    admin = await asyncpg.connect(POSTGRES_ADMIN_URL)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[JobStore]:
    if request.param == "sqlite":
        impl = SqlJobStore(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
        await impl.open()
        yield impl
        await impl.close()
        return
    url, name = await fresh_postgres_database()
    impl = SqlJobStore(url)
    await impl.open()
    yield impl
    await impl.close()
    await drop_postgres_database(name)
