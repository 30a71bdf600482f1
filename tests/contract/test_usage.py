"""The ``UsageLedger`` contract (characters and requests per tenant and month), run against
SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

from dragoman.models import Usage
from dragoman.usage.store import UsageLedger


async def test_nothing_recorded_reads_as_zeros(usage: UsageLedger) -> None:
    assert await usage.get_usage("acme", "2026-01") == Usage(0, 0)


async def test_increments_add_up_per_tenant_and_period(usage: UsageLedger) -> None:
    await usage.add_usage([("acme", "2026-01", 10, 1), ("acme", "2026-02", 5, 1)])
    await usage.add_usage([("acme", "2026-01", 32, 2), ("", "2026-01", 7, 1)])
    await usage.add_usage([])
    assert await usage.get_usage("acme", "2026-01") == Usage(42, 3)
    assert await usage.get_usage("acme", "2026-02") == Usage(5, 1)
    assert await usage.get_usage("", "2026-01") == Usage(7, 1)


async def test_concurrent_flushes_add_up_rather_than_overwrite(usage: UsageLedger) -> None:
    await asyncio.gather(*(usage.add_usage([("acme", "2026-01", 10, 1)]) for _ in range(8)))
    assert await usage.get_usage("acme", "2026-01") == Usage(80, 8)
