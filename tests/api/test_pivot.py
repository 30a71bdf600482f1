"""Pivot pairs over HTTP, in process with the real Apertium pairs of this machine (es-en,
en-ca, but no es-ca): listed with their pivot, and translated as two requests would be."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.helpers import finished

SPANISH = ["El gato duerme en la casa.", "", "Buenos días, señora."]


async def translate(client: httpx.AsyncClient, source: str, target: str, **extra: Any) -> Any:
    body = {"source_lang": source, "target_lang": target, "segments": SPANISH, **extra}
    response = await client.post("/v1/translate", json=body)
    assert response.status_code == 200, response.text
    return response.json()["translations"]


async def two_steps(client: httpx.AsyncClient, texts: list[str]) -> list[str]:
    english = await client.post(
        "/v1/translate", json={"source_lang": "es", "target_lang": "en", "segments": texts}
    )
    catalan = await client.post(
        "/v1/translate",
        json={"source_lang": "en", "target_lang": "ca", "segments": english.json()["translations"]},
    )
    translations: list[str] = catalan.json()["translations"]
    return translations


async def test_languages_name_the_pivot_of_each_pivot_pair(client: httpx.AsyncClient) -> None:
    pairs = {
        (p["source"], p["target"]): p for p in (await client.get("/v1/languages")).json()["pairs"]
    }
    assert pairs[("es", "ca")]["engines"] == ["pivot"] and pairs[("es", "ca")]["pivot"] == "en"
    assert pairs[("en", "es")]["engines"] == ["apertium"] and pairs[("en", "es")]["pivot"] is None
    assert ("ca", "fr") not in pairs  # ca-en, but no en-fr: two pivots would be needed


@pytest.mark.parametrize("engine", [None, "pivot"])
async def test_translate_through_the_pivot_equals_two_requests(
    client: httpx.AsyncClient, engine: str | None
) -> None:
    found = await translate(client, "es", "ca", **({"engine": engine} if engine else {}))
    assert found == await two_steps(client, SPANISH)
    assert found[0] and found[1] == ""


async def test_a_job_through_the_pivot_equals_two_requests(client: httpx.AsyncClient) -> None:
    body = {
        "source_lang": "es",
        "target_lang": "ca",
        "documents": [{"name": "a.txt", "segments": SPANISH}],
    }
    created = await client.post("/v1/jobs", json=body)
    assert created.status_code == 202, created.text
    assert (await finished(client, created.json()["id"]))["status"] == "succeeded"
    result = (await client.get(f"/v1/jobs/{created.json()['id']}/result")).json()
    assert result["documents"][0]["segments"] == await two_steps(client, SPANISH)


async def test_a_file_keeps_its_markup_through_the_pivot(client: httpx.AsyncClient) -> None:
    page = b"<html><body><p>El <b>gato negro</b> duerme.</p></body></html>"

    async def file_job(content: bytes, source: str, target: str) -> bytes:
        response = await client.post(
            "/v1/jobs",
            data={"source_lang": source, "target_lang": target},
            files=[("files", ("page.html", content))],
        )
        assert response.status_code == 202, response.text
        job = await finished(client, response.json()["id"])
        assert job["status"] == "succeeded", job
        return (await client.get(f"/v1/jobs/{job['id']}/files/0")).content

    through = await file_job(page, "es", "ca")
    assert b"<b>" in through and b"</b>" in through
    assert through == await file_job(await file_job(page, "es", "en"), "en", "ca")


async def test_the_compatible_apis_offer_pivot_pairs(client: httpx.AsyncClient) -> None:
    libre = {entry["code"]: entry for entry in (await client.get("/languages")).json()}
    assert "ca" in libre["es"]["targets"]
    lt = await client.post("/translate", json={"q": SPANISH[0], "source": "es", "target": "ca"})
    assert (
        lt.status_code == 200
        and lt.json()["translatedText"] == (await two_steps(client, SPANISH[:1]))[0]
    )
    pairs = (await client.get("/v2/glossary-language-pairs")).json()["supported_languages"]
    assert {"source_lang": "es", "target_lang": "ca"} in pairs
    deepl = await client.post(
        "/v2/translate", json={"text": [SPANISH[0]], "source_lang": "ES", "target_lang": "CA"}
    )
    assert deepl.status_code == 200, deepl.text
    assert deepl.json()["translations"][0]["text"] == (await two_steps(client, SPANISH[:1]))[0]
