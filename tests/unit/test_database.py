"""The store's connection layer: closing it while work is in flight, and cancelling work
in the middle of a statement."""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import threading
from pathlib import Path
from typing import Any

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


async def test_a_writer_cancelled_during_its_statement_leaves_no_write_lock_behind(
    db: Database, tmp_path: Path
) -> None:
    async with db.tx() as conn:
        await conn.execute(text("CREATE TABLE t (x INTEGER)"))
        await conn.execute(text("INSERT INTO t VALUES (1), (2)"))
    entered, release = threading.Event(), threading.Event()

    def gate(x: int) -> int:  # runs inside the statement, in a thread (a deletion's)
        entered.set()
        release.wait(10)
        return x + 1

    def install_gate(sync_conn: Any) -> None:
        sync_conn.connection.dbapi_connection.create_function("gate", 1, gate)

    async def write() -> None:
        async with db.tx() as conn:
            await conn.run_sync(install_gate)
            # RETURNING keeps the statement open until its rows are read.
            await conn.execute(text("DELETE FROM t WHERE gate(x) > 0 RETURNING x"))

    # A connection closed under an open statement held the write lock until the garbage
    # collector freed that statement: with the collector off, that is until the end.
    gc.disable()
    try:
        writer = asyncio.create_task(write())
        await asyncio.to_thread(entered.wait, 10)
        writer.cancel()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await writer
        other = sqlite3.connect(tmp_path / "store.db", timeout=1)
        try:
            other.execute("BEGIN IMMEDIATE")  # "database is locked" if a writer is left
            assert other.execute("SELECT x FROM t").fetchall() == [(1,), (2,)]  # rolled back
        finally:
            other.close()
    finally:
        gc.enable()
    await db.close()


async def test_a_write_that_finds_another_process_holding_the_lock_waits_off_the_loop(
    db: Database, tmp_path: Path
) -> None:
    async with db.tx() as conn:
        await conn.execute(text("CREATE TABLE t (x INTEGER)"))
    other = sqlite3.connect(tmp_path / "store.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's writer, in effect

    async def write() -> None:
        async with db.tx() as conn:
            await conn.execute(text("INSERT INTO t VALUES (1)"))

    writing = asyncio.create_task(write())
    ticks = 0
    for _ in range(20):  # the loop goes on while the write waits for the lock
        await asyncio.sleep(0.01)
        ticks += 1
    assert ticks == 20 and not writing.done()
    async with db.read() as conn:  # and so do reads (WAL)
        assert (await conn.execute(text("SELECT count(*) FROM t"))).scalar_one() == 0
    other.execute("ROLLBACK")
    other.close()
    await asyncio.wait_for(writing, 10)
    async with db.read() as conn:
        assert (await conn.execute(text("SELECT x FROM t"))).scalars().all() == [1]
    await db.close()


async def test_statements_run_in_the_loop_thread_and_deletions_in_another(db: Database) -> None:
    threads: dict[str, str] = {}

    def traced(sql: str) -> None:
        if sql.startswith(("INSERT", "DELETE")):
            threads[sql.split()[0]] = threading.current_thread().name

    async with db.tx() as conn:
        await conn.execute(text("CREATE TABLE t (x INTEGER)"))
    async with db.tx() as conn:
        raw = await conn.get_raw_connection()
        raw.driver_connection._conn.set_trace_callback(traced)  # type: ignore[union-attr]
        await conn.execute(text("INSERT INTO t VALUES (1)"))
        await conn.execute(text("DELETE FROM t"))
        raw.driver_connection._conn.set_trace_callback(None)  # type: ignore[union-attr]
    loop = threading.current_thread().name
    assert threads["INSERT"] == loop
    assert threads["DELETE"] != loop
    await db.close()


async def test_work_in_one_go_commits_or_rolls_back_and_waits_for_a_writer(db: Database) -> None:
    await db.writing(lambda conn: conn.execute(text("CREATE TABLE t (n INTEGER)")))
    await db.writing(lambda conn: conn.execute(text("INSERT INTO t VALUES (1)")))

    def fails(conn: Any) -> None:
        conn.execute(text("INSERT INTO t VALUES (2)"))
        raise ValueError("stop")

    with pytest.raises(ValueError):
        await db.writing(fails)
    count = "SELECT count(*) FROM t"
    assert await db.reading(lambda conn: conn.execute(text(count)).scalar_one()) == 1
    # A writer in one go waits for the write lock that a transaction holds.
    order: list[str] = []
    async with db.tx() as conn:
        second = asyncio.create_task(
            db.writing(lambda c: order.append("second") or c.execute(text("SELECT 1")))
        )
        await asyncio.sleep(0.05)
        order.append("first")
        await conn.execute(text("INSERT INTO t VALUES (3)"))
    await second
    assert order == ["first", "second"]
    await db.close()
    for work in (db.reading, db.writing):
        with pytest.raises(StoreUnavailable):
            await work(lambda conn: conn.execute(text("SELECT 1")))


async def test_a_statement_that_ends_at_once_needs_no_task_and_one_that_waits_gets_one(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dragoman.store.database as database

    made: list[object] = []
    ensure_future = asyncio.ensure_future

    def counted(work: Any) -> Any:
        made.append(work)
        return ensure_future(work)

    monkeypatch.setattr(database.asyncio, "ensure_future", counted)
    async with db.tx() as conn:
        await conn.execute(text("CREATE TABLE t (x INTEGER)"))
        await conn.execute(text("INSERT INTO t VALUES (1), (2), (3)"))
        assert (await conn.execute(text("SELECT sum(x) FROM t"))).scalar_one() == 6
    assert made == []
    async with db.tx() as conn:  # a deletion runs in a thread: the rest of it is a task
        deleted = await conn.execute(text("DELETE FROM t WHERE x > 1 RETURNING x"))
        assert sorted(deleted.scalars().all()) == [2, 3]
    assert len(made) >= 1

    def broken(_x: int) -> int:
        raise ValueError("broken")

    def install(sync_conn: Any) -> None:
        sync_conn.connection.dbapi_connection.create_function("broken", 1, broken)

    # An error after the wait reaches the caller (SQLite's, for a function that raised).
    with pytest.raises(StoreUnavailable):
        async with db.tx() as conn:
            await conn.run_sync(install)
            await conn.execute(text("DELETE FROM t WHERE broken(x) > 0"))
    async with db.read() as conn:
        assert (await conn.execute(text("SELECT x FROM t"))).scalars().all() == [1]
    await db.close()


async def test_a_read_on_sqlite_is_a_plain_call_that_sees_every_commit(db: Database) -> None:
    """SQLite's reads skip the asyncio adapter (two greenlet switches per driver call):
    they run on a plain engine's connection, in the loop's thread, and read what the
    asyncio engine committed."""
    await db.writing(lambda conn: conn.execute(text("CREATE TABLE t (n INTEGER)")))
    seen: list[tuple[str, str]] = []

    def count(conn: Any) -> int:
        seen.append((conn.dialect.driver, threading.current_thread().name))
        return int(conn.execute(text("SELECT count(*) FROM t")).scalar_one())

    for expected in range(3):
        assert await db.reading(count) == expected
        await db.writing(lambda conn: conn.execute(text("INSERT INTO t VALUES (1)")))
    assert set(seen) == {("pysqlite", threading.current_thread().name)}
    await db.close()
    with pytest.raises(StoreUnavailable):
        await db.reading(count)


async def test_reads_keep_one_connection_and_hold_no_snapshot_between_them(
    db: Database, tmp_path: Path
) -> None:
    """Reads share a connection rather than each checking one out of the pool, and each
    ends its transaction: another process's commit is seen by the next read, and a
    checkpoint between reads finds no reader holding the write-ahead log."""
    await db.writing(lambda conn: conn.execute(text("CREATE TABLE t (n INTEGER)")))
    used: list[int] = []

    def count(conn: Any) -> int:
        used.append(id(conn.connection.dbapi_connection))
        return int(conn.execute(text("SELECT count(*) FROM t")).scalar_one())

    other = sqlite3.connect(tmp_path / "store.db", timeout=5)
    try:
        for expected in range(3):
            assert await db.reading(count) == expected
            with other:
                other.execute("INSERT INTO t VALUES (1)")
            busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            assert busy == 0  # no read transaction left open on the kept connection
        assert len(set(used)) == 1

        def fails(conn: Any) -> int:
            conn.execute(text("SELECT count(*) FROM t")).scalar_one()
            raise ValueError("the caller's own error")

        with pytest.raises(ValueError, match="own error"):
            await db.reading(fails)
        assert await db.reading(count) == 3  # a new connection after the failed read
        busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0

        # A read is not a place to write: what one wrote is rolled back as it ends, as a
        # connection given back to the pool is, and no lock stays behind.
        await db.reading(lambda conn: conn.execute(text("INSERT INTO t VALUES (2)")))
        other.execute("PRAGMA busy_timeout = 100")
        with other:
            other.execute("INSERT INTO t VALUES (3)")
        assert await db.reading(count) == 4
    finally:
        other.close()
        await db.close()


async def test_a_read_that_meets_another_process_lock_is_read_again_the_asyncio_way(
    db: Database,
) -> None:
    from sqlalchemy.exc import OperationalError

    drivers: list[str] = []

    def read(conn: Any) -> int:
        drivers.append(conn.dialect.driver)
        if conn.dialect.driver == "pysqlite":
            busy = sqlite3.OperationalError("database is locked")
            busy.sqlite_errorcode = sqlite3.SQLITE_BUSY
            raise OperationalError("SELECT 1", {}, busy)
        return int(conn.execute(text("SELECT 1")).scalar_one())

    assert await db.reading(read) == 1
    assert drivers == ["pysqlite", "aiosqlite"]

    def broken(conn: Any) -> int:
        raise OperationalError("SELECT 1", {}, sqlite3.OperationalError("disk I/O error"))

    with pytest.raises(StoreUnavailable):  # any other driver failure is not read again
        await db.reading(broken)
    await db.close()


async def test_a_small_write_is_a_plain_call_and_a_big_one_keeps_the_asyncio_way(
    db: Database,
) -> None:
    from dragoman.store.sqlite_inline import MANY_ROWS_INLINE

    await db.writing(lambda conn: conn.execute(text("CREATE TABLE t (n INTEGER)")))
    drivers: list[str] = []

    def insert(count: int) -> Any:
        def work(conn: Any) -> None:
            drivers.append(conn.dialect.driver)
            conn.execute(text("INSERT INTO t VALUES (:n)"), [{"n": n} for n in range(count)])

        return work

    await db.writing(insert(3), rows=3)
    big = MANY_ROWS_INLINE + 1
    await db.writing(insert(big), rows=big)  # its executemany runs in a thread
    assert drivers == ["pysqlite", "aiosqlite"]
    count = "SELECT count(*) FROM t"
    assert await db.reading(lambda conn: conn.execute(text(count)).scalar_one()) == 3 + big
    await db.close()


async def test_a_small_write_that_finds_another_process_lock_waits_off_the_loop(
    db: Database, tmp_path: Path
) -> None:
    await db.writing(lambda conn: conn.execute(text("CREATE TABLE t (x INTEGER)")))
    other = sqlite3.connect(tmp_path / "store.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's writer, in effect
    tries: list[str] = []

    def write(conn: Any) -> None:
        tries.append(conn.dialect.driver)
        conn.execute(text("INSERT INTO t VALUES (1)"))

    writing = asyncio.create_task(db.writing(write))
    ticks = 0
    for _ in range(20):  # the loop goes on while the write waits for the lock
        await asyncio.sleep(0.01)
        ticks += 1
    assert ticks == 20 and not writing.done()
    other.execute("ROLLBACK")
    other.close()
    await asyncio.wait_for(writing, 10)
    assert tries == ["pysqlite", "aiosqlite"]  # the plain try rolled back, then waited
    rows = await db.reading(lambda conn: conn.execute(text("SELECT x FROM t")).scalars().all())
    assert rows == [1]
    await db.close()
