"""The in-process bus of the embedded mode: one asyncio queue per name."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator

from dragoman.bus import DEAD_LETTER_QUEUE, Message


class MemoryDelivery:
    def __init__(self, bus: MemoryBus, queue: str, body: Message) -> None:
        self.body = body
        self._bus = bus
        self._queue = queue
        self.settled = asyncio.Event()

    async def ack(self) -> None:
        self.settled.set()

    async def reject(self) -> None:
        self._bus.queue(DEAD_LETTER_QUEUE).put_nowait(self.body)
        self.settled.set()

    def requeue(self) -> None:
        """Puts the message back, as a broker does when its consumer goes away unacked."""
        if not self.settled.is_set():
            self.settled.set()
            self._bus.queue(self._queue).put_nowait(self.body)


class MemoryBus:
    def __init__(self) -> None:
        self._queues: defaultdict[str, asyncio.Queue[Message]] = defaultdict(asyncio.Queue)

    def queue(self, name: str) -> asyncio.Queue[Message]:
        return self._queues[name]

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def ping(self) -> None:
        return None

    async def publish(self, queue: str, body: Message) -> None:
        self._queues[queue].put_nowait(body)

    async def consume(self, queue: str) -> AsyncIterator[MemoryDelivery]:
        source = self._queues[queue]
        while True:
            delivery = MemoryDelivery(self, queue, await source.get())
            try:
                yield delivery
                await delivery.settled.wait()
            finally:
                delivery.requeue()

    def depth(self, queue: str) -> int:
        return self._queues[queue].qsize()
