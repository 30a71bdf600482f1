"""Message queues between the manager, the watchdog and the workers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

Message = dict[str, Any]

WATCHDOG_QUEUE = "watchdog"
DEAD_LETTER_QUEUE = "dead"


def work_queue(pool: str) -> str:
    """The queue a pool's workers consume."""
    return f"work.{pool}"


class Delivery(Protocol):
    body: Message

    async def ack(self) -> None:
        """Done with it: the broker forgets the message."""
        ...

    async def reject(self) -> None:
        """It can never be processed: dead-letter it."""
        ...


class Bus(Protocol):
    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def ping(self) -> None:
        """Raises when the broker cannot be reached."""
        ...

    async def publish(self, queue: str, body: Message) -> None:
        """Durably enqueues ``body``; returns once the broker has it."""
        ...

    def consume(self, queue: str) -> AsyncIterator[Delivery]:
        """Messages one at a time (prefetch 1); the next comes after this one is settled."""
        ...


def open_bus(broker_url: str, *, prefix: str = "dragoman") -> Bus:
    """The bus for ``memory://`` (in-process) or ``amqp://`` (RabbitMQ) URLs; RabbitMQ
    queue names start with ``prefix``."""
    if broker_url.startswith("memory://"):
        from dragoman.bus.memory import MemoryBus

        return MemoryBus()
    if broker_url.startswith(("amqp://", "amqps://")):
        from dragoman.bus.rabbitmq import RabbitBus

        return RabbitBus(broker_url, prefix=prefix)
    raise ValueError(f"unsupported broker URL {broker_url!r}")
