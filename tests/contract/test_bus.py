"""The ``Bus`` contract, run against every implementation."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator

import pytest

from dragoman.bus import DEAD_LETTER_QUEUE, Bus
from dragoman.bus.memory import MemoryBus
from dragoman.bus.rabbitmq import RabbitBus

RABBITMQ_URL = os.environ.get("DRAGOMAN_TEST_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/")
QUEUES = ("q", "a", "b", DEAD_LETTER_QUEUE)


@pytest.fixture(params=["memory", "rabbitmq"])
async def bus(request: pytest.FixtureRequest) -> AsyncIterator[Bus]:
    if request.param == "memory":
        impl: Bus = MemoryBus()
        await impl.open()
        yield impl
        await impl.close()
        return
    rabbit = RabbitBus(RABBITMQ_URL, prefix=f"test-{uuid.uuid4().hex[:8]}")
    await rabbit.open()
    yield rabbit
    await rabbit.delete_queues(*QUEUES)
    await rabbit.close()


async def next_body(bus: Bus, queue: str, *, ack: bool = True) -> dict[str, object]:
    consumer = bus.consume(queue)
    delivery = await asyncio.wait_for(anext(consumer), 5)
    if ack:
        await delivery.ack()
    await consumer.aclose()  # type: ignore[attr-defined]
    return delivery.body


async def test_messages_arrive_in_order(bus: Bus) -> None:
    for i in range(3):
        await bus.publish("q", {"n": i})
    consumer = bus.consume("q")
    seen = []
    for _ in range(3):
        delivery = await asyncio.wait_for(anext(consumer), 5)
        seen.append(delivery.body["n"])
        await delivery.ack()
    await consumer.aclose()  # type: ignore[attr-defined]
    assert seen == [0, 1, 2]


async def test_queues_are_separate(bus: Bus) -> None:
    await bus.publish("a", {"to": "a"})
    await bus.publish("b", {"to": "b"})
    assert await next_body(bus, "b") == {"to": "b"}
    assert await next_body(bus, "a") == {"to": "a"}


async def test_an_unacked_message_is_redelivered_to_the_next_consumer(bus: Bus) -> None:
    await bus.publish("q", {"job": 1})
    assert await next_body(bus, "q", ack=False) == {"job": 1}
    assert await next_body(bus, "q") == {"job": 1}


async def test_one_message_at_a_time_until_settled(bus: Bus) -> None:
    await bus.publish("q", {"n": 1})
    await bus.publish("q", {"n": 2})
    consumer = bus.consume("q")
    first = await asyncio.wait_for(anext(consumer), 5)
    second = asyncio.ensure_future(anext(consumer))
    await asyncio.sleep(0.05)
    assert not second.done()
    await first.ack()
    assert (await asyncio.wait_for(second, 5)).body == {"n": 2}
    await (await second).ack()
    await consumer.aclose()  # type: ignore[attr-defined]


async def test_ping_answers(bus: Bus) -> None:
    await bus.ping()


async def test_a_rejected_message_is_dead_lettered(bus: Bus) -> None:
    await bus.publish("q", {"poison": True})
    consumer = bus.consume("q")
    delivery = await asyncio.wait_for(anext(consumer), 5)
    await delivery.reject()
    await consumer.aclose()  # type: ignore[attr-defined]
    assert await next_body(bus, DEAD_LETTER_QUEUE) == {"poison": True}


async def test_messages_survive_until_consumed(bus: Bus) -> None:
    await bus.publish("q", {"kept": 1})
    await asyncio.sleep(0.1)
    assert await next_body(bus, "q") == {"kept": 1}


async def test_a_private_queue_takes_messages_only_while_its_consumer_lives(bus: Bus) -> None:
    assert await bus.publish_private("p", {"n": 0}) is False
    consumer = bus.consume("q", private="p")
    first = asyncio.ensure_future(anext(consumer))
    for _ in range(50):  # the consumer declares its queue when it starts
        if await bus.publish_private("p", {"n": 1}):
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the private queue never took a message")
    await bus.publish("q", {"n": 2})
    delivery = await asyncio.wait_for(first, 5)
    assert delivery.body == {"n": 1}
    # One message at a time over both queues: the shared one waits for the settle.
    second = asyncio.ensure_future(anext(consumer))
    await asyncio.sleep(0.2)
    assert not second.done()
    await delivery.ack()
    assert (await asyncio.wait_for(second, 5)).body == {"n": 2}
    await (await second).ack()
    await consumer.aclose()  # type: ignore[attr-defined]
    await asyncio.sleep(0.2)
    assert await bus.publish_private("p", {"n": 3}) is False


async def test_a_message_held_by_a_consumer_of_two_queues_goes_back_when_it_stops(
    bus: Bus,
) -> None:
    await bus.publish("q", {"n": 1})
    consumer = bus.consume("q", private="p")
    delivery = await asyncio.wait_for(anext(consumer), 5)
    assert delivery.body == {"n": 1}
    await consumer.aclose()  # type: ignore[attr-defined]
    assert await next_body(bus, "q") == {"n": 1}
