"""The ``Leases`` contract (named leases with a deadline), run against SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dragoman.store import Leases

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_a_lease_has_one_holder_until_it_expires(leases: Leases) -> None:
    assert await leases.acquire_lease("watchdog", "a", 10, T0)
    assert await leases.acquire_lease("watchdog", "a", 10, T0 + timedelta(seconds=5))
    assert not await leases.acquire_lease("watchdog", "b", 10, T0 + timedelta(seconds=6))
    assert await leases.acquire_lease("watchdog", "b", 10, T0 + timedelta(seconds=16))
    assert not await leases.acquire_lease("watchdog", "a", 10, T0 + timedelta(seconds=17))
