"""The ``IdempotencyKeys`` contract (the keys of safe retries), run against SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from dragoman.idempotency.store import Answer, IdempotencyKeys
from dragoman.models import JobOptions
from dragoman.store.sql import SqlJobStore
from tests.contract.test_job_store import DOCS, a_job

T0 = datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
DAY = timedelta(days=1)
ANSWER = Answer(202, "application/json", "/v1/jobs/j1", b'{"id":"j1"}')


async def test_of_requests_at_once_with_one_key_exactly_one_claims_it(
    idempotency_keys: IdempotencyKeys,
) -> None:
    held = await asyncio.gather(
        *(idempotency_keys.claim("acme", "k", "f", T0, T0 + DAY) for _ in range(8))
    )
    assert held.count(None) == 1
    others = [claim for claim in held if claim is not None]
    assert {(c.fingerprint, c.claimed_at, c.expires_at, c.answer) for c in others} == {
        ("f", T0, T0 + DAY, None)
    }


async def test_a_claimed_key_keeps_its_answer_for_the_next_request(
    idempotency_keys: IdempotencyKeys,
) -> None:
    assert await idempotency_keys.claim("acme", "k", "f", T0, T0 + DAY) is None
    await idempotency_keys.answer("acme", "k", T0, ANSWER)
    held = await idempotency_keys.claim("acme", "k", "f", T0 + DAY / 2, T0 + DAY * 2)
    assert held is not None and held.answer == ANSWER and held.claimed_at == T0
    # Keys are the tenant's: another tenant's same key is another key.
    assert await idempotency_keys.claim("other", "k", "f", T0, T0 + DAY) is None
    assert await idempotency_keys.claim("", "k", "g", T0, T0 + DAY) is None


async def test_a_released_key_is_free_and_an_answered_one_is_not_released(
    idempotency_keys: IdempotencyKeys,
) -> None:
    assert await idempotency_keys.claim("acme", "k", "f", T0, T0 + DAY) is None
    await idempotency_keys.release("acme", "k", T0)
    assert await idempotency_keys.claim("acme", "k", "g", T0, T0 + DAY) is None
    await idempotency_keys.answer("acme", "k", T0, ANSWER)
    await idempotency_keys.release("acme", "k", T0)
    held = await idempotency_keys.claim("acme", "k", "g", T0, T0 + DAY)
    assert held is not None and held.answer == ANSWER


async def test_a_take_over_is_fenced_by_the_claim_it_replaces(
    idempotency_keys: IdempotencyKeys,
) -> None:
    later = T0 + timedelta(minutes=5)
    assert await idempotency_keys.claim("acme", "k", "f", T0, T0 + DAY) is None
    taken = await asyncio.gather(
        *(idempotency_keys.take_over("acme", "k", "g", T0, later, later + DAY) for _ in range(4))
    )
    assert taken.count(True) == 1
    held = await idempotency_keys.claim("acme", "k", "h", later, later + DAY)
    assert held is not None and (held.fingerprint, held.claimed_at) == ("g", later)
    # The request that lost the key can no longer answer for it or give it back.
    await idempotency_keys.answer("acme", "k", T0, ANSWER)
    await idempotency_keys.release("acme", "k", T0)
    held = await idempotency_keys.claim("acme", "k", "h", later, later + DAY)
    assert held is not None and held.answer is None and held.claimed_at == later
    # An answered key is taken over only once it has expired.
    await idempotency_keys.answer("acme", "k", later, ANSWER)
    assert not await idempotency_keys.take_over("acme", "k", "i", later, later, later + DAY)
    gone = later + DAY
    assert await idempotency_keys.take_over("acme", "k", "i", later, gone, gone + DAY)


async def test_expired_keys_are_purged(idempotency_keys: IdempotencyKeys) -> None:
    assert await idempotency_keys.claim("acme", "old", "f", T0, T0 + DAY) is None
    assert await idempotency_keys.claim("acme", "new", "f", T0 + DAY, T0 + DAY * 2) is None
    assert await idempotency_keys.purge(T0 + DAY) == 1
    assert await idempotency_keys.claim("acme", "old", "g", T0 + DAY, T0 + DAY * 2) is None
    held = await idempotency_keys.claim("acme", "new", "g", T0 + DAY, T0 + DAY * 2)
    assert held is not None and held.fingerprint == "f"


async def test_the_job_of_a_key_is_the_tenants_top_level_job(
    store: SqlJobStore, idempotency_keys: IdempotencyKeys
) -> None:
    job = a_job("j1", tenant="acme")
    job.options = JobOptions(idempotency_key="k")
    await store.create(job, DOCS)
    anonymous = a_job("j2")
    anonymous.options = JobOptions(idempotency_key="k")
    await store.create(anonymous, DOCS)
    assert await idempotency_keys.job_of("acme", "k") == "j1"
    assert await idempotency_keys.job_of(None, "k") == "j2"
    assert await idempotency_keys.job_of("other", "k") is None
    assert await idempotency_keys.job_of("acme", "other") is None
    found = await store.get("j1")
    assert found is not None and found.options.idempotency_key == "k"
