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
        self._bus.put(DEAD_LETTER_QUEUE, self.body)
        self.settled.set()

    def requeue(self) -> None:
        """Puts the message back, as a broker does when its consumer goes away unacked."""
        if not self.settled.is_set():
            self.settled.set()
            self._bus.put(self._queue, self.body)


class MemoryBus:
    def __init__(self) -> None:
        self._queues: defaultdict[str, asyncio.Queue[Message]] = defaultdict(asyncio.Queue)
        self._private: set[str] = set()
        self._published = asyncio.Event()  # wakes consumers of more than one queue

    def queue(self, name: str) -> asyncio.Queue[Message]:
        return self._queues[name]

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def ping(self) -> None:
        return None

    def put(self, queue: str, body: Message) -> None:
        self._queues[queue].put_nowait(body)
        self._published.set()

    async def publish(self, queue: str, body: Message) -> None:
        self.put(queue, body)

    async def publish_private(self, queue: str, body: Message) -> bool:
        if queue not in self._private:
            return False
        self.put(queue, body)
        return True

    async def consume(
        self, queue: str, *, private: str | None = None
    ) -> AsyncIterator[MemoryDelivery]:
        if private is not None:
            self._private.add(private)
        try:
            while True:
                name, body = await self._next(queue, private)
                delivery = MemoryDelivery(self, name, body)
                try:
                    yield delivery
                    await delivery.settled.wait()
                finally:
                    if name == queue:
                        delivery.requeue()
        finally:
            if private is not None:
                self._private.discard(private)
                self._queues.pop(private, None)

    async def _next(self, queue: str, private: str | None) -> tuple[str, Message]:
        if private is None:
            return queue, await self._queues[queue].get()
        while True:
            for name in (private, queue):  # nothing is awaited between the checks
                if not self._queues[name].empty():
                    return name, self._queues[name].get_nowait()
            self._published.clear()
            await self._published.wait()

    def depth(self, queue: str) -> int:
        return self._queues[queue].qsize()
