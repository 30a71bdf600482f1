"""SQLite for SQLAlchemy's asyncio engine without a thread hop per call.

SQLAlchemy's ``sqlite+aiosqlite`` dialect drives aiosqlite, which runs every call (cursor,
execute, fetch, close, commit, rollback) in the connection's own thread and wakes the event
loop for each answer: about a millisecond of CPU per statement on a small machine, eight
times what the statement costs in SQLite itself, and most of what a ``GET`` of a job cost.

This module gives that dialect connections of the same shape that run each call at once in
the caller's thread, the event loop's: a statement by primary key, a chunk's writes or a
page of jobs takes tens to hundreds of microseconds there, with no wake-up.

Nothing here waits for SQLite's locks on the loop: the connections' busy timeout is zero.
In this process that costs nothing (``Database`` lets one writer in at a time, and WAL
readers never wait for the writer); a statement that finds the database locked by another
process all the same is run again in a thread, waiting up to ``BUSY_TIMEOUT_MS`` for the
lock as a plain connection would, while the loop goes on.

The statements that may run long go to a thread instead, so that the loop keeps serving
while they run: deletions (retention purges, cache eviction) and inserts of many rows at
once (a big job's segments). The caller still waits for them to end (``Database``).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

# An executemany of more rows than this runs in a thread.
MANY_ROWS_INLINE = 2000
# How long a statement run again in a thread waits for another process's lock.
BUSY_TIMEOUT_MS = 30_000


def _offloaded(operation: str) -> bool:
    return operation.lstrip()[:6].upper() == "DELETE"


class InlineCursor:
    """What SQLAlchemy's adapter awaits of an aiosqlite cursor, over a sqlite3 cursor."""

    __slots__ = ("_cursor",)

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    async def __aenter__(self) -> InlineCursor:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self._cursor.close()

    @property
    def description(self) -> Any:
        return self._cursor.description

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    @property
    def arraysize(self) -> int:
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value

    async def execute(self, operation: str, parameters: Any = ()) -> InlineCursor:
        await self._run(self._cursor.execute, operation, parameters, _offloaded(operation))
        return self

    async def executemany(self, operation: str, seq_of_parameters: Iterable[Any]) -> InlineCursor:
        rows = seq_of_parameters if isinstance(seq_of_parameters, Sequence) else None
        many = rows is not None and len(rows) > MANY_ROWS_INLINE
        await self._run(
            self._cursor.executemany, operation, seq_of_parameters, many or _offloaded(operation)
        )
        return self

    async def _run(
        self, call: Callable[[str, Any], object], operation: str, parameters: Any, offload: bool
    ) -> None:
        if not offload:
            try:
                call(operation, parameters)
                return
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY:
                    raise
            # Locked by another process: the statement did nothing; wait for the lock aside.
        await asyncio.to_thread(self._patiently, call, operation, parameters)

    def _patiently(self, call: Callable[[str, Any], object], operation: str, params: Any) -> None:
        """``call`` with the busy timeout of a plain connection, in a thread."""
        connection = self._cursor.connection
        connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        try:
            call(operation, params)
        finally:
            connection.execute("PRAGMA busy_timeout=0")

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._cursor.fetchmany(self._cursor.arraysize if size is None else size)

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    async def close(self) -> None:
        self._cursor.close()

    async def setinputsizes(self, *_sizes: Any) -> None:
        return None


class _Immediate:
    """aiosqlite's queue of calls, as SQLAlchemy's isolation-level setter uses it: each
    call runs at once and settles its future."""

    __slots__ = ()

    @staticmethod
    def put_nowait(item: tuple[asyncio.Future[Any], Callable[[], Any]]) -> None:
        future, function = item
        try:
            future.set_result(function())
        except Exception as exc:  # the setter re-raises it to its caller
            future.set_exception(exc)


class InlineConnection:
    """What SQLAlchemy's adapter awaits of an aiosqlite connection, over a sqlite3 one."""

    __slots__ = ("_conn",)
    _tx = _Immediate()

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    @property
    def _connection(self) -> sqlite3.Connection:
        return self._conn

    @property
    def isolation_level(self) -> str | None:
        return self._conn.isolation_level

    def cursor(self) -> InlineCursor:
        return InlineCursor(self._conn.cursor())

    async def execute(self, operation: str, parameters: Any = ()) -> InlineCursor:
        return await self.cursor().execute(operation, parameters)

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        self._conn.create_function(*args, **kwargs)

    async def commit(self) -> None:
        self._conn.commit()

    async def rollback(self) -> None:
        self._conn.rollback()

    async def close(self) -> None:
        self._conn.close()

    def stop(self) -> None:
        """aiosqlite's forced close, which SQLAlchemy's terminate calls."""
        self._conn.close()


async def connect(database: str, **kwargs: Any) -> InlineConnection:
    """SQLAlchemy's ``async_creator``: called with the URL's connect arguments."""
    # Long statements and waits for a lock run in a thread (see above).
    kwargs.update(check_same_thread=False, timeout=0)
    return InlineConnection(sqlite3.connect(database, **kwargs))
