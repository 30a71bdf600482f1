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
        ({**job_body("x"), "documents": [{"name": "a\x00", "segments": ["x"]}]}, "invalid_request"),
        ({**job_body("x"), "documents": [{"name": "a", "segments": [1, 2]}]}, "invalid_request"),
        ({**job_body("x"), "documents": "a.txt"}, "invalid_request"),
        (job_body(), "invalid_request"),
        (job_body("x", source_lang="en", target_lang="xx"), "unsupported_language_pair"),
        (job_body("x", source_lang="english"), "invalid_request"),
        (job_body("x", source_lang="ca", target_lang="fr"), "unsupported_language_pair"),
        (job_body("x", engine="nonesuch"), "unsupported_language_pair"),
        (job_body("x", engine=""), "invalid_request"),
        (job_body("x", engine=7), "invalid_request"),
        ({**job_body("x"), "documents": [{"name": "a", "segments": []}]}, "invalid_request"),
        (
            {**job_body("x"), "documents": [{"name": "a", "segments": []}] * 2},
            "invalid_request",
        ),
        (job_body("fine", "nul\x00inside"), "invalid_segment"),
        (job_body("escape \x1b[31m"), "invalid_segment"),
        # U+FFFF ends Apertium's input stream: the rest would shift onto the next segments.
        (job_body("x\uffff y", "The world is big."), "invalid_segment"),
        (job_body("odd \ufffe char"), "invalid_segment"),
        (["not", "an", "object"], "invalid_request"),
        (job_body("x", memories="product"), "invalid_request"),
        (job_body("x", memories=["../etc"]), "invalid_request"),
        (job_body("x", memories=[""]), "invalid_request"),
        (job_body("x", memories=[f"m{i}" for i in range(17)]), "invalid_request"),
        (job_body("x", glossary="has space"), "invalid_request"),
        (job_body("x", glossary=""), "invalid_request"),
        (job_body("x", cache="sometimes"), "invalid_request"),
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


@pytest.mark.parametrize("path", ["/v1/jobs", "/v1/translate"])
async def test_a_json_body_that_is_not_utf8_is_422(client: httpx.AsyncClient, path: str) -> None:
    response = await client.post(
        path, content=b'{"source_lang": "\xff\xfe"}', headers={"content-type": "application/json"}
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
    [
        {"limit": 0},
        {"limit": 100000},
        {"limit": "ten"},
        {"status": "done"},
        {"cursor": "abc"},
        {"cursor": ""},
        {"cursor": "9" * 25},
        {"cursor": "\u00b2"},
    ],
)
async def test_bad_list_parameters_are_422(client: httpx.AsyncClient, params: Any) -> None:
    assert_error(await client.get("/v1/jobs", params=params), 422, "invalid_request")


async def test_an_unknown_route_is_a_json_404(client: httpx.AsyncClient) -> None:
    assert_error(await client.get("/v9/whatever"), 404, "not_found")


async def test_a_wrong_method_is_a_json_405(client: httpx.AsyncClient) -> None:
    assert_error(await client.put("/v1/jobs"), 405, "method_not_allowed")


def _allowed(response: httpx.Response) -> set[str]:
    return {method.strip() for method in response.headers["allow"].split(",")}


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/v1/jobs", {"GET", "POST"}),
        ("OPTIONS", "/v1/jobs", {"GET", "POST"}),
        ("PATCH", "/v1/jobs/0123", {"GET", "DELETE"}),
        ("OPTIONS", "/v1/jobs/0123", {"GET", "DELETE"}),
        ("POST", "/v1/jobs/0123/result", {"GET"}),
        ("GET", "/v1/translate", {"POST"}),
        ("DELETE", "/healthz", {"GET"}),
    ],
)
async def test_a_405_allows_every_method_of_the_path(
    client: httpx.AsyncClient, method: str, path: str, allowed: set[str]
) -> None:
    response = await client.request(method, path)
    assert_error(response, 405, "method_not_allowed")
    assert _allowed(response) - {"HEAD"} == allowed
    assert method in response.json()["error"]["message"]


async def test_an_unknown_engine_is_named_with_the_engines_of_the_pair(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/v1/jobs", json=job_body("x", engine="nonesuch"))
    assert_error(response, 422, "unsupported_language_pair")
    message = response.json()["error"]["message"]
    assert "'nonesuch'" in message and "apertium" in message
    assert "language pair" not in message


async def test_an_unknown_engine_for_translate_is_named(client: httpx.AsyncClient) -> None:
    body = {"source_lang": "en", "target_lang": "es", "segments": ["a"], "engine": "nonesuch"}
    response = await client.post("/v1/translate", json=body)
    assert_error(response, 422, "unsupported_language_pair")
    assert "'nonesuch'" in response.json()["error"]["message"]
    assert "apertium" in response.json()["error"]["message"]


async def test_an_empty_document_beside_others_is_422(client: httpx.AsyncClient) -> None:
    body = job_body("Hello.")
    body["documents"].append({"name": "empty.txt", "segments": []})
    response = await client.post("/v1/jobs", json=body)
    assert_error(response, 422, "invalid_request")
    assert "documents.1.segments" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "body",
    [
        {"source_lang": "en", "target_lang": "es", "segments": []},
        {"source_lang": "en", "target_lang": "es"},
        {"source_lang": "en", "target_lang": "es", "segments": ["a\x00"]},
        {"source_lang": "en", "target_lang": "es", "segments": ["Night.", "x\uffff y", "Big."]},
        {"source_lang": "en", "target_lang": "zz", "segments": ["a"]},
        {"source_lang": "en", "target_lang": "es", "segments": ["a"], "engine": ""},
        {"source_lang": "en", "target_lang": "es", "segments": ["a"], "engine": "nonesuch"},
        {"source_lang": "en", "target_lang": "es", "segments": "a"},
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


async def test_translate_checks_its_segments_before_the_languages(make_client: Any) -> None:
    client = await make_client(sync_max_segments=2)
    many = {"source_lang": "en", "target_lang": "de", "segments": ["a", "b", "c"]}
    assert_error(await client.post("/v1/translate", json=many), 413, "payload_too_large")
    bad = {"source_lang": "en", "target_lang": "de", "segments": ["a\x00"]}
    assert_error(await client.post("/v1/translate", json=bad), 422, "invalid_segment")
    fine = {"source_lang": "en", "target_lang": "de", "segments": ["a"]}
    assert_error(await client.post("/v1/translate", json=fine), 422, "unsupported_language_pair")
