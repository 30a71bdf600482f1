"""The RabbitMQ bus reconnects by itself and restores its topology."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from dragoman.bus.rabbitmq import RabbitBus
from tests.contract.test_bus import RABBITMQ_URL


# Closes every connection of the shared broker: runs alone, after the rest.
@pytest.mark.serial
@pytest.mark.timeout(120)
async def test_the_bus_survives_its_connection_being_closed_by_the_broker() -> None:
    bus = RabbitBus(RABBITMQ_URL, prefix=f"test-{uuid.uuid4().hex[:8]}")
    await bus.open()
    try:
        await bus.publish("q", {"n": 1})
        closer = await asyncio.create_subprocess_exec(
            "rabbitmqctl",
            "close_all_connections",
            "test: forced close",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            assert await asyncio.wait_for(closer.wait(), 60) == 0
        finally:
            if closer.returncode is None:
                closer.kill()
                await closer.wait()
        for _ in range(100):  # the robust connection comes back by itself
            try:
                await bus.publish("q", {"n": 2})
                break
            except Exception:
                await asyncio.sleep(0.2)
        consumer = bus.consume("q")
        seen = []
        for _ in range(2):
            delivery = await asyncio.wait_for(anext(consumer), 20)
            seen.append(delivery.body["n"])
            await delivery.ack()
        await consumer.aclose()  # type: ignore[attr-defined]
        assert seen == [1, 2]
    finally:
        await bus.delete_queues("q", "dead")
        await bus.close()
