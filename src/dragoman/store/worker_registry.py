"""The worker registry and the pools' published figures: ``WorkerRegistry`` on the store's
database."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import delete, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dragoman.models import Pool, WorkerInfo
from dragoman.store.database import Database
from dragoman.store.rows import aware, to_worker, worker_row
from dragoman.store.tables import pool_figures, workers


class SqlWorkerRegistry:
    def __init__(self, database: Database) -> None:
        self._db = database

    async def register_worker(self, worker: WorkerInfo, now: datetime) -> None:
        values = worker_row(worker, now)
        async with self._db.tx() as conn:
            updated = await conn.execute(
                update(workers).where(workers.c.id == worker.id).values(**values)
            )
            if updated.rowcount == 0:
                await conn.execute(insert(workers).values(id=worker.id, **values))

    async def live_workers(self, pool: Pool, seen_after: datetime) -> list[WorkerInfo]:
        query = (
            select(workers)
            .where(workers.c.pool == pool.value, workers.c.last_seen >= seen_after)
            .order_by(workers.c.id)
        )
        return await self._db.reading(lambda conn: [to_worker(row) for row in conn.execute(query)])

    async def forget_worker(self, worker_id: str) -> None:
        async with self._db.tx() as conn:
            await conn.execute(delete(workers).where(workers.c.id == worker_id))

    async def expire_workers(self, seen_before: datetime) -> int:
        async with self._db.tx() as conn:
            result = await conn.execute(delete(workers).where(workers.c.last_seen < seen_before))
        return int(result.rowcount)

    async def publish_figures(
        self, pool: Pool, figures: Mapping[str, float], now: datetime
    ) -> None:
        if not figures:
            return
        async with self._db.tx() as conn:
            insert_ = pg_insert if conn.dialect.name == "postgresql" else sqlite_insert
            for name, value in figures.items():
                statement = insert_(pool_figures).values(
                    pool=pool.value, name=name, value=float(value), updated_at=now
                )
                await conn.execute(
                    statement.on_conflict_do_update(
                        index_elements=[pool_figures.c.pool, pool_figures.c.name],
                        set_={"value": statement.excluded.value, "updated_at": now},
                    )
                )

    async def pool_figures(self, pool: Pool) -> dict[str, tuple[float, datetime]]:
        query = select(pool_figures).where(pool_figures.c.pool == pool.value)
        async with self._db.read() as conn:
            rows = (await conn.execute(query)).all()
        return {row.name: (row.value, aware(row.updated_at) or row.updated_at) for row in rows}
