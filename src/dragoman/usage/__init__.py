"""Usage per tenant: characters and requests counted per calendar month (UTC) in the store,
a monthly character quota, and a requests-per-minute rate limit.

Every translation request (``/v1/translate``, a job, and the same calls of the
LibreTranslate and DeepL facades) is *charged* once, before any work: the rate limit is hit,
the quota checked, and the request counted. Reading a job, polling or downloading is free.

- Counts are added up in memory and flushed to the store every ``usage_flush_s`` (one
  upsert per tenant), so a translation costs no store transaction; every API process
  flushes into the same rows, so ``GET /v1/usage`` tells one truth for all of them. A quota
  is checked against the store's count (refreshed as often as it is flushed) plus this
  process's unflushed part: several API processes together may overshoot it by what they
  accept within one flush interval.
- The rate limit is a moving window of the ``limits`` library: in memory for one process,
  in Redis (``DRAGOMAN_RATE_LIMIT_STORAGE=redis://...``) to share one count between API
  processes. When Redis does not answer, requests pass (logged): a broken limiter must not
  take translation down.
- The ledger's rows are ``store``'s (``UsageLedger``), on the shared database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from limits import RateLimitItemPerMinute
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from dragoman.errors import QuotaExceeded, RateLimited, TransientError
from dragoman.models import Usage
from dragoman.runtime import Runtime
from dragoman.usage.store import SqlUsage, UsageLedger

log = logging.getLogger(__name__)


def period_of(now: datetime) -> tuple[str, datetime, datetime]:
    """The month ``now`` falls in: its name (``2026-12``), its start and its end (UTC)."""
    now = now.astimezone(UTC)
    start = datetime(now.year, now.month, 1, tzinfo=UTC)
    end = datetime(now.year + now.month // 12, now.month % 12 + 1, 1, tzinfo=UTC)
    return f"{now.year:04d}-{now.month:02d}", start, end


def _key(tenant: str | None) -> str:
    return tenant or ""


@dataclass(frozen=True, slots=True)
class UsageReport:
    tenant: str | None
    period_start: datetime
    period_end: datetime
    characters: int
    requests: int
    character_limit: int  # 0: none
    requests_per_minute: int  # 0: none


class UsageMeter:
    """Charges requests to tenants; start it to flush its counts, stop it to flush the rest."""

    def __init__(self, runtime: Runtime) -> None:
        self._settings = runtime.settings
        self._store: UsageLedger = SqlUsage(runtime.database)
        self._clock = runtime.clock
        uri = self._settings.rate_limit_storage
        self._limits = storage_from_string(uri if uri.startswith("async+") else f"async+{uri}")
        self._limiter = MovingWindowRateLimiter(self._limits)
        self._pending: dict[tuple[str, str], Usage] = {}
        # Counts on their way to the store: still counted by ``charge`` until they are in
        # ``_stored``, so that a flush never makes a tenant look lighter than it is.
        self._flushing: dict[tuple[str, str], Usage] = {}
        # The store's count per (tenant, period) and when it was read (monotonic seconds).
        self._stored: dict[tuple[str, str], tuple[Usage, float]] = {}
        # Reads of the store and flushes never overlap: a count read during a flush could
        # hold the flushed counts or not, and adding them once more would count them twice.
        self._store_lock = asyncio.Lock()
        self._flusher: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    async def charge(self, tenant: str | None, characters: int) -> datetime:
        """Counts one request of ``characters``, and says when (for a ``refund``);
        ``RateLimited`` or ``QuotaExceeded`` (and nothing counted) when the tenant's limits
        refuse it."""
        max_characters, per_minute = self._settings.limits_of(tenant)
        if per_minute:
            await self._hit(tenant, per_minute)
        now = self._clock.now()
        name, _, end = period_of(now)
        key = (_key(tenant), name)
        if max_characters:
            stored = await self._stored_usage(key)
            used = stored.characters + self._unstored(key).characters
            if used + characters > max_characters:
                wait = int((end - self._clock.now()).total_seconds()) + 1
                raise QuotaExceeded(
                    f"the character quota of this period is spent ({used} of "
                    f"{max_characters} used; this request has {characters}); it renews "
                    f"on {end.date().isoformat()}",
                    wait,
                )
        pending = self._pending_of(key)
        self._pending[key] = Usage(pending.characters + characters, pending.requests + 1)
        return now

    def refund(
        self, tenant: str | None, characters: int, charged_at: datetime, *, requests: int = 0
    ) -> None:
        """Gives back ``characters`` (and ``requests``) charged at ``charged_at`` to the
        period they were charged in: a cancelled job's segments that were never translated,
        or a submission that was never stored."""
        if characters <= 0 and requests <= 0:
            return
        key = (_key(tenant), period_of(charged_at)[0])
        pending = self._pending_of(key)
        self._pending[key] = Usage(pending.characters - characters, pending.requests - requests)

    async def _hit(self, tenant: str | None, per_minute: int) -> None:
        item = RateLimitItemPerMinute(per_minute)
        prefix = self._settings.queue_prefix
        try:
            if await self._limiter.hit(item, prefix, _key(tenant)):
                return
            stats = await self._limiter.get_window_stats(item, prefix, _key(tenant))
        except Exception as exc:  # the limiter's storage is away: let the request pass
            log.warning("rate limit not checked: %s", exc)
            return
        wait = int(stats.reset_time - time.time()) + 1
        raise RateLimited(
            f"more than {per_minute} requests per minute; retry in {wait} s", max(1, wait)
        )

    def _pending_of(self, key: tuple[str, str]) -> Usage:
        return self._pending.get(key, Usage())

    def _unstored(self, key: tuple[str, str]) -> Usage:
        """What this process counted that ``_stored`` does not hold yet."""
        pending, flushing = self._pending_of(key), self._flushing.get(key, Usage())
        return Usage(pending.characters + flushing.characters, pending.requests + flushing.requests)

    async def _stored_usage(self, key: tuple[str, str]) -> Usage:
        cached = self._stored.get(key)
        if cached is not None and time.monotonic() - cached[1] < self._settings.usage_flush_s:
            return cached[0]
        try:
            async with self._store_lock:
                found = await self._store.get_usage(*key)
                self._stored[key] = (found, time.monotonic())
        except TransientError:
            if cached is None:
                raise
            return cached[0]  # the store is away: decide on what was last known
        return found

    async def report(self, tenant: str | None) -> UsageReport:
        """The tenant's usage in the current period, this process's unflushed part included."""
        name, start, end = period_of(self._clock.now())
        key = (_key(tenant), name)
        async with self._store_lock:
            stored = await self._store.get_usage(*key)
            self._stored[key] = (stored, time.monotonic())
        pending = self._unstored(key)
        max_characters, per_minute = self._settings.limits_of(tenant)
        return UsageReport(
            tenant=tenant,
            period_start=start,
            period_end=end,
            characters=stored.characters + pending.characters,
            requests=stored.requests + pending.requests,
            character_limit=max_characters,
            requests_per_minute=per_minute,
        )

    async def flush(self) -> None:
        """Adds the counts so far to the store; kept for the next flush if it is away."""
        async with self._store_lock:
            pending, self._pending = self._pending, {}
            if pending:
                self._flushing = pending
                try:
                    await self._flush(pending)
                finally:
                    self._flushing = {}

    async def _flush(self, pending: dict[tuple[str, str], Usage]) -> None:
        try:
            await self._store.add_usage(
                [(t, p, u.characters, u.requests) for (t, p), u in pending.items()]
            )
        except Exception:
            for key, usage in pending.items():
                now = self._pending_of(key)
                self._pending[key] = Usage(
                    now.characters + usage.characters, now.requests + usage.requests
                )
            raise
        # Every count in ``_stored`` was read before this flush began (the lock): add it.
        for key, usage in pending.items():
            cached = self._stored.get(key)
            if cached is not None:
                was = cached[0]
                added = Usage(was.characters + usage.characters, was.requests + usage.requests)
                self._stored[key] = (added, cached[1])

    def start(self) -> None:
        self._flusher = asyncio.create_task(self._flush_forever(), name="usage-flush")

    async def _flush_forever(self) -> None:
        """Flushes every ``usage_flush_s``, and once more when stopped. It is told to stop,
        never cancelled: a flush cut short would lose the counts it carries."""
        stopped = False
        while not stopped:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._settings.usage_flush_s):
                    await self._stopping.wait()
            stopped = self._stopping.is_set()
            await self._flush_or_warn()

    async def _flush_or_warn(self) -> None:
        try:
            await self.flush()
        except Exception as exc:
            log.warning("usage not flushed yet: %s", exc)

    async def stop(self) -> None:
        """Flushes what is left (after the flush in flight, if any) and closes the limiter."""
        self._stopping.set()
        if self._flusher is not None:
            await self._flusher
            self._flusher = None
        else:
            await self._flush_or_warn()
        if self._pending:
            log.warning("usage of the last %.0f s lost", self._settings.usage_flush_s)
        self._close_limits()

    def _close_limits(self) -> None:
        """Closes the connections of a Redis storage (``limits`` has no call for it)."""
        client = getattr(getattr(self._limits, "bridge", None), "storage", None)
        pool = getattr(client, "connection_pool", None)
        if pool is not None:
            pool.disconnect()
