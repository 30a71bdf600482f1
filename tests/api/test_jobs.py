"""``/v1/jobs`` end to end in process, with the real Apertium engine."""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Any

import httpx

from tests.api.helpers import assert_error, finished, job_body

JOB_FIELDS = {
    "id",
    "status",
    "pool",
    "priority",
    "source_lang",
    "target_lang",
    "target_langs",
    "targets",
    "documents",
    "segments_total",
    "segments_done",
    "attempts",
    "created_at",
    "submitted_at",
    "started_at",
    "finished_at",
    "error",
    "review_below",
    "segments_to_review",
    "deadline",
    "eta_seconds",
    "at_risk",
}
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$")


async def test_a_job_is_accepted_with_202_a_location_and_the_job_shape(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/v1/jobs", json=job_body("Hello world.", "Good morning."))
    assert response.status_code == 202
    job = response.json()
    assert set(job) == JOB_FIELDS
    assert response.headers["location"] == f"/v1/jobs/{job['id']}"
    assert (job["status"], job["pool"], job["priority"]) == ("queued", "cpu", "normal")
    assert (job["documents"], job["segments_total"], job["segments_done"]) == (1, 2, 0)
    assert ISO_UTC.match(job["created_at"]) and job["finished_at"] is None


async def test_a_job_runs_to_its_translations(client: httpx.AsyncClient) -> None:
    body = {
        "source_lang": "eng",
        "target_lang": "spa",
        "documents": [
            {"name": "a.txt", "segments": ["Hello world.", "Good morning."]},
            {"name": "b.txt", "segments": ["The cat."]},
        ],
        "priority": "high",
    }
    job_id = (await client.post("/v1/jobs", json=body)).json()["id"]
    job = await finished(client, job_id)
    assert job["status"] == "succeeded" and job["segments_done"] == 3 and job["attempts"] == 1
    assert (job["source_lang"], job["target_lang"]) == ("en", "es")
    for stamp in ("submitted_at", "started_at", "finished_at"):
        assert ISO_UTC.match(job[stamp])
    result = (await client.get(f"/v1/jobs/{job_id}/result")).json()
    # What made each translation: Apertium, the pair's data as its version; it gives no
    # confidence, and no threshold was set.
    model = result["documents"][0]["models"][0]
    assert re.fullmatch(r"apertium-[0-9a-f]{16}", model)

    def made(count: int) -> dict[str, Any]:
        return {
            "engines": ["apertium"] * count,
            "models": [model] * count,
            "glossary_terms": [False] * count,
            "confidences": [None] * count,
            "review": None,
        }

    assert result == {
        "id": job_id,
        "status": "succeeded",
        "documents": [
            {
                "name": "a.txt",
                "source_lang": "en",
                "target_lang": "es",
                "segments": ["Hola Mundo.", "Buenos días."],
                "origins": ["mt", "mt"],
                **made(2),
            },
            {
                "name": "b.txt",
                "source_lang": "en",
                "target_lang": "es",
                "segments": ["El gato."],
                "origins": ["mt"],
                **made(1),
            },
        ],
    }
    assert (job["review_below"], job["segments_to_review"]) == (None, None)


async def test_results_of_a_queued_job_are_null(make_client: Any) -> None:
    client = await make_client(cpu_max_workers=1)
    first = (await client.post("/v1/jobs", json=job_body(*["Hello."] * 400))).json()
    second = (await client.post("/v1/jobs", json=job_body("One.", "Two."))).json()
    result = (await client.get(f"/v1/jobs/{second['id']}/result")).json()
    if result["status"] == "queued":
        assert result["documents"][0]["segments"] == [None, None]
    await finished(client, first["id"])
    await finished(client, second["id"])


async def test_listing_pages_through_jobs_newest_first(client: httpx.AsyncClient) -> None:
    ids = [
        (await client.post("/v1/jobs", json=job_body(f"Job {i}."))).json()["id"] for i in range(3)
    ]
    page = (await client.get("/v1/jobs", params={"limit": 2})).json()
    assert [job["id"] for job in page["jobs"]] == ids[::-1][:2]
    rest = (await client.get("/v1/jobs", params={"limit": 2, "cursor": page["next_cursor"]})).json()
    assert [job["id"] for job in rest["jobs"]] == ids[:1] and rest["next_cursor"] is None
    for job_id in ids:
        await finished(client, job_id)
    done = (await client.get("/v1/jobs", params={"status": "succeeded"})).json()
    assert len(done["jobs"]) == 3


async def test_job_ids_grow_in_the_order_jobs_are_submitted(client: httpx.AsyncClient) -> None:
    # Stored rows are keyed by job id: ids that grow keep inserts at the end of each index.
    ids = [
        (await client.post("/v1/jobs", json=job_body(f"Job {i}."))).json()["id"] for i in range(20)
    ]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-9a-f]{32}", job_id) for job_id in ids)
    assert {uuid.UUID(hex=job_id).version for job_id in ids} == {7}


async def test_cancelling_a_finished_job_is_a_conflict(client: httpx.AsyncClient) -> None:
    job_id = (await client.post("/v1/jobs", json=job_body("Hello."))).json()["id"]
    await finished(client, job_id)
    assert_error(await client.delete(f"/v1/jobs/{job_id}"), 409, "conflict")


async def test_cancelling_a_waiting_job_returns_it_cancelled(make_client: Any) -> None:
    client = await make_client(cpu_max_workers=1)
    blocker = (await client.post("/v1/jobs", json=job_body(*["A long day."] * 2000))).json()
    waiting = (await client.post("/v1/jobs", json=job_body("Never."))).json()
    response = await client.delete(f"/v1/jobs/{waiting['id']}")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    await client.delete(f"/v1/jobs/{blocker['id']}")
    job = await finished(client, waiting["id"])
    assert job["status"] == "cancelled" and job["attempts"] == 0


async def test_an_unknown_job_is_404(client: httpx.AsyncClient) -> None:
    for response in (
        await client.get("/v1/jobs/nope"),
        await client.get("/v1/jobs/nope/result"),
        await client.delete("/v1/jobs/nope"),
    ):
        assert_error(response, 404, "not_found")


async def test_a_job_asks_for_unknown_words_marked_or_gets_them_unmarked(
    client: httpx.AsyncClient,
) -> None:
    """The marked and the unmarked job share a batch and the cache, and neither gets the
    other's answer."""
    segments = ["The zorblax eats apples.", "The cat sleeps."]
    plain = await client.post("/v1/jobs", json=job_body(*segments))
    marked = await client.post("/v1/jobs", json=job_body(*segments, mark_unknown=True))
    assert plain.status_code == marked.status_code == 202, marked.text
    for answer in (plain, marked):
        await finished(client, answer.json()["id"])
    unmarked = (await client.get(f"/v1/jobs/{plain.json()['id']}/result")).json()
    with_marks = (await client.get(f"/v1/jobs/{marked.json()['id']}/result")).json()
    first, second = unmarked["documents"][0]["segments"], with_marks["documents"][0]["segments"]
    assert "zorblax" in first[0] and "*" not in first[0]
    assert "*zorblax" in second[0]
    assert first[1] == second[1]  # a known sentence is the same either way
    page = b"<p>The zorblax eats apples.</p>"
    data = {"source_lang": "en", "target_lang": "es", "mark_unknown": "true"}
    upload = await client.post("/v1/jobs", files={"files": ("a.html", page)}, data=data)
    assert upload.status_code == 202, upload.text
    await finished(client, upload.json()["id"])
    translated = await client.get(f"/v1/jobs/{upload.json()['id']}/files/0")
    assert "*zorblax" in translated.text


async def test_a_long_poll_answers_when_the_job_moves_and_a_finished_job_at_once(
    client: httpx.AsyncClient,
) -> None:
    accepted = (await client.post("/v1/jobs", json=job_body("Hello world."))).json()
    assert accepted["status"] == "queued"
    moved = await client.get(f"/v1/jobs/{accepted['id']}", params={"wait": 20})
    assert moved.status_code == 200
    job = moved.json()
    assert (job["status"], job["segments_done"]) != ("queued", 0)
    done = await finished(client, accepted["id"])
    response = await asyncio.wait_for(
        client.get(f"/v1/jobs/{accepted['id']}", params={"wait": 60}), 5
    )
    assert response.json() == done
    for wait in ("-1", "61", "soon"):
        response = await client.get(f"/v1/jobs/{accepted['id']}", params={"wait": wait})
        assert_error(response, 422, "invalid_request")
    missing = await client.get("/v1/jobs/nope", params={"wait": 1})
    assert_error(missing, 404, "not_found")
