"""Bad input always gets a 4xx with the JSON error body, never a 5xx or a stuck job."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.helpers import assert_error, job_body


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "invalid_request"),
        ({"source_lang": "en", "target_lang": "es"}, "invalid_request"),
        (job_body("x", priority="urgent"), "invalid_request"),
        (job_body("x", colour="red"), "invalid_request"),
        ({**job_body("x"), "documents": []}, "invalid_request"),
        ({**job_body("x"), "documents": [{"name": "a"}]}, "invalid_request"),
        ({**job_body("x"), "documents": [{"name": "", "segments": ["x"]}]}, "invalid_request"),
        ({**job_body("x"), "documents": [{"name": "a", "segments": [1, 2]}]}, "invalid_request"),
        ({**job_body("x"), "documents": "a.txt"}, "invalid_request"),
        (job_body(), "invalid_request"),
        (job_body("x", source_lang="en", target_lang="xx"), "unsupported_language_pair"),
        (job_body("x", source_lang="english"), "invalid_request"),
        (job_body("x", source_lang="es", target_lang="ca"), "unsupported_language_pair"),
        (job_body("x", engine="nonesuch"), "unsupported_language_pair"),
        (job_body("fine", "nul\x00inside"), "invalid_segment"),
        (job_body("escape \x1b[31m"), "invalid_segment"),
        (["not", "an", "object"], "invalid_request"),
    ],
)
async def test_bad_job_bodies_are_422(client: httpx.AsyncClient, body: Any, code: str) -> None:
    assert_error(await client.post("/v1/jobs", json=body), 422, code)


async def test_the_bad_segment_is_named(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/jobs", json=job_body("ok", "ok", "bad\x00"))
    assert "documents[0].segments[2]" in response.json()["error"]["message"]


async def test_malformed_json_is_422(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/jobs", content=b'{"source_lang": "en",', headers={"content-type": "application/json"}
    )
    assert_error(response, 422, "invalid_request")


async def test_a_body_that_is_not_json_is_422(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/jobs", content=b"\xff\xfe garbage", headers={"content-type": "text/plain"}
    )
    assert response.status_code == 422 and "error" in response.json()


async def test_limits_on_segments_and_characters_are_413(make_client: Any) -> None:
    client = await make_client(max_segments_per_job=3, max_segment_chars=10)
    assert_error(await client.post("/v1/jobs", json=job_body(*"abcd")), 413, "payload_too_large")
    too_long = job_body("x" * 11)
    assert_error(await client.post("/v1/jobs", json=too_long), 413, "payload_too_large")


async def test_a_body_above_the_byte_limit_is_413(make_client: Any) -> None:
    client = await make_client(max_request_bytes=2048)
    response = await client.post("/v1/jobs", json=job_body("x" * 4000))
    assert_error(response, 413, "payload_too_large")


async def test_a_chunked_body_above_the_byte_limit_is_413(make_client: Any) -> None:
    client = await make_client(max_request_bytes=2048)

    async def chunks() -> Any:
        for _ in range(10):
            yield b"x" * 512

    response = await client.post(
        "/v1/jobs", content=chunks(), headers={"content-type": "application/json"}
    )
    assert_error(response, 413, "payload_too_large")


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 100000}, {"limit": "ten"}, {"status": "done"}, {"cursor": "abc"}],
)
async def test_bad_list_parameters_are_422(client: httpx.AsyncClient, params: Any) -> None:
    assert_error(await client.get("/v1/jobs", params=params), 422, "invalid_request")


async def test_an_unknown_route_is_a_json_404(client: httpx.AsyncClient) -> None:
    assert_error(await client.get("/v2/whatever"), 404, "not_found")


async def test_a_wrong_method_is_a_json_405(client: httpx.AsyncClient) -> None:
    assert_error(await client.put("/v1/jobs"), 405, "method_not_allowed")


@pytest.mark.parametrize(
    "body",
    [
        {"source_lang": "en", "target_lang": "es", "segments": []},
        {"source_lang": "en", "target_lang": "es"},
        {"source_lang": "en", "target_lang": "es", "segments": ["a\x00"]},
        {"source_lang": "en", "target_lang": "zz", "segments": ["a"]},
    ],
)
async def test_bad_translate_bodies_are_422(client: httpx.AsyncClient, body: Any) -> None:
    response = await client.post("/v1/translate", json=body)
    assert response.status_code == 422 and set(response.json()) == {"error"}


async def test_translate_above_its_limit_is_413_pointing_to_jobs(make_client: Any) -> None:
    client = await make_client(sync_max_segments=2)
    body = {"source_lang": "en", "target_lang": "es", "segments": ["a", "b", "c"]}
    response = await client.post("/v1/translate", json=body)
    assert_error(response, 413, "payload_too_large")
    assert "/v1/jobs" in response.json()["error"]["message"]
