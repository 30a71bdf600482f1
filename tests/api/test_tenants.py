"""API keys: every /v1 call needs one, and each tenant sees only its own jobs."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.helpers import assert_error, job_body

KEYS = "acme:key-a,globex:key-g"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
async def secured(make_client: Any) -> httpx.AsyncClient:
    client: httpx.AsyncClient = await make_client(api_keys=KEYS)
    return client


@pytest.mark.parametrize("headers", [{}, bearer("wrong"), {"Authorization": "key-a"}])
async def test_v1_calls_without_a_valid_key_are_401(
    secured: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    for response in (
        await secured.post("/v1/jobs", json=job_body("Hi."), headers=headers),
        await secured.get("/v1/jobs", headers=headers),
        await secured.get("/v1/languages", headers=headers),
        await secured.post(
            "/v1/translate",
            json={"source_lang": "en", "target_lang": "es", "segments": ["Hi."]},
            headers=headers,
        ),
    ):
        assert_error(response, 401, "unauthorized")


async def test_health_needs_no_key(secured: httpx.AsyncClient) -> None:
    assert (await secured.get("/healthz")).status_code == 200


async def test_a_tenant_sees_only_its_own_jobs(secured: httpx.AsyncClient) -> None:
    mine = await secured.post("/v1/jobs", json=job_body("Hi."), headers=bearer("key-a"))
    assert mine.status_code == 202
    job_id = mine.json()["id"]
    for path in (f"/v1/jobs/{job_id}", f"/v1/jobs/{job_id}/result"):
        assert (await secured.get(path, headers=bearer("key-a"))).status_code == 200
        assert_error(await secured.get(path, headers=bearer("key-g")), 404, "not_found")
    assert_error(
        await secured.delete(f"/v1/jobs/{job_id}", headers=bearer("key-g")), 404, "not_found"
    )
    theirs = (await secured.get("/v1/jobs", headers=bearer("key-g"))).json()
    assert theirs["jobs"] == []
    ours = (await secured.get("/v1/jobs", headers=bearer("key-a"))).json()
    assert [job["id"] for job in ours["jobs"]] == [job_id]


def test_malformed_api_keys_setting_is_refused(make_settings: Any) -> None:
    with pytest.raises(ValueError, match="tenant:key"):
        make_settings(api_keys="just-a-key")
