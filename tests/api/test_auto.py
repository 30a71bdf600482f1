"""``source_lang: "auto"`` on /v1: per segment for /v1/translate, per document for jobs."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.helpers import assert_error, finished

EN = "The cat sleeps on the sofa while the children play in the garden."
FR = "Le chat dort sur le canapé pendant que les enfants jouent dans le jardin."


async def translate(client: httpx.AsyncClient, source: str, *segments: str) -> Any:
    body = {"source_lang": source, "target_lang": "es", "segments": list(segments)}
    response = await client.post("/v1/translate", json=body)
    assert response.status_code == 200, response.text
    return response.json()


async def test_each_segment_is_detected_and_translated_from_its_language(
    client: httpx.AsyncClient,
) -> None:
    mixed = await translate(client, "auto", EN, FR, EN)
    assert [d["language"] for d in mixed["detected_languages"]] == ["en", "fr", "en"]
    assert all(0 < d["confidence"] <= 100 for d in mixed["detected_languages"])
    english = await translate(client, "en", EN)
    french = await translate(client, "fr", FR)
    assert mixed["translations"] == [
        english["translations"][0],
        french["translations"][0],
        english["translations"][0],
    ]
    assert "detected_languages" not in english  # only answered to auto


async def test_auto_in_any_case_and_a_target_nothing_translates_into(
    client: httpx.AsyncClient,
) -> None:
    assert (await translate(client, "AUTO", EN))["detected_languages"][0]["language"] == "en"
    body = {"source_lang": "auto", "target_lang": "ja", "segments": [EN]}
    assert_error(await client.post("/v1/translate", json=body), 422, "unsupported_language_pair")


async def test_a_job_of_one_language_gets_that_source(client: httpx.AsyncClient) -> None:
    body = {
        "source_lang": "auto",
        "target_lang": "es",
        "documents": [{"name": "a", "segments": [FR, FR]}, {"name": "b", "segments": [FR]}],
    }
    job = (await client.post("/v1/jobs", json=body)).json()
    assert job["source_lang"] == "fr"
    assert (await finished(client, job["id"]))["status"] == "succeeded"
    result = (await client.get(f"/v1/jobs/{job['id']}/result")).json()
    assert [d["source_lang"] for d in result["documents"]] == ["fr", "fr"]
    french = await translate(client, "fr", FR)
    assert result["documents"][1]["segments"] == french["translations"]


async def test_a_job_of_documents_in_several_languages_translates_each_from_its_own(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "source_lang": "auto",
        "target_lang": "es",
        "documents": [
            {"name": "en1", "segments": [EN]},
            {"name": "fr", "segments": [FR, FR]},
            {"name": "en2", "segments": [EN, EN]},
        ],
    }
    job = (await client.post("/v1/jobs", json=body)).json()
    assert job["source_lang"] == "mul"
    assert (await finished(client, job["id"]))["status"] == "succeeded"
    result = (await client.get(f"/v1/jobs/{job['id']}/result")).json()
    docs = result["documents"]
    assert [d["source_lang"] for d in docs] == ["en", "fr", "en"]
    english = (await translate(client, "en", EN))["translations"][0]
    french = (await translate(client, "fr", FR))["translations"][0]
    assert docs[0]["segments"] == [english]
    assert docs[1]["segments"] == [french, french]
    assert docs[2]["segments"] == [english, english]
    listed = (await client.get("/v1/jobs")).json()["jobs"]
    assert [j["id"] for j in listed] == [job["id"]]  # its shards are not jobs of their own


async def test_a_file_job_detects_each_file(client: httpx.AsyncClient) -> None:
    files = [
        ("files", ("en.txt", f"{EN}\n".encode(), "text/plain")),
        ("files", ("fr.txt", f"{FR}\n".encode(), "text/plain")),
    ]
    data = {"source_lang": "auto", "target_lang": "es"}
    response = await client.post("/v1/jobs", data=data, files=files)
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["source_lang"] == "mul"
    assert (await finished(client, job["id"]))["status"] == "succeeded"
    french = (await translate(client, "fr", FR))["translations"][0]
    downloaded = await client.get(f"/v1/jobs/{job['id']}/files/1")
    assert downloaded.text == f"{french}\n"


async def test_auto_is_no_language_code_elsewhere(client: httpx.AsyncClient) -> None:
    body = {"source_lang": "en", "target_lang": "auto", "segments": [EN]}
    assert_error(await client.post("/v1/translate", json=body), 422, "invalid_request")


ES = "Hace un tiempo estupendo hoy y vamos a ir a la playa."
DE = "Ich habe heute keine Zeit für das Treffen."


async def test_a_segment_already_in_the_target_comes_back_as_it_is(
    client: httpx.AsyncClient,
) -> None:
    found = await translate(client, "auto", ES, EN)
    assert [d["language"] for d in found["detected_languages"]] == ["es", "en"]
    english = (await translate(client, "en", EN))["translations"][0]
    assert found["translations"] == [ES, english]


async def test_a_segment_in_a_language_with_no_route_is_a_400_naming_both(
    client: httpx.AsyncClient,
) -> None:
    body = {"source_lang": "auto", "target_lang": "es", "segments": [EN, DE]}
    response = await client.post("/v1/translate", json=body)
    assert_error(response, 400, "detected_language_unsupported")
    message = response.json()["error"]["message"]
    assert message.startswith("text 2 was detected as German (de)")
    assert "translates de into es" in message
    usage = (await client.get("/v1/usage")).json()
    assert usage["characters"] == 0  # refused, not charged


async def test_a_short_near_tie_is_read_as_a_language_with_a_route(
    client: httpx.AsyncClient,
) -> None:
    body = {"source_lang": "auto", "target_lang": "fr", "segments": ["proton beam"]}
    found = (await client.post("/v1/translate", json=body)).json()
    assert found["detected_languages"][0]["language"] == "en"  # through es, a pivot
    english = {**body, "source_lang": "en"}
    assert (
        found["translations"]
        == (await client.post("/v1/translate", json=english)).json()["translations"]
    )


async def test_a_job_of_a_document_in_the_target_is_taken_and_failed_at_once(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "source_lang": "auto",
        "target_lang": "es",
        "documents": [{"name": "a", "segments": [EN]}, {"name": "b", "segments": [ES]}],
    }
    response = await client.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    job = (await client.get(f"/v1/jobs/{response.json()['id']}")).json()
    assert (job["status"], job["source_lang"], job["finished_at"] is not None) == (
        "failed",
        "mul",
        True,
    )
    assert job["error"] == {
        "code": "source_is_target",
        "message": "Source and target language are equal. (b: es)",
    }
    assert (await client.get("/v1/usage")).json()["characters"] == 0


async def test_a_job_of_a_document_with_no_route_is_a_400_naming_it(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "source_lang": "auto",
        "target_lang": "es",
        "documents": [{"name": "notes", "segments": [DE]}],
    }
    response = await client.post("/v1/jobs", json=body)
    assert_error(response, 400, "detected_language_unsupported")
    assert response.json()["error"]["message"].startswith("notes was detected as German (de)")
    assert (await client.get("/v1/jobs")).json()["jobs"] == []
