"""The RabbitMQ bus (aio-pika): durable queues, persistent messages, publisher confirms,
prefetch 1, a dead-letter exchange, and a robust connection that restores its topology."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Iterator

import aio_pika
from aio_pika.abc import (
    AbstractIncomingMessage,
    AbstractRobustChannel,
    AbstractRobustConnection,
)
from aio_pika.connection import make_url

from dragoman.bus import DEAD_LETTER_QUEUE, Message
from dragoman.errors import BusUnavailable

log = logging.getLogger(__name__)


# What aiormq and aio-pika log of a first connection that fails (an error, then "closed,
# reconnecting" though a first connection is not retried): ``open``'s caller says it once.
_CONNECTING_LOGGERS = ("aiormq.connection", "aio_pika.robust_connection")


@contextlib.contextmanager
def _quiet_connecting() -> Iterator[None]:
    silence = logging.Filter("-")  # passes no record: no logger has that name
    for name in _CONNECTING_LOGGERS:
        logging.getLogger(name).addFilter(silence)
    try:
        yield
    finally:
        for name in _CONNECTING_LOGGERS:
            logging.getLogger(name).removeFilter(silence)


async def _close_quietly(connection: AbstractRobustConnection) -> None:
    with contextlib.suppress(Exception):
        await connection.close()


class RabbitDelivery:
    def __init__(self, body: Message, message: AbstractIncomingMessage) -> None:
        self.body = body
        self._message = message

    async def ack(self) -> None:
        # An ack on a channel that closed meanwhile (broker restart, consumer_timeout) is
        # lost and the message comes back; workers drop deliveries of attempts already
        # claimed, so that is harmless.
        with contextlib.suppress(aio_pika.exceptions.AMQPError, RuntimeError):
            await self._message.ack()

    async def reject(self) -> None:
        with contextlib.suppress(aio_pika.exceptions.AMQPError, RuntimeError):
            await self._message.reject(requeue=False)


class RabbitBus:
    def __init__(self, url: str, *, prefix: str = "dragoman") -> None:
        self._url = url
        self._prefix = prefix
        self._connection: AbstractRobustConnection | None = None
        self._publisher: AbstractRobustChannel | None = None
        self._declared: set[str] = set()

    def _name(self, queue: str) -> str:
        return f"{self._prefix}.{queue}"

    async def open(self) -> None:
        """Connects and declares the dead-letter queue. ``BusUnavailable`` if the broker
        cannot be reached; then, as on any failure, nothing stays open and the next
        ``open`` starts afresh (start-up tries again until the broker answers)."""
        connection = aio_pika.RobustConnection(make_url(self._url))
        try:
            with _quiet_connecting():
                await connection.connect()
            self._publisher = await self._declare_dead_letters(connection)
        except (aio_pika.exceptions.AMQPConnectionError, OSError) as exc:
            await _close_quietly(connection)
            raise BusUnavailable(f"message broker unavailable: {exc}") from None
        except BaseException:
            await _close_quietly(connection)
            raise
        self._connection = connection

    async def _declare_dead_letters(
        self, connection: AbstractRobustConnection
    ) -> AbstractRobustChannel:
        """The publishing channel, once the dead-letter exchange and queue exist."""
        # A mandatory message that no queue takes comes back: with on_return_raises the
        # publish fails, which is how ``publish_private`` learns its worker is gone.
        publisher = await connection.channel(publisher_confirms=True, on_return_raises=True)
        dead = await publisher.declare_exchange(
            self._name(DEAD_LETTER_QUEUE), aio_pika.ExchangeType.FANOUT, durable=True
        )
        dead_queue = await publisher.declare_queue(self._name(DEAD_LETTER_QUEUE), durable=True)
        await dead_queue.bind(dead)
        self._declared.add(DEAD_LETTER_QUEUE)
        return publisher

    async def _declare(
        self, channel: AbstractRobustChannel, queue: str
    ) -> aio_pika.abc.AbstractQueue:
        arguments = {"x-dead-letter-exchange": self._name(DEAD_LETTER_QUEUE)}
        if queue == DEAD_LETTER_QUEUE:
            arguments = {}
        declared = await channel.declare_queue(self._name(queue), durable=True, arguments=arguments)
        self._declared.add(queue)
        return declared

    async def close(self) -> None:
        if self._connection is not None:
            await self._connection.close()
            self._connection = None

    async def ping(self) -> None:
        if self._connection is None or self._connection.is_closed:
            raise ConnectionError("not connected to RabbitMQ")

    async def publish(self, queue: str, body: Message) -> None:
        channel = self._publisher
        if channel is None:
            raise BusUnavailable("the bus is not open")
        if queue not in self._declared:
            try:
                await self._declare(channel, queue)
            except (aio_pika.exceptions.AMQPError, ConnectionError, RuntimeError) as exc:
                raise BusUnavailable(f"message broker unavailable: {exc!r}") from None
        message = aio_pika.Message(
            json.dumps(body).encode(),
            delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
            content_type="application/json",
        )
        # With publisher confirms this returns once the broker has taken the message.
        try:
            await channel.default_exchange.publish(message, routing_key=self._name(queue))
        except (aio_pika.exceptions.AMQPError, ConnectionError, RuntimeError) as exc:
            raise BusUnavailable(f"message broker unavailable: {exc!r}") from None

    async def publish_private(self, queue: str, body: Message) -> bool:
        channel = self._publisher
        if channel is None:
            raise BusUnavailable("the bus is not open")
        message = aio_pika.Message(json.dumps(body).encode(), content_type="application/json")
        try:
            await channel.default_exchange.publish(
                message, routing_key=self._name(queue), mandatory=True
            )
        except aio_pika.exceptions.DeliveryError:
            return False  # returned: no such queue any more
        except (aio_pika.exceptions.AMQPError, ConnectionError, RuntimeError) as exc:
            raise BusUnavailable(f"message broker unavailable: {exc!r}") from None
        return True

    async def consume(
        self, queue: str, *, private: str | None = None
    ) -> AsyncIterator[RabbitDelivery]:
        if self._connection is None:
            raise ConnectionError("the bus is not open")
        channel = await self._connection.channel()
        inbox: asyncio.Queue[AbstractIncomingMessage] = asyncio.Queue()
        try:
            # global: one unacked message for the whole channel, whichever queue it is
            # from, so a busy worker holds nothing another worker could take.
            await channel.set_qos(prefetch_count=1, global_=True)
            sources = [await self._declare(channel, queue)]
            if private is not None:
                # Exclusive and auto-deleted: the queue goes with this consumer.
                sources.append(
                    await channel.declare_queue(
                        self._name(private), durable=False, exclusive=True, auto_delete=True
                    )
                )
            for source in sources:
                await source.consume(inbox.put)
            while True:
                message = await inbox.get()
                try:
                    body = json.loads(message.body)
                except ValueError:
                    log.error("undecodable message on %s dead-lettered", queue)
                    await message.reject(requeue=False)
                    continue
                yield RabbitDelivery(body, message)
        finally:
            # Closing the channel hands every unacked message back to the broker.
            with contextlib.suppress(Exception):
                await channel.close()

    async def delete_queues(self, *queues: str) -> None:
        """Removes queues (tests clean up after themselves with this)."""
        if self._publisher is None:
            return
        for queue in queues:
            with contextlib.suppress(Exception):
                await self._publisher.queue_delete(self._name(queue))
            if queue == DEAD_LETTER_QUEUE:
                with contextlib.suppress(Exception):
                    await self._publisher.exchange_delete(self._name(queue))
