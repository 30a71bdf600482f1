"""The store's connection layer: closing it while work is in flight."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import text

from dragoman.errors import StoreUnavailable
from dragoman.store.database import Database


@pytest.fixture
async def db(tmp_path: Path) -> Database:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    await database.open()
    return database


async def test_closing_waits_for_a_transaction_in_flight_and_fails_a_waiting_writer(
    db: Database,
) -> None:
    holding, release = asyncio.Event(), asyncio.Event()

    async def first() -> int:
        async with db.tx() as conn:
            holding.set()
            await release.wait()
            return int((await conn.execute(text("SELECT 1"))).scalar_one())

    async def second() -> None:
        async with db.tx() as conn:  # waits for the write lock that first holds
            await conn.execute(text("SELECT 1"))

    running = asyncio.create_task(first())
    await holding.wait()
    waiting = asyncio.create_task(second())
    await asyncio.sleep(0.01)
    closing = asyncio.create_task(db.close())
    await asyncio.sleep(0.01)
    assert not closing.done()  # the transaction in flight is not disposed of under it
    release.set()
    assert await running == 1
    with pytest.raises(StoreUnavailable):
        await waiting
    await closing


async def test_work_after_close_is_store_unavailable(db: Database) -> None:
    await db.close()
    with pytest.raises(StoreUnavailable):
        async with db.read():
            pass
