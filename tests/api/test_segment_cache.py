"""The segment cache over the real service and Apertium: a repeated job is stored finished
and never dispatched, partial hits, what must miss, and a hit is what ``apertium`` gives
the segment alone."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.api.helpers import finished, job_body
from tests.integration.conftest import cli, squash

SEGMENTS = ["The dog eats the apple.", "Where is the station?", "I like green tea."]
KEYS = "alpha:key-a,beta:key-b"


async def run(client: httpx.AsyncClient, *segments: str, **extra: Any) -> dict[str, Any]:
    """Submits a job, waits for it; the submission's answer and the document's result."""
    headers = extra.pop("headers", None)
    answer = await client.post("/v1/jobs", json=job_body(*segments, **extra), headers=headers)
    assert answer.status_code == 202, answer.text
    job: dict[str, Any] = answer.json()
    if headers is None:
        await finished(client, job["id"])
    else:
        assert job["status"] == "succeeded" or await _wait(client, job["id"], headers)
    got = await client.get(f"/v1/jobs/{job['id']}/result", headers=headers)
    return {"submitted": job, **got.json()["documents"][0]}


async def _wait(client: httpx.AsyncClient, job_id: str, headers: dict[str, str]) -> bool:
    for _ in range(600):
        status = (await client.get(f"/v1/jobs/{job_id}", headers=headers)).json()["status"]
        if status == "succeeded":
            return True
        await asyncio.sleep(0.05)
    return False


async def test_the_same_job_again_is_stored_succeeded_and_never_dispatched(
    client: httpx.AsyncClient,
) -> None:
    first = await run(client, *SEGMENTS)
    assert first["origins"] == ["mt", "mt", "mt"]
    again = await run(client, *SEGMENTS)
    submitted = again["submitted"]
    assert submitted["status"] == "succeeded"
    assert submitted["segments_done"] == submitted["segments_total"] == 3
    assert submitted["attempts"] == 0 and submitted["submitted_at"] is None
    assert submitted["finished_at"] == submitted["created_at"]
    assert again["origins"] == ["cache", "cache", "cache"]
    assert again["segments"] == first["segments"]


async def test_a_hit_is_what_apertium_gives_the_segment_alone(client: httpx.AsyncClient) -> None:
    await run(client, *SEGMENTS)
    again = await run(client, *SEGMENTS)
    assert again["origins"] == ["cache"] * 3
    assert [squash(s) for s in again["segments"]] == [squash(cli("eng-spa", s)) for s in SEGMENTS]


async def test_partial_hits_send_only_the_rest_to_the_engine(client: httpx.AsyncClient) -> None:
    await run(client, SEGMENTS[0], SEGMENTS[2])
    mixed = await run(client, SEGMENTS[0], "The cat sleeps on the sofa.", SEGMENTS[2])
    assert mixed["submitted"]["status"] == "queued"
    assert mixed["submitted"]["segments_done"] == 2
    assert mixed["origins"] == ["cache", "mt", "cache"]
    assert None not in mixed["segments"]


async def test_a_segment_repeated_in_a_new_job_is_translated_the_same(
    client: httpx.AsyncClient,
) -> None:
    doc = await run(client, "The red car.", "The red car.", "The red car.")
    assert doc["origins"] == ["mt", "mt", "mt"]
    assert len(set(doc["segments"])) == 1
    assert (await run(client, "The red car."))["origins"] == ["cache"]


async def test_cache_false_neither_reads_nor_feeds_the_cache(client: httpx.AsyncClient) -> None:
    await run(client, SEGMENTS[0])
    off = await run(client, SEGMENTS[0], SEGMENTS[1], cache=False)
    assert off["origins"] == ["mt", "mt"]
    assert off["submitted"]["status"] == "queued"
    assert (await run(client, SEGMENTS[1]))["origins"] == ["mt"]  # the cache:false job fed nothing


async def test_the_cache_can_be_off_for_the_whole_server(make_client: Any) -> None:
    client = await make_client(cache=False)
    await run(client, SEGMENTS[0])
    assert (await run(client, SEGMENTS[0]))["origins"] == ["mt"]


async def test_a_tenant_never_gets_another_tenants_entry(make_client: Any) -> None:
    client = await make_client(api_keys=KEYS)
    alpha, beta = {"Authorization": "Bearer key-a"}, {"Authorization": "Bearer key-b"}
    await run(client, SEGMENTS[0], headers=alpha)
    assert (await run(client, SEGMENTS[0], headers=beta))["origins"] == ["mt"]
    assert (await run(client, SEGMENTS[0], headers=alpha))["origins"] == ["cache"]


async def test_file_jobs_and_plain_jobs_do_not_share_entries(client: httpx.AsyncClient) -> None:
    async def file_job() -> list[str]:
        answer = await client.post(
            "/v1/jobs",
            data={"source_lang": "en", "target_lang": "es"},
            files={"files": ("a.txt", b"Where is the station?\n")},
        )
        await finished(client, answer.json()["id"])
        got = await client.get(f"/v1/jobs/{answer.json()['id']}/result")
        origins: list[str] = got.json()["documents"][0]["origins"]
        return origins

    await run(client, "Where is the station?")
    assert await file_job() == ["mt"]
    assert await file_job() == ["cache"]


async def test_shards_found_whole_are_stored_succeeded(make_client: Any) -> None:
    client = await make_client(shard_segments=2)
    await run(client, SEGMENTS[0], SEGMENTS[1])
    partly = await run(client, SEGMENTS[0], SEGMENTS[1], SEGMENTS[2], "The cat sleeps.")
    assert partly["submitted"]["status"] == "queued"
    assert partly["origins"] == ["cache", "cache", "mt", "mt"]
    whole = await run(client, SEGMENTS[2], "The cat sleeps.", SEGMENTS[0], SEGMENTS[1])
    assert whole["submitted"]["status"] == "succeeded"
    assert whole["origins"] == ["cache"] * 4


async def glossary(client: httpx.AsyncClient, target: str) -> str:
    body = {
        "name": f"dog as {target}",
        "source_lang": "en",
        "target_lang": "es",
        "entries": [{"source": "dog", "target": target}],
    }
    made = await client.post("/v1/glossaries", json=body)
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


async def test_a_glossary_jobs_output_never_serves_another_glossary_or_none(
    client: httpx.AsyncClient,
) -> None:
    text = "The dog eats the apple."
    first = await glossary(client, "chucho")
    with_first = await run(client, text, glossary=first)
    assert with_first["origins"] == ["mt"] and "chucho" in with_first["segments"][0]
    plain = await run(client, text)
    assert plain["origins"] == ["mt"]
    assert squash(plain["segments"][0]) == squash(cli("eng-spa", text))
    with_second = await run(client, text, glossary=await glossary(client, "perrito"))
    assert with_second["origins"] == ["mt"] and "perrito" in with_second["segments"][0]
    again = await run(client, text, glossary=first)
    assert again["origins"] == ["cache"] and again["segments"] == with_first["segments"]


async def test_an_auto_job_reuses_by_the_language_detected(client: httpx.AsyncClient) -> None:
    english = "The dog eats the apple in the garden."
    first = await run(client, english, source_lang="auto")
    assert first["source_lang"] == "en" and first["origins"] == ["mt"]
    again = await run(client, english)  # the same segment, en named this time
    assert again["origins"] == ["cache"] and again["segments"] == first["segments"]
    french = await run(client, "Le chien mange la pomme dans le jardin.", source_lang="auto")
    assert french["source_lang"] == "fr" and french["origins"] == ["mt"]
