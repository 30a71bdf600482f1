"""Usage per tenant and period, monthly character quotas and per-minute rate limits."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import time_machine

from dragoman.api.app import create_app
from dragoman.errors import RateLimited
from dragoman.runtime import Runtime
from dragoman.services import EmbeddedService
from dragoman.store import open_store
from dragoman.usage import UsageMeter, period_of
from dragoman.usage.store import SqlUsage
from tests.api.helpers import assert_error, job_body
from tests.conftest import FakeClock, stop_service

KEYS = "acme:key-a,beta:key-b"
A = {"Authorization": "Bearer key-a"}
B = {"Authorization": "Bearer key-b"}


@pytest.fixture
async def serve(make_settings: Any) -> AsyncIterator[Any]:
    services: list[EmbeddedService] = []

    async def make(clock: FakeClock | None = None, **overrides: Any) -> httpx.AsyncClient:
        service = EmbeddedService(make_settings(**overrides), clock=clock or FakeClock())
        await service.start()
        services.append(service)
        app = create_app(service, manage_lifecycle=False)
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")

    yield make
    for service in services:
        await stop_service(service)


def words(n: int) -> str:
    return ("word " * n)[: 5 * n - 1]


async def translate(client: httpx.AsyncClient, text: str, **headers: str) -> httpx.Response:
    body = {"source_lang": "en", "target_lang": "es", "segments": [text]}
    return await client.post("/v1/translate", json=body, headers=headers)


async def test_usage_counts_translation_requests_and_their_characters(serve: Any) -> None:
    client = await serve(api_keys=KEYS)
    assert (await translate(client, "Hello world.", **A)).status_code == 200
    job = await client.post("/v1/jobs", json=job_body("One.", "Two three."), headers=A)
    assert job.status_code == 202
    await client.get(f"/v1/jobs/{job.json()['id']}", headers=A)  # reading is free
    usage = (await client.get("/v1/usage", headers=A)).json()
    assert usage["characters"] == len("Hello world.") + len("One.") + len("Two three.")
    assert usage["requests"] == 2
    assert usage["character_limit"] is None and usage["requests_per_minute"] is None
    assert usage["period_start"].startswith("2026-01-01")
    assert usage["period_end"].startswith("2026-02-01")
    other = (await client.get("/v1/usage", headers=B)).json()
    assert (other["characters"], other["requests"]) == (0, 0)  # tenants are apart
    assert_error(await client.get("/v1/usage"), 401, "unauthorized")


async def test_a_spent_quota_is_a_429_until_the_next_month(serve: Any) -> None:
    clock = FakeClock()
    client = await serve(clock, monthly_characters=30)
    assert (await translate(client, words(5))).status_code == 200  # 24 characters
    refused = await translate(client, words(2))
    assert_error(refused, 429, "quota_exceeded")
    assert int(refused.headers["Retry-After"]) == 31 * 24 * 3600 + 1  # until February
    assert_error(await client.post("/v1/jobs", json=job_body(words(2))), 429, "quota_exceeded")
    assert (await translate(client, "Hi.")).status_code == 200  # what is left still serves
    usage = (await client.get("/v1/usage")).json()
    assert (usage["characters"], usage["character_limit"]) == (27, 30)
    clock.current = datetime(2026, 2, 1, tzinfo=UTC)
    assert (await translate(client, words(5))).status_code == 200


async def test_limits_per_tenant_override_the_defaults(serve: Any) -> None:
    client = await serve(api_keys=KEYS, monthly_characters=5, tenant_limits="beta:0:0")
    assert_error(await translate(client, "Hello world.", **A), 429, "quota_exceeded")
    assert (await translate(client, "Hello world.", **B)).status_code == 200
    assert (await client.get("/v1/usage", headers=B)).json()["character_limit"] is None


async def test_the_rate_limit_refuses_with_retry_after_then_lets_through(serve: Any) -> None:
    with time_machine.travel(datetime(2026, 3, 1, 12, tzinfo=UTC), tick=False) as traveller:
        client = await serve(requests_per_minute=2)
        for _ in range(2):
            assert (await translate(client, "Hello.")).status_code == 200
        refused = await translate(client, "Hello.")
        assert_error(refused, 429, "rate_limited")
        assert 1 <= int(refused.headers["Retry-After"]) <= 61
        assert_error(await client.post("/v1/jobs", json=job_body("x")), 429, "rate_limited")
        traveller.shift(61)
        assert (await translate(client, "Hello.")).status_code == 200
    usage = (await client.get("/v1/usage")).json()
    assert usage["requests"] == 3  # refused requests are not counted


async def test_libretranslate_speaks_its_own_429(serve: Any) -> None:
    client = await serve(monthly_characters=3)
    response = await client.post("/translate", json={"q": "Hello", "source": "en", "target": "es"})
    assert response.status_code == 429
    assert set(response.json()) == {"error"} and response.headers["Retry-After"]


@pytest.mark.parametrize("storage", ["memory://", "redis://127.0.0.1:6379"])
async def test_api_processes_share_one_count(
    tmp_path: Any, storage: str, make_settings: Any
) -> None:
    """Two meters over one store, as two API processes: the ledger adds both up, and with
    Redis the rate limit is one count for both."""
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    settings = make_settings(requests_per_minute=3, rate_limit_storage=storage, queue_prefix=prefix)
    store = open_store(settings.resolved_database_url)
    await store.database.open()
    clock = FakeClock()
    meters = [UsageMeter(Runtime(settings, store, bus=None, clock=clock)) for _ in range(2)]  # type: ignore[arg-type]
    try:
        await meters[0].charge("acme", 10)
        await meters[0].charge("acme", 10)
        await meters[1].charge("acme", 10)
        for meter in meters:
            await meter.flush()
        report = await meters[1].report("acme")
        assert (report.characters, report.requests) == (30, 3)
        name, _, _ = period_of(clock.now())
        assert (await SqlUsage(store.database).get_usage("acme", name)).characters == 30
        if storage.startswith("redis"):  # one count: the fourth request is one too many
            with pytest.raises(RateLimited):
                await meters[1].charge("acme", 1)
        else:  # one count per process
            await meters[1].charge("acme", 1)
    finally:
        for meter in meters:
            await meter.stop()
        await store.database.close()


async def test_cancelling_a_job_gives_back_the_characters_never_translated(
    make_settings: Any,
) -> None:
    from dragoman.engines import Engines
    from tests.conftest import ScriptedEngine

    engine = ScriptedEngine()
    engine.release.clear()  # nothing is translated until the job is cancelled
    service = EmbeddedService(make_settings(api_keys=KEYS), engines=Engines([engine]))
    await service.start()
    app = create_app(service, manage_lifecycle=False)
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://t"
        ) as client:
            job = await client.post("/v1/jobs", json=job_body("One.", "Two three."), headers=A)
            charged = (await client.get("/v1/usage", headers=A)).json()["characters"]
            assert charged == len("One.") + len("Two three.")

            cancelled = await client.delete(f"/v1/jobs/{job.json()['id']}", headers=A)

            assert cancelled.status_code == 200, cancelled.text
            usage = (await client.get("/v1/usage", headers=A)).json()
            assert usage["characters"] == 0
            assert usage["requests"] == 1  # the request itself still counts
    finally:
        engine.release.set()
        await stop_service(service)


async def charged_once(serve: Any) -> httpx.AsyncClient:
    """A server whose tenant A has one translation charged."""
    client: httpx.AsyncClient = await serve(api_keys=KEYS)
    assert (await translate(client, "Hello world.", **A)).status_code == 200
    return client


async def assert_charged_once(client: httpx.AsyncClient) -> None:
    usage = (await client.get("/v1/usage", headers=A)).json()
    assert (usage["characters"], usage["requests"]) == (len("Hello world."), 1)


async def test_a_submission_the_store_could_not_keep_is_not_charged(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragoman.errors import TransientError
    from dragoman.store.sql import SqlJobStore

    client = await charged_once(serve)

    async def unavailable(self: SqlJobStore, *args: Any) -> Any:
        raise TransientError("the database did not answer")

    monkeypatch.setattr(SqlJobStore, "create", unavailable)
    refused = await client.post("/v1/jobs", json=job_body("One.", "Two three."), headers=A)
    assert refused.status_code == 503, refused.text
    await assert_charged_once(client)


async def test_a_translation_the_engine_failed_is_not_charged(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragoman.errors import EngineError
    from dragoman.translation import TextTranslation

    client = await charged_once(serve)

    async def failing(self: TextTranslation, *args: Any) -> Any:
        raise EngineError("the engine stopped")

    monkeypatch.setattr(TextTranslation, "_run", failing)
    for body in (
        {"source_lang": "en", "target_lang": "es", "segments": ["Two three."]},
        {"source_lang": "auto", "target_lang": "es", "segments": ["Two three four."]},
    ):
        failed = await client.post("/v1/translate", json=body, headers=A)
        assert failed.status_code >= 500, failed.text
    await assert_charged_once(client)
