"""The database under the store: its engine, transactions, schema upgrade, and what a lost
server becomes (``StoreUnavailable``).

On SQLite a statement, once started, runs to its end. Most run at once in the event loop's
thread (``sqlite_inline``); those that run in a thread (deletions, big inserts, a wait for
another process's lock) cannot be stopped there by a cancelled caller. A caller cancelled
meanwhile waits for that end, then its transaction rolls back and the cancellation goes on.
Cutting the wait short instead made SQLAlchemy close the connection under a statement still
open (an ``UPDATE ... RETURNING`` with rows unread); SQLite then keeps that connection, and
its write lock, until the garbage collector frees the statement, and every writer waits.

On SQLite the hot reads and small writes (``reading``, ``writing``) are plain calls on a
plain engine's connection instead (ADR 0028): they run to their end by being plain calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sqlite3
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, select
from sqlalchemy import text as sql_text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.util import greenlet_spawn

from dragoman.errors import StoreUnavailable
from dragoman.store import sqlite_inline

_MIGRATIONS = Path(__file__).parent / "migrations"
T = TypeVar("T")

# SQLSTATE classes of a server going away or not there yet: 08 connection exception,
# 57P01..57P03 admin shutdown, crash shutdown, cannot connect now.
_UNAVAILABLE_STATES = ("08", "57P")
CLOSE_GRACE_S = 5.0
_BUSY = object()  # what ``_plainly`` answers when the asyncio way must do the work


def _unavailable(exc: DBAPIError) -> Exception:
    """Connection trouble becomes ``StoreUnavailable``; anything else is a bug and stays."""
    state = str(getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None) or "")
    if (
        exc.connection_invalidated
        or isinstance(exc, OperationalError | InterfaceError)
        or state.startswith(_UNAVAILABLE_STATES)
    ):
        return StoreUnavailable(f"database unavailable: {type(exc.orig).__name__}")
    return exc


def _upgrade(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        # Processes starting together (api, watchdog, workers) migrate one at a time.
        connection.execute(sql_text("SELECT pg_advisory_xact_lock(4242001)"))
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def _tune_sqlite(dbapi_connection: Any, _record: Any) -> None:
    # WAL lets readers (result polling) run beside the writer; NORMAL sync is still
    # crash-safe in WAL mode and keeps commits cheap.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    # No wait for another process's lock on the event loop: a statement that meets one
    # waits for it in a thread (sqlite_inline).
    cursor.execute("PRAGMA busy_timeout=0")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


async def _to_its_end(work: Coroutine[Any, Any, T]) -> T:
    """Awaits ``work`` to its end even if the caller is cancelled meanwhile; the caller's
    cancellation is raised then.

    Its first step runs here, at once: most SQLite statements end in it (``sqlite_inline``),
    and those need no task of their own. One that waits (in a thread, for a lock) goes on
    as a task, which a cancellation of the caller does not reach."""
    try:
        waiting_on = work.send(None)
    except StopIteration as ended:
        return ended.value  # type: ignore[no-any-return]
    task = asyncio.ensure_future(_Rest(work, waiting_on))
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait([task])
        except asyncio.CancelledError as exc:
            cancelled = exc
    if cancelled is not None:
        task.exception()  # retrieved: what the caller gets is its cancellation
        raise cancelled
    return cast(T, task.result())


class _Rest:
    """What is left of a coroutine suspended after its first step, as an awaitable: what
    it waits on is handed to the task that awaits this, and what the task sends or throws
    back goes on to the coroutine."""

    def __init__(self, work: Coroutine[Any, Any, Any], waiting_on: Any) -> None:
        self._work = work
        self._waiting_on = waiting_on

    def __await__(self) -> Generator[Any, Any, Any]:
        work, waiting_on = self._work, self._waiting_on
        while True:
            try:
                sent = yield waiting_on
            except BaseException as exc:
                step = functools.partial(work.throw, exc)
            else:
                step = functools.partial(work.send, sent)
            try:
                waiting_on = step()
            except StopIteration as ended:
                return ended.value


class _WholeStatements(AsyncConnection):
    """A SQLite connection whose statements are never cut short (see the module's doc)."""

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        return await _to_its_end(super().execute(*args, **kwargs))

    async def run_sync(self, *args: Any, **kwargs: Any) -> Any:
        return await _to_its_end(super().run_sync(*args, **kwargs))


class Database:
    """One SQLAlchemy async engine (SQLite or PostgreSQL), opened with its schema up to date."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._engine: AsyncEngine | None = None
        # SQLite's reads and small writes, as plain calls on the loop's thread (``_plainly``).
        self._plain: Engine | None = None
        # The plain engine's connection that reads keep between them (``_read_plainly``).
        self._reader: Connection | None = None
        self._sqlite = url.startswith("sqlite")
        # SQLite allows one writer at a time; serialising writes here avoids lock waits.
        self._write_lock = asyncio.Lock() if self._sqlite else None
        self._in_use = 0  # connections checked out by tx() and read()
        self._idle = asyncio.Event()
        self._idle.set()

    async def open(self) -> None:
        """Connects and brings the schema up to date; if that fails (or is cancelled),
        nothing stays open, and ``open`` may be called again (start-up retries it)."""
        engine = self._engine = self._create_engine()
        try:
            async with self.tx() as conn:
                await conn.run_sync(_upgrade)
        except BaseException:
            self._engine = None
            await engine.dispose()
            raise
        self._plain = self._create_plain()

    def _create_plain(self) -> Engine | None:
        """A plain (not asyncio) engine on the same SQLite file (``_plainly``)."""
        if not self._sqlite:
            return None
        path = make_url(self._url).database or ":memory:"
        if path == ":memory:":
            return None  # a second engine would open another, empty database
        plain = create_engine(
            f"sqlite:///{path}", connect_args={"check_same_thread": False, "timeout": 0}
        )
        event.listen(plain, "connect", _tune_sqlite)
        return plain

    def _create_engine(self) -> AsyncEngine:
        if self._sqlite:
            path = make_url(self._url).database or ":memory:"
            if path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            # Each call at once in the loop's thread, not a thread hop each (sqlite_inline).
            engine = create_async_engine(
                self._url, async_creator=functools.partial(sqlite_inline.connect, path)
            )
            event.listen(engine.sync_engine, "connect", _tune_sqlite)
        else:
            engine = create_async_engine(self._url, pool_pre_ping=True, pool_size=10)
        return engine

    async def close(self) -> None:
        """New work fails at once; work in flight gets ``CLOSE_GRACE_S`` to finish, since
        disposing of the engine under it would orphan its connections."""
        engine, self._engine = self._engine, None
        plain, self._plain = self._plain, None
        if engine is None:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_GRACE_S):
                await self._idle.wait()
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
        if plain is not None:
            plain.dispose()
        await engine.dispose()

    def _connection(self) -> AsyncConnection:
        """A connection (not yet connected) of the open engine."""
        if self._engine is None:
            raise StoreUnavailable("the store is not open")
        return _WholeStatements(self._engine) if self._sqlite else self._engine.connect()

    @contextlib.contextmanager
    def _counted(self) -> Iterator[None]:
        self._in_use += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._in_use -= 1
            if self._in_use == 0:
                self._idle.set()

    @asynccontextmanager
    async def tx(self) -> AsyncIterator[AsyncConnection]:
        """A connection in a transaction, committed at the end unless it raises."""
        with self._counted(), _translated():
            if self._write_lock is not None:
                # _connection() runs once the lock is held: the store may close while a
                # writer waits for it.
                async with self._write_lock, self._connection() as conn, conn.begin():
                    yield conn
            else:
                async with self._connection() as conn, conn.begin():
                    yield conn

    async def ping(self) -> None:
        """Raises ``StoreUnavailable`` when the database cannot be reached."""
        async with self.read() as conn:
            await conn.execute(select(1))

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A connection for reads only (no write lock taken)."""
        with self._counted(), _translated():
            async with self._connection() as conn:
                yield conn

    async def reading(self, work: Callable[[Connection], T]) -> T:
        """``work``'s answer, run on a connection in one hand-off: for the hot reads (a job
        by its id, a cache lookup). ``read()`` pays the asyncio adapter's hand-off on every
        call (connect, execute, fetch, close), several times what a read by primary key
        costs SQLite itself; here the whole ``work`` runs in one greenlet, as ``run_sync``
        does, and the connection is checked out inside it.

        On SQLite, ``work`` is a plain call on a plain engine's connection (``_plainly``)."""
        found = self._plainly(work, transaction=False)
        if found is not _BUSY:
            return cast(T, found)
        return await self._in_one_go(work, transaction=False)

    async def writing(self, work: Callable[[Connection], T], *, rows: int = 0) -> T:
        """``work``'s answer, run in a transaction in one hand-off (as ``reading``), committed
        at the end unless it raises; on SQLite once the write lock is held, as ``tx``.

        On SQLite, a transaction that writes at most ``MANY_ROWS_INLINE`` rows (``rows``,
        the caller's count) is a plain call as well; one that writes more keeps the asyncio
        way, whose long statements run in a thread while the loop goes on."""
        if self._write_lock is None:
            return await self._in_one_go(work, transaction=True)
        async with self._write_lock:  # the store may close while a writer waits for it
            if rows <= sqlite_inline.MANY_ROWS_INLINE:
                done = self._plainly(work, transaction=True)
                if done is not _BUSY:
                    return cast(T, done)
            return await self._in_one_go(work, transaction=True)

    def _plainly(self, work: Callable[[Connection], T], *, transaction: bool) -> T | object:
        """``work`` run at once on the plain SQLite engine: SQLite answers at once in this
        thread anyway, and the asyncio adapter's two greenlet switches per driver call cost
        more than a read by primary key. ``_BUSY`` where there is no plain engine, or where
        ``work`` met another process's lock (rolled back then): the asyncio way waits for
        that lock in a thread."""
        plain = self._plain
        if plain is None or self._engine is None:
            return _BUSY
        with self._counted(), _translated():
            try:
                if not transaction:
                    return self._read_plainly(plain, work)
                with plain.begin() as conn:
                    return work(conn)
            except OperationalError as exc:
                if getattr(exc.orig, "sqlite_errorcode", None) != sqlite3.SQLITE_BUSY:
                    raise
        return _BUSY

    def _read_plainly(self, plain: Engine, work: Callable[[Connection], T]) -> T:
        """``work`` on the plain connection that reads keep, its transaction ended after it
        (the snapshot it read is let go). Checking a connection out of the pool and back in
        for each read cost as much as the read by primary key itself. A read that fails
        closes the connection: the next one starts from a new one."""
        reader = self._reader
        if reader is None:
            reader = self._reader = plain.connect()
        try:
            found = work(reader)
            reader.rollback()
        except BaseException:
            self._reader = None
            with contextlib.suppress(Exception):  # what the read raised is the news
                reader.close()
            raise
        return found

    async def _in_one_go(self, work: Callable[[Connection], T], *, transaction: bool) -> T:
        if self._engine is None:
            raise StoreUnavailable("the store is not open")
        engine = self._engine.sync_engine

        def run() -> T:
            with engine.begin() if transaction else engine.connect() as conn:
                return work(conn)

        with self._counted(), _translated():
            call = greenlet_spawn(run)
            return await (_to_its_end(call) if self._sqlite else call)


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """Driver and network errors become ``StoreUnavailable`` where it says so."""
    try:
        yield
    except DBAPIError as exc:
        raise _unavailable(exc) from None
    except OSError as exc:
        raise StoreUnavailable(f"database unavailable: {exc}") from None
