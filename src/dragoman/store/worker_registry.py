"""The worker registry: ``WorkerRegistry`` on the store's database."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, insert, select, update

from dragoman.models import Pool, WorkerInfo
from dragoman.store.database import Database
from dragoman.store.rows import to_worker, worker_row
from dragoman.store.tables import workers


class SqlWorkerRegistry:
    _db: Database

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
        async with self._db.read() as conn:
            return [to_worker(row) for row in await conn.execute(query)]

    async def forget_worker(self, worker_id: str) -> None:
        async with self._db.tx() as conn:
            await conn.execute(delete(workers).where(workers.c.id == worker_id))

    async def expire_workers(self, seen_before: datetime) -> int:
        async with self._db.tx() as conn:
            result = await conn.execute(delete(workers).where(workers.c.last_seen < seen_before))
        return int(result.rowcount)
