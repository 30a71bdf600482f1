"""Durable queues of JSON messages: the transport only (``dragoman.messages`` says what
travels on which queue)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

Message = dict[str, Any]

DEAD_LETTER_QUEUE = "dead"  # where rejected messages go


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

    async def publish_private(self, queue: str, body: Message) -> bool:
        """Enqueues ``body`` on a private queue if its consumer is there; False if not
        (the queue went with its consumer), and nothing is enqueued."""
        ...

    def consume(self, queue: str, *, private: str | None = None) -> AsyncIterator[Delivery]:
        """Messages one at a time (prefetch 1); the next comes after this one is settled.
        With ``private``, also from that private queue, still one message at a time over
        both. A private queue lives only while its consumer does: messages still on it are
        lost with it (their senders must be able to send them again)."""
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
