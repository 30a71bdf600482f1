"""Relayed requests: ``RelayLog`` on the store's database."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert, select, update

from dragoman.models import RelayRequest, RelayStatus
from dragoman.store.database import Database
from dragoman.store.rows import request_row, to_request
from dragoman.store.tables import relay_requests

_OPEN = relay_requests.c.status == RelayStatus.OPEN.value


class SqlRelayLog:
    def __init__(self, database: Database) -> None:
        self._db = database

    async def open_request(self, request: RelayRequest) -> bool:
        async with self._db.tx() as conn:
            exists = (
                await conn.execute(
                    select(relay_requests.c.id).where(relay_requests.c.id == request.id)
                )
            ).first()
            if exists:
                return False
            await conn.execute(insert(relay_requests).values(**request_row(request)))
        return True

    async def get_request(self, request_id: str) -> RelayRequest | None:
        query = select(relay_requests).where(relay_requests.c.id == request_id)
        async with self._db.read() as conn:
            row = (await conn.execute(query)).first()
        return to_request(row) if row else None

    async def request_heartbeat(self, request_id: str, now: datetime) -> bool:
        async with self._db.tx() as conn:
            result = await conn.execute(
                update(relay_requests)
                .where(relay_requests.c.id == request_id, _OPEN)
                .values(heartbeat_at=now)
            )
        return bool(result.rowcount == 1)

    async def close_request(self, request_id: str, status: RelayStatus, now: datetime) -> bool:
        async with self._db.tx() as conn:
            result = await conn.execute(
                update(relay_requests)
                .where(relay_requests.c.id == request_id, _OPEN)
                .values(status=status.value, finished_at=now)
            )
        return bool(result.rowcount == 1)

    async def stale_requests(self, heartbeat_before: datetime) -> list[RelayRequest]:
        query = select(relay_requests).where(
            _OPEN, relay_requests.c.heartbeat_at < heartbeat_before
        )
        async with self._db.read() as conn:
            return [to_request(row) for row in await conn.execute(query)]
