"""The ``RelayLog`` contract (requests relayed through the watchdog), run against SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dragoman.models import RelayRequest, RelayStatus
from dragoman.store import JobStore, RelayLog

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_a_relayed_request_opens_once_beats_and_closes_once(
    store: JobStore, relay_log: RelayLog
) -> None:
    request = RelayRequest("r1", "reply.a", "svc.b", {"n": 1}, created_at=T0, heartbeat_at=T0)
    assert await relay_log.open_request(request)
    assert not await relay_log.open_request(request)  # a redelivery
    got = await relay_log.get_request("r1")
    assert got is not None
    assert (got.reply_to, got.target, got.payload, got.status) == (
        "reply.a",
        "svc.b",
        {"n": 1},
        RelayStatus.OPEN,
    )
    assert await relay_log.request_heartbeat("r1", T0 + timedelta(seconds=20))
    assert await relay_log.stale_requests(T0 + timedelta(seconds=10)) == []
    assert [r.id for r in await relay_log.stale_requests(T0 + timedelta(seconds=30))] == ["r1"]
    assert await relay_log.close_request("r1", RelayStatus.ANSWERED, T0 + timedelta(seconds=40))
    assert not await relay_log.close_request("r1", RelayStatus.FAILED, T0 + timedelta(seconds=41))
    assert not await relay_log.request_heartbeat("r1", T0 + timedelta(seconds=42))
    closed = await relay_log.get_request("r1")
    assert closed is not None and closed.status is RelayStatus.ANSWERED
    assert await relay_log.stale_requests(T0 + timedelta(days=1)) == []
    await store.purge(T0 + timedelta(days=1))
    assert await relay_log.get_request("r1") is None
