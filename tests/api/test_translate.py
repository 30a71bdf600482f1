"""``/v1/translate``, ``/v1/languages``, health, readiness, metrics and docs."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.api.helpers import finished, job_body


async def test_translate_answers_synchronously(client: httpx.AsyncClient) -> None:
    body = {"source_lang": "en", "target_lang": "es", "segments": ["Hello world.", "The cat."]}
    response = await client.post("/v1/translate", json=body)
    assert response.status_code == 200
    assert response.json() == {"translations": ["Hola Mundo.", "El gato."]}


async def test_concurrent_requests_share_one_engine_batch_and_keep_their_answers(
    make_client: Any,
) -> None:
    client = await make_client(sync_batch_delay_s=0.05)
    words = ["Hello world.", "The cat.", "Good morning.", "The dog."] * 4

    async def one(text: str) -> str:
        body = {"source_lang": "en", "target_lang": "es", "segments": [text]}
        response = await client.post("/v1/translate", json=body)
        translations: list[str] = response.json()["translations"]
        return translations[0]

    answers = await asyncio.gather(*(one(text) for text in words))
    expected = {
        "Hello world.": "Hola Mundo.",
        "The cat.": "El gato.",
        "Good morning.": "Buenos días.",
        "The dog.": "El perro.",
    }
    assert answers == [expected[text] for text in words]
    metrics = (await client.get("/metrics")).text
    batches = next(
        float(line.split()[-1])
        for line in metrics.splitlines()
        if line.startswith('dragoman_engine_batch_size_count{engine="apertium"}')
    )
    assert batches < len(words)


async def test_languages_lists_installed_pairs_with_engines(client: httpx.AsyncClient) -> None:
    pairs = (await client.get("/v1/languages")).json()["pairs"]
    listed = [(p["source"], p["target"], p["engines"], p["pivot"]) for p in pairs]
    assert ("en", "es", ["apertium"], None) in listed
    assert ("fr", "es", ["apertium"], None) in listed
    assert ("en", "ca", ["apertium"], None) in listed


async def test_health_and_readiness(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    assert (await client.get("/readyz")).json() == {"status": "ready"}


async def test_readiness_is_503_with_retry_after_when_the_store_is_gone(make_client: Any) -> None:
    client = await make_client()
    service = client._transport.app.state.service  # type: ignore[attr-defined]
    await service.store.close()
    response = await client.get("/readyz")
    assert response.status_code == 503 and "retry-after" in response.headers
    assert response.json()["error"]["code"] == "store_unavailable"
    submit = await client.post("/v1/jobs", json=job_body("Hello."))
    assert submit.status_code == 503 and "retry-after" in submit.headers


async def test_metrics_report_jobs_queues_and_segments(client: httpx.AsyncClient) -> None:
    job_id = (await client.post("/v1/jobs", json=job_body("Hello.", "Bye."))).json()["id"]
    await finished(client, job_id)
    text = (await client.get("/metrics")).text
    assert 'dragoman_jobs{status="succeeded"} 1.0' in text
    assert 'dragoman_queue_depth{pool="cpu"} 0.0' in text
    assert 'dragoman_in_flight{pool="cpu"}' in text
    assert 'dragoman_segments_translated_total{engine="apertium",pool="cpu"} 2.0' in text
    assert "dragoman_engine_batch_seconds_bucket" in text


async def test_openapi_documents_every_v1_endpoint(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert {"/v1/jobs", "/v1/jobs/{job_id}", "/v1/jobs/{job_id}/result", "/v1/translate"} <= set(
        paths
    )
    assert (await client.get("/docs")).status_code == 200


async def test_apertium_pro_drop_leaves_no_space_at_the_edges(client: httpx.AsyncClient) -> None:
    body = {"source_lang": "en", "target_lang": "es", "segments": ["I am testing it.", " Hi. "]}
    translations = (await client.post("/v1/translate", json=body)).json()["translations"]
    assert translations[0] == translations[0].strip() and translations[0].startswith("Est")
    assert translations[1].startswith(" ") and translations[1].endswith(" ")
    assert translations[1] == f" {translations[1].strip()} "


async def test_unknown_words_come_back_unmarked_as_apertium_apy_gives_them_by_default(
    client: httpx.AsyncClient,
) -> None:
    text = "The xyzzyq frobnicates the Gloopington widget."
    v1 = await client.post(
        "/v1/translate", json={"source_lang": "en", "target_lang": "es", "segments": [text]}
    )
    lt = await client.post("/translate", json={"q": text, "source": "en", "target": "es"})
    deepl = await client.post("/v2/translate", json={"text": [text], "target_lang": "ES"})
    outputs = [
        v1.json()["translations"][0],
        lt.json()["translatedText"],
        deepl.json()["translations"][0]["text"],
    ]
    for output in outputs:
        assert "xyzzyq" in output and "Gloopington" in output
        assert not any(mark in output for mark in "*@#"), output


async def test_unknown_words_come_back_unmarked_unless_marks_are_asked_for(
    client: httpx.AsyncClient,
) -> None:
    body = {"source_lang": "en", "target_lang": "es", "segments": ["The zorblax eats apples."]}
    plain = await client.post("/v1/translate", json=body)
    marked = await client.post("/v1/translate", json={**body, "mark_unknown": True})
    again = await client.post("/v1/translate", json=body)
    assert plain.status_code == marked.status_code == 200, marked.text
    (unmarked,) = plain.json()["translations"]
    assert "zorblax" in unmarked and "*" not in unmarked
    assert "*zorblax" in marked.json()["translations"][0]
    assert again.json() == plain.json()  # the marked answer is cached apart
