"""``GET /v1/fleet`` and the small read-only routes the pages use, in process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dragoman.api.app import create_app
from dragoman.engines import Engines
from dragoman.services import EmbeddedService
from tests.api.helpers import assert_error, finished, job_body
from tests.conftest import ScriptedEngine, stop_service, wait_until

KEYS = "acme:key-a,ops:key-o"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
async def make_client(make_settings: Any) -> AsyncIterator[Any]:
    services: list[EmbeddedService] = []
    clients: list[httpx.AsyncClient] = []

    async def make(**overrides: Any) -> httpx.AsyncClient:
        settings = make_settings(**{"cpu_max_workers": 1, **overrides})
        service = EmbeddedService(settings, engines=Engines([ScriptedEngine()]))
        await service.start()
        services.append(service)
        app = create_app(service, manage_lifecycle=False)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
    for service in services:
        await stop_service(service)


async def pool(client: httpx.AsyncClient, name: str, **headers: str) -> dict[str, Any]:
    fleet = (await client.get("/v1/fleet", headers=headers)).json()
    assert [p["pool"] for p in fleet["pools"]] == ["cpu", "gpu"]
    found: dict[str, Any] = next(p for p in fleet["pools"] if p["pool"] == name)
    return found


async def test_the_fleet_counts_what_the_workers_translated(make_client: Any) -> None:
    client = await make_client()
    job = (await client.post("/v1/jobs", json=job_body("One.", "Two.", "Three."))).json()
    await finished(client, job["id"])

    async def registered() -> bool:
        return (await pool(client, "cpu"))["segments"]["translated"] == 3

    await wait_until(registered)
    cpu = await pool(client, "cpu")
    assert cpu["workers"]["desired"] >= 1 and cpu["workers"]["current"] >= 1
    assert cpu["workers"]["live"] == len(cpu["registered"]) >= 1
    assert cpu["workers"]["max"] == 1
    assert cpu["jobs"] == {"queued": 0, "in_flight": 0, "at_risk": 0}
    assert cpu["batches"]["count"] >= 1
    assert cpu["batches"]["segments"] == 3
    assert cpu["routing"]["total"] >= 1
    gpu = await pool(client, "gpu")
    assert gpu["workers"]["desired"] is None and gpu["workers"]["max"] == 0


async def test_the_newest_failures_are_listed_with_their_reason(make_client: Any) -> None:
    client = await make_client(max_attempts=1)
    job = (await client.post("/v1/jobs", json=job_body("<explode>"))).json()
    assert (await finished(client, job["id"]))["status"] == "failed"
    failures = (await client.get("/v1/fleet")).json()["failures"]
    assert [f["id"] for f in failures] == [job["id"]]
    assert failures[0]["error"]["code"] == "engine_error"
    assert "scripted engine failure" in failures[0]["error"]["message"]


async def test_with_keys_only_an_operator_reads_the_fleet(make_client: Any) -> None:
    client = await make_client(api_keys=KEYS, operator_tenants="ops")
    assert_error(await client.get("/v1/fleet"), 401, "unauthorized")
    refused = await client.get("/v1/fleet", headers=bearer("key-a"))
    assert_error(refused, 403, "forbidden")
    assert "operator" in refused.json()["error"]["message"]
    assert (await client.get("/v1/fleet", headers=bearer("key-o"))).status_code == 200


def test_an_operator_must_be_a_tenant_with_a_key(make_settings: Any) -> None:
    with pytest.raises(ValueError, match=r"DRAGOMAN_OPERATOR_TENANTS.*root"):
        make_settings(api_keys=KEYS, operator_tenants="ops,root")
    with pytest.raises(ValueError, match="DRAGOMAN_OPERATOR_TENANTS"):
        make_settings(operator_tenants="ops")
    assert make_settings(api_keys=KEYS, operator_tenants=" ops ").operators == {"ops"}


async def test_the_limits_are_the_settings(make_client: Any) -> None:
    client = await make_client(max_segment_chars=321, sync_max_segments=7)
    limits = (await client.get("/v1/limits")).json()
    assert limits["max_segment_chars"] == 321 and limits["sync_max_segments"] == 7


async def test_sources_come_in_the_order_of_the_results_for_their_tenant_only(
    make_client: Any,
) -> None:
    client = await make_client(api_keys=KEYS)
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [
            {"name": "a.txt", "segments": ["One.", "Two."]},
            {"name": "<b>b</b>.txt", "segments": ["Three."]},
        ],
    }
    job = (await client.post("/v1/jobs", json=body, headers=bearer("key-a"))).json()
    sources = await client.get(f"/v1/jobs/{job['id']}/sources", headers=bearer("key-a"))
    assert sources.json() == {
        "id": job["id"],
        "documents": [
            {"name": "a.txt", "format": None, "segments": ["One.", "Two."]},
            {"name": "<b>b</b>.txt", "format": None, "segments": ["Three."]},
        ],
    }
    other = await client.get(f"/v1/jobs/{job['id']}/sources", headers=bearer("key-o"))
    assert_error(other, 404, "not_found")
    files = await client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "es"},
        files={"files": ("notes.txt", b"Hello there.\n", "text/plain")},
        headers=bearer("key-a"),
    )
    texts = await client.get(f"/v1/jobs/{files.json()['id']}/sources", headers=bearer("key-a"))
    assert texts.json()["documents"][0]["format"] == "text"
