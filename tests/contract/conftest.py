"""Every ``JobStore`` and ``Bus`` implementation runs the same contract tests, and so does
each feature's store (on the job store's database)."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from dragoman.glossaries.store import Glossaries, SqlGlossaries
from dragoman.idempotency.store import IdempotencyKeys, SqlIdempotencyKeys
from dragoman.reuse.store import CacheRows, Memories, SqlCacheRows, SqlMemories
from dragoman.store import Leases, RelayLog, WorkerRegistry
from dragoman.store.leases import SqlLeases
from dragoman.store.relay_log import SqlRelayLog
from dragoman.store.sql import SqlJobStore
from dragoman.store.worker_registry import SqlWorkerRegistry
from dragoman.usage.store import SqlUsage, UsageLedger
from dragoman.webhooks.store import Deliveries, SqlDeliveries

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
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SqlJobStore]:
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


# The narrow protocols and each feature's store sit on the job store's database, as in a
# running process (``Runtime.leases``, ``Terminology``'s glossaries, ...).


@pytest.fixture
def leases(store: SqlJobStore) -> Leases:
    return SqlLeases(store.database)


@pytest.fixture
def relay_log(store: SqlJobStore) -> RelayLog:
    return SqlRelayLog(store.database)


@pytest.fixture
def registry(store: SqlJobStore) -> WorkerRegistry:
    return SqlWorkerRegistry(store.database)


@pytest.fixture
def glossaries(store: SqlJobStore) -> Glossaries:
    return SqlGlossaries(store.database)


@pytest.fixture
def usage(store: SqlJobStore) -> UsageLedger:
    return SqlUsage(store.database)


@pytest.fixture
def deliveries(store: SqlJobStore) -> Deliveries:
    return SqlDeliveries(store.database)


@pytest.fixture
def cache_rows(store: SqlJobStore) -> CacheRows:
    return SqlCacheRows(store.database)


@pytest.fixture
def memories(store: SqlJobStore) -> Memories:
    return SqlMemories(store.database)


@pytest.fixture
def idempotency_keys(store: SqlJobStore) -> IdempotencyKeys:
    return SqlIdempotencyKeys(store.database)
