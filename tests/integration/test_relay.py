"""The watchdog as a generic relay (service A → watchdog → service B), on both stacks:
the in-process bus with SQLite and RabbitMQ with PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dragoman.bus import DEAD_LETTER_QUEUE, Bus
from dragoman.bus.memory import MemoryBus
from dragoman.bus.rabbitmq import RabbitBus
from dragoman.clock import SystemClock
from dragoman.messages import WATCHDOG_QUEUE
from dragoman.models import RelayStatus
from dragoman.queue import BatchRequestsQueue
from dragoman.relay import RelayClient, RelayFailure, serve_requests
from dragoman.runtime import Runtime
from dragoman.settings import Settings
from dragoman.store import JobStore
from dragoman.store.sql import SqlJobStore
from dragoman.watchdog import Watchdog
from tests.contract.conftest import drop_postgres_database, fresh_postgres_database
from tests.integration.cluster import BROKER_URL

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

B = "svc.b"
REPLIES = "reply.a"
SETTINGS = Settings(heartbeat_timeout_s=1.0, sweep_interval_s=0.2, heartbeat_interval_s=0.2)


@pytest.fixture(params=["memory+sqlite", "rabbitmq+postgresql"])
async def stack(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Bus, JobStore]]:
    if request.param == "memory+sqlite":
        bus: Bus = MemoryBus()
        store = SqlJobStore(f"sqlite+aiosqlite:///{tmp_path / 'relay.db'}")
        await bus.open()
        await store.open()
        yield bus, store
        await store.close()
        await bus.close()
        return
    rabbit = RabbitBus(BROKER_URL, prefix=f"test-relay-{uuid.uuid4().hex[:8]}")
    url, name = await fresh_postgres_database()
    pg = SqlJobStore(url)
    await rabbit.open()
    await pg.open()
    yield rabbit, pg
    await rabbit.delete_queues(WATCHDOG_QUEUE, B, REPLIES, DEAD_LETTER_QUEUE)
    await rabbit.close()
    await pg.close()
    await drop_postgres_database(name)


class Relaying:
    """A watchdog that can be stopped and replaced, over one bus and store."""

    def __init__(self, bus: Bus, store: JobStore) -> None:
        self.bus, self.store = bus, store
        self.watchdog: Watchdog | None = None

    async def start(self) -> None:
        runtime = Runtime(SETTINGS, self.store, self.bus, SystemClock())
        self.watchdog = Watchdog(runtime, queue=BatchRequestsQueue())
        await self.watchdog.start()

    async def stop(self) -> None:
        assert self.watchdog is not None
        await self.watchdog.stop()


@contextlib.asynccontextmanager
async def service_b(bus: Bus, delay_s: float, started: asyncio.Event) -> AsyncIterator[None]:
    async def handle(payload: dict[str, Any]) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(delay_s)
        return {"echo": payload["n"] * 2}

    task = asyncio.create_task(
        serve_requests(bus, B, handle, heartbeat_interval_s=SETTINGS.heartbeat_interval_s)
    )
    try:
        yield
    finally:
        task.cancel()  # B dies: no more heartbeats, no answer
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def service_a(bus: Bus) -> AsyncIterator[RelayClient]:
    client = RelayClient(bus, REPLIES)
    await client.start()
    try:
        yield client
    finally:
        await client.stop()


async def test_an_answer_outlasting_the_timeout_is_forwarded_while_b_heartbeats(
    stack: tuple[Bus, JobStore],
) -> None:
    bus, store = stack
    relay = Relaying(bus, store)
    await relay.start()
    async with service_a(bus) as a, service_b(bus, 2.5, asyncio.Event()):
        request_id = await a.send(B, {"n": 21})
        assert await asyncio.wait_for(a.result(request_id), 10) == {"echo": 42}
    # The answer is forwarded first and the record closed right after.
    for _ in range(100):
        recorded = await store.get_request(request_id)
        assert recorded is not None
        if recorded.status is RelayStatus.ANSWERED:
            break
        await asyncio.sleep(0.05)
    await relay.stop()
    assert recorded.status is RelayStatus.ANSWERED


async def test_a_silent_b_gets_a_its_failure(stack: tuple[Bus, JobStore]) -> None:
    bus, store = stack
    relay = Relaying(bus, store)
    await relay.start()
    started = asyncio.Event()
    async with service_a(bus) as a:
        async with service_b(bus, 60, started):
            request_id = await a.send(B, {"n": 1})
            await asyncio.wait_for(started.wait(), 10)
        with pytest.raises(RelayFailure) as failure:
            await asyncio.wait_for(a.result(request_id), 10)
    await relay.stop()
    assert failure.value.code == "heartbeat_timeout"


async def test_a_restarted_watchdog_keeps_tracking_open_requests(
    stack: tuple[Bus, JobStore],
) -> None:
    bus, store = stack
    relay = Relaying(bus, store)
    await relay.start()
    started = asyncio.Event()
    async with service_a(bus) as a:
        async with service_b(bus, 1.5, started):
            answered = await a.send(B, {"n": 5})
            await asyncio.wait_for(started.wait(), 10)
            await relay.stop()  # down while B works and heartbeats
            await asyncio.sleep(0.5)
            await relay.start()  # a new watchdog, the same store
            assert await asyncio.wait_for(a.result(answered), 10) == {"echo": 10}
            started.clear()
            silent = await a.send(B, {"n": 6})
            await asyncio.wait_for(started.wait(), 10)
            await relay.stop()
        # B died while no watchdog ran; the next one finds the request in the store.
        await relay.start()
        with pytest.raises(RelayFailure):
            await asyncio.wait_for(a.result(silent), 10)
    await relay.stop()
