"""Synchronous requests and the segment cache, over the real service and Apertium: a text
seen before does not reach the engine (``/v1/translate``, LibreTranslate, DeepL), a hit is
what ``apertium`` gives the segment alone, jobs and requests share their entries, and what
must miss misses (another tenant, a cache that is off, a glossary's masked text)."""

from __future__ import annotations

from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.api.helpers import finished, job_body
from tests.integration.conftest import cli, squash

SEGMENTS = ["The dog eats the apple.", "Where is the station?", "I like green tea."]
KEYS = "alpha:key-a,beta:key-b"


async def counts(client: httpx.AsyncClient) -> tuple[float, float]:
    """Synchronous segments sent to the engine so far, and answered from the cache."""
    found = {"dragoman_sync_segments_translated": 0.0, "dragoman_sync_segments_cached": 0.0}
    for family in text_string_to_metric_families((await client.get("/metrics")).text):
        for sample in family.samples:
            if sample.name.removesuffix("_total") in found and sample.name.endswith("_total"):
                found[sample.name.removesuffix("_total")] += sample.value
    return found["dragoman_sync_segments_translated"], found["dragoman_sync_segments_cached"]


async def translate(
    client: httpx.AsyncClient, *segments: str, headers: Any = None, **extra: Any
) -> list[str]:
    body = {"source_lang": "en", "target_lang": "es", "segments": list(segments), **extra}
    answer = await client.post("/v1/translate", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    translations: list[str] = answer.json()["translations"]
    return translations


async def test_a_text_seen_before_does_not_reach_the_engine(client: httpx.AsyncClient) -> None:
    first = await translate(client, *SEGMENTS)
    assert await counts(client) == (3, 0)
    again = await translate(client, SEGMENTS[2], "The cat sleeps on the sofa.", SEGMENTS[0])
    assert again[0] == first[2] and again[2] == first[0]
    assert await counts(client) == (4, 2)  # only the new one went to the engine


async def test_a_hit_is_what_apertium_gives_the_segment_alone(client: httpx.AsyncClient) -> None:
    await translate(client, *SEGMENTS)
    hits = await translate(client, *SEGMENTS)
    assert (await counts(client))[1] == 3
    assert [squash(s) for s in hits] == [squash(cli("eng-spa", s)) for s in SEGMENTS]


async def test_a_text_repeated_in_one_request_is_translated_once(
    client: httpx.AsyncClient,
) -> None:
    out = await translate(client, "The red car.", "The red car.", "The red car.")
    assert len(set(out)) == 1
    assert await counts(client) == (1, 0)


async def test_jobs_and_requests_share_their_entries(client: httpx.AsyncClient) -> None:
    said = await translate(client, SEGMENTS[0])
    answer = await client.post("/v1/jobs", json=job_body(SEGMENTS[0]))
    assert answer.json()["status"] == "succeeded"  # from the request's entry, at submission
    result = (await client.get(f"/v1/jobs/{answer.json()['id']}/result")).json()
    assert result["documents"][0]["origins"] == ["cache"]
    assert result["documents"][0]["segments"] == said

    job = (await client.post("/v1/jobs", json=job_body(SEGMENTS[1]))).json()
    await finished(client, job["id"])
    await translate(client, SEGMENTS[1])
    assert await counts(client) == (1, 1)  # the job's output answered the request


async def test_a_tenant_never_gets_another_tenants_entry(make_client: Any) -> None:
    client = await make_client(api_keys=KEYS)
    alpha, beta = {"Authorization": "Bearer key-a"}, {"Authorization": "Bearer key-b"}
    await translate(client, SEGMENTS[0], headers=alpha)
    await translate(client, SEGMENTS[0], headers=beta)
    assert await counts(client) == (2, 0)
    await translate(client, SEGMENTS[0], headers=alpha)
    assert await counts(client) == (2, 1)


async def test_the_cache_can_be_off_for_the_whole_server(make_client: Any) -> None:
    client = await make_client(cache=False)
    await translate(client, SEGMENTS[0])
    await translate(client, SEGMENTS[0])
    assert await counts(client) == (2, 0)


async def test_a_glossary_request_keeps_its_terms_and_leaves_plain_text_its_own(
    client: httpx.AsyncClient,
) -> None:
    made = await client.post(
        "/v1/glossaries",
        json={
            "name": "g",
            "source_lang": "en",
            "target_lang": "es",
            "entries": [{"source": "station", "target": "estación de tren"}],
        },
    )
    glossary = made.json()["id"]
    plain = await translate(client, SEGMENTS[1])
    with_terms = await translate(client, SEGMENTS[1], glossary=glossary)
    assert "estación de tren" in with_terms[0] and "estación de tren" not in plain[0]
    # The engine saw the term masked: another text, another entry.
    assert await counts(client) == (2, 0)
    assert await translate(client, SEGMENTS[1], glossary=glossary) == with_terms
    assert await translate(client, SEGMENTS[1]) == plain
    assert await counts(client) == (2, 2)


async def test_libretranslate_and_deepl_texts_go_through_the_cache(
    client: httpx.AsyncClient,
) -> None:
    lt = {"q": [SEGMENTS[0], SEGMENTS[1]], "source": "en", "target": "es"}
    first = (await client.post("/translate", json=lt)).json()["translatedText"]
    assert await counts(client) == (2, 0)
    deepl = {"text": [SEGMENTS[1], SEGMENTS[0]], "source_lang": "EN", "target_lang": "ES"}
    answer = await client.post(
        "/v2/translate", json=deepl, headers={"Authorization": "DeepL-Auth-Key any"}
    )
    assert [t["text"] for t in answer.json()["translations"]] == first[::-1]
    assert await translate(client, *SEGMENTS[:2]) == first
    assert await counts(client) == (2, 4)


async def test_html_texts_take_the_same_path_as_plain_ones(
    make_client: Any,
) -> None:
    """LibreTranslate's and DeepL's HTML: checked, charged, batched, counted and cached like
    plain texts (a marked segment has its own entry)."""
    client = await make_client(api_keys=KEYS)
    html = "<p>The dog <b>eats</b> the apple.</p>"
    lt = {"q": html, "source": "en", "target": "es", "format": "html", "api_key": "key-a"}
    first = await client.post("/translate", json=lt)
    assert first.status_code == 200, first.text
    assert await counts(client) == (1, 0)
    again = await client.post("/translate", json=lt)
    assert again.json() == first.json()
    assert await counts(client) == (1, 1)
    deepl = {"text": [html], "source_lang": "EN", "target_lang": "ES", "tag_handling": "html"}
    answer = await client.post(
        "/v2/translate", json=deepl, headers={"Authorization": "DeepL-Auth-Key key-a"}
    )
    assert answer.json()["translations"][0]["text"] == first.json()["translatedText"]
    assert await counts(client) == (1, 2)
    usage = await client.get("/v1/usage", headers={"Authorization": "Bearer key-a"})
    assert usage.json()["characters"] == 3 * len(html)


async def test_html_texts_are_checked_like_plain_ones(client: httpx.AsyncClient) -> None:
    bad = {"q": "<p>bell \x07 here</p>", "source": "en", "target": "es", "format": "html"}
    answer = await client.post("/translate", json=bad)
    assert answer.status_code == 400
    assert "U+0007" in answer.json()["error"]
