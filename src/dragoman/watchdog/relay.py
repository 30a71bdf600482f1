"""The watchdog's side of ``dragoman.relay``: records, forwards, and gives up on silence."""

from __future__ import annotations

import logging
from datetime import timedelta

from dragoman.bus import Bus, Message
from dragoman.clock import Clock
from dragoman.models import RelayRequest, RelayStatus
from dragoman.store import JobStore

log = logging.getLogger(__name__)


class Relay:
    def __init__(self, *, store: JobStore, bus: Bus, clock: Clock, timeout_s: float) -> None:
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
