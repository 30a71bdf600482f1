"""Requests from one service to another through the watchdog, as the seed's services talk.

This is the extension point for add-on services (a word service, a quality estimator):
jobs do not use it. Their messages are ``dragoman.messages``.

Service A sends a request for service B to the watchdog; the watchdog records it in the store
and forwards it to B's queue; B heartbeats while it works and answers through the watchdog,
which forwards the answer to A, or sends A a failure when B's heartbeats stop for
``heartbeat_timeout_s``. The record lives in the store, so a restarted watchdog goes on
tracking every open request.

Messages on the watchdog's queue (``type``):

- ``relay.request`` ``{id, reply_to, target, payload}`` from A;
- ``relay.heartbeat`` ``{id}`` and ``relay.answer`` ``{id, payload}`` or ``relay.error``
  ``{id, error: {code, message}}`` from B.

On A's reply queue: ``relay.answer`` ``{id, payload}`` or ``relay.failure`` ``{id, error}``.
Delivery is at least once: A takes the first reply of a request and ignores the rest.

``RelayClient`` is A's side, ``serve_requests`` B's, ``RelayTracker`` the watchdog's.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any

from dragoman.bus import Bus, Message
from dragoman.clock import Clock
from dragoman.messages import WATCHDOG_QUEUE
from dragoman.models import RelayRequest, RelayStatus
from dragoman.store import RelayLog
from dragoman.tasks import cancel_and_wait

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Coroutine[Any, Any, dict[str, Any]]]


class RelayFailure(Exception):
    """The target did not answer: its heartbeats stopped, or it reported an error."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class RelayClient:
    """Service A's side: sends requests and awaits their replies on its own queue."""

    def __init__(self, bus: Bus, reply_queue: str) -> None:
        self._bus = bus
        self.reply_queue = reply_queue
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._listener: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._listener = asyncio.create_task(self._listen(), name=f"relay-{self.reply_queue}")

    async def stop(self) -> None:
        if self._listener is not None:
            await cancel_and_wait(self._listener)

    async def send(self, target: str, payload: dict[str, Any]) -> str:
        """Sends a request; returns its id (``result`` awaits its reply)."""
        request_id = uuid.uuid4().hex
        self._waiting[request_id] = asyncio.get_running_loop().create_future()
        await self._bus.publish(
            WATCHDOG_QUEUE,
            {
                "type": "relay.request",
                "id": request_id,
                "reply_to": self.reply_queue,
                "target": target,
                "payload": payload,
            },
        )
        return request_id

    async def result(self, request_id: str) -> dict[str, Any]:
        """The answer's payload; raises ``RelayFailure`` when the watchdog gave up on it."""
        try:
            return await self._waiting[request_id]
        finally:
            self._waiting.pop(request_id, None)

    async def request(self, target: str, payload: dict[str, Any]) -> dict[str, Any]:
        return await self.result(await self.send(target, payload))

    async def _listen(self) -> None:
        async for delivery in self._bus.consume(self.reply_queue):
            self._settle(delivery.body)
            await delivery.ack()

    def _settle(self, reply: Message) -> None:
        future = self._waiting.get(str(reply.get("id")))
        if future is None or future.done():
            return  # a duplicate, or a reply to a request this process no longer awaits
        if reply.get("type") == "relay.answer":
            future.set_result(dict(reply.get("payload") or {}))
        else:
            error = reply.get("error") or {}
            future.set_exception(
                RelayFailure(str(error.get("code", "failed")), str(error.get("message", "")))
            )


async def serve_requests(
    bus: Bus, queue: str, handler: Handler, *, heartbeat_interval_s: float
) -> None:
    """Service B's side: answers the requests relayed to ``queue``, heartbeating meanwhile.

    Each request's message is acked only after its answer went out: a B that dies mid-request
    gets it redelivered to another B, or the watchdog fails it when the heartbeats stop.
    """
    async for delivery in bus.consume(queue):
        request_id = str(delivery.body.get("id"))
        work = asyncio.create_task(handler(dict(delivery.body.get("payload") or {})))
        while not work.done():
            await bus.publish(WATCHDOG_QUEUE, {"type": "relay.heartbeat", "id": request_id})
            await asyncio.wait({work}, timeout=heartbeat_interval_s)
        reply: Message
        try:
            reply = {"type": "relay.answer", "id": request_id, "payload": work.result()}
        except Exception as exc:
            log.warning("relayed request %s failed: %s", request_id, exc)
            error = {"code": type(exc).__name__, "message": str(exc)}
            reply = {"type": "relay.error", "id": request_id, "error": error}
        await bus.publish(WATCHDOG_QUEUE, reply)
        await delivery.ack()


class RelayTracker:
    """The watchdog's side: records each request, forwards it, gives up on silence."""

    def __init__(self, *, store: RelayLog, bus: Bus, clock: Clock, timeout_s: float) -> None:
        self._store = store
        self._bus = bus
        self._clock = clock
        self._timeout_s = timeout_s

    async def handle(self, message: Message) -> None:
        kind = message.get("type")
        request_id = str(message.get("id", ""))
        if not request_id:
            log.error("relay message without an id dropped: %r", message)
            return
        if kind == "relay.request":
            await self._open(request_id, message)
        elif kind == "relay.heartbeat":
            await self._store.request_heartbeat(request_id, self._clock.now())
        elif kind == "relay.answer":
            await self._reply(request_id, RelayStatus.ANSWERED, {"payload": message["payload"]})
        elif kind == "relay.error":
            await self._reply(request_id, RelayStatus.FAILED, {"error": message["error"]})

    async def _open(self, request_id: str, message: Message) -> None:
        now = self._clock.now()
        request = RelayRequest(
            id=request_id,
            reply_to=str(message["reply_to"]),
            target=str(message["target"]),
            payload=dict(message.get("payload") or {}),
            created_at=now,
            heartbeat_at=now,
        )
        if not await self._store.open_request(request):
            known = await self._store.get_request(request_id)
            if known is None or known.status is not RelayStatus.OPEN:
                return  # a redelivery of a request already settled
        # Recorded first, forwarded second: a crash in between redelivers the request,
        # which is forwarded again (the target may see it twice, never zero times).
        await self._bus.publish(
            request.target, {"type": "relay.request", "id": request_id, "payload": request.payload}
        )

    async def _reply(self, request_id: str, status: RelayStatus, body: Message) -> None:
        request = await self._store.get_request(request_id)
        if request is None or request.status is not RelayStatus.OPEN:
            return
        kind = "relay.answer" if status is RelayStatus.ANSWERED else "relay.failure"
        # Forwarded first, closed second: a crash in between forwards it again, and the
        # requester keeps the first reply.
        await self._bus.publish(request.reply_to, {"type": kind, "id": request_id, **body})
        await self._store.close_request(request_id, status, self._clock.now())

    async def sweep(self) -> None:
        """Fails every open request whose target went silent."""
        deadline = self._clock.now() - timedelta(seconds=self._timeout_s)
        for request in await self._store.stale_requests(deadline):
            error = {
                "code": "heartbeat_timeout",
                "message": f"{request.target} sent no heartbeat for {self._timeout_s:g}s",
            }
            log.warning("relayed request %s to %s given up", request.id, request.target)
            await self._reply(request.id, RelayStatus.FAILED, {"error": error})
