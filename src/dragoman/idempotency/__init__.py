"""Safe retries (``Idempotency-Key``): the same key with the same request gives the first
answer again, never a second job, glossary or memory.

``IdempotentRequests.begin`` is called before a request is handled. It claims the tenant's
key for the request's fingerprint, or gives what the first request with that key got:

- its answer, once it has one (the same status, body and ``Location``);
- ``IdempotencyKeyReused`` (422) when the key came with another request;
- while the first request is still being handled, a wait for its answer, then
  ``IdempotencyKeyInUse`` (409) after ``idempotency_wait_s``.

A request whose process died between storing its work and answering leaves its key
claimed with no answer. ``recover`` rebuilds that answer from what was stored (a job
keeps the key it was submitted with); a key with nothing to recover is taken over once
``idempotency_lease_s`` has passed, and the request runs again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from dragoman.errors import IdempotencyKeyInUse, IdempotencyKeyReused
from dragoman.idempotency.store import Answer, IdempotencyKeys, SqlIdempotencyKeys
from dragoman.runtime import Runtime

__all__ = ["Answer", "Claimed", "IdempotentRequests", "Recover"]

POLL_S = 0.05

Recover = Callable[[], Awaitable[Answer | None]]


@dataclass(frozen=True, slots=True)
class Claimed:
    """This request holds the key: hand its answer to ``finish`` (or ``release`` it)."""

    tenant: str
    key: str
    claimed_at: datetime


class IdempotentRequests:
    def __init__(self, runtime: Runtime, *, keys: IdempotencyKeys | None = None) -> None:
        self._keys = keys or SqlIdempotencyKeys(runtime.database)
        self._clock = runtime.clock
        settings = runtime.settings
        self._ttl = timedelta(seconds=settings.idempotency_ttl_s)
        self._lease = timedelta(seconds=settings.idempotency_lease_s)
        self._wait_s = settings.idempotency_wait_s

    async def begin(
        self, tenant: str | None, key: str, fingerprint: str, recover: Recover | None = None
    ) -> Claimed | Answer:
        """Claims ``key`` for this request, or the first request's answer (see above)."""
        owner = tenant or ""
        deadline = time.monotonic() + self._wait_s
        while True:
            now = self._clock.now()
            held = await self._keys.claim(owner, key, fingerprint, now, now + self._ttl)
            if held is None:
                return Claimed(owner, key, now)
            if held.expires_at <= now or (
                held.answer is None and now - held.claimed_at >= self._lease
            ):
                # An old key, or one whose request never answered: before running again,
                # look for what that request stored.
                found = await recover() if recover and held.expires_at > now else None
                if found is not None:
                    await self._keys.answer(owner, key, held.claimed_at, found)
                    return found
                if await self._keys.take_over(
                    owner, key, fingerprint, held.claimed_at, now, now + self._ttl
                ):
                    return Claimed(owner, key, now)
                continue
            if held.fingerprint != fingerprint:
                raise IdempotencyKeyReused(
                    f"Idempotency-Key {key!r} was used for another request (another body "
                    "or path); use a new key for a new request"
                )
            if held.answer is not None:
                return held.answer
            if recover is not None and (found := await recover()) is not None:
                return found
            if time.monotonic() >= deadline:
                raise IdempotencyKeyInUse(
                    f"the first request with Idempotency-Key {key!r} is still being "
                    "handled; retry later for its answer"
                )
            await asyncio.sleep(POLL_S)

    async def finish(self, claimed: Claimed, answer: Answer) -> None:
        """Keeps ``answer`` for the retries of the claimed key."""
        await self._keys.answer(claimed.tenant, claimed.key, claimed.claimed_at, answer)

    async def release(self, claimed: Claimed) -> None:
        """Gives the key back: its request ended with nothing a retry should get again."""
        await self._keys.release(claimed.tenant, claimed.key, claimed.claimed_at)

    async def job_of(self, tenant: str | None, key: str) -> str | None:
        """The job submitted with ``key`` by ``tenant``, if it was stored."""
        return await self._keys.job_of(tenant, key)

    async def purge(self) -> int:
        """Forgets the keys older than ``idempotency_ttl_s``."""
        return await self._keys.purge(self._clock.now())
