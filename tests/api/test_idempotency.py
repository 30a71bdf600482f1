"""``Idempotency-Key``: a retried POST gets the first answer again and never creates twice,
for jobs (JSON and files), glossaries and memories; in process, with the real Apertium
engine over SQLite."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

import httpx
import pytest

from dragoman.api.v1.schemas import JobIn
from dragoman.glossaries.entries import from_json
from dragoman.idempotency import Claimed
from dragoman.models import Document
from dragoman.services import EmbeddedService
from tests.api.helpers import assert_error, finished, job_body
from tests.api.test_glossaries import glossary_body
from tests.conftest import stop_service

KEY = {"Idempotency-Key": "release-42/en-es"}


async def job_ids(client: httpx.AsyncClient, **headers: str) -> list[str]:
    listed = (await client.get("/v1/jobs", headers=headers)).json()
    return [job["id"] for job in listed["jobs"]]


async def test_a_retry_gets_the_first_answer_again_and_no_second_job(serve: Any) -> None:
    _, client = await serve()
    first = await client.post("/v1/jobs", json=job_body("Hello world."), headers=KEY)
    assert first.status_code == 202 and "idempotent-replayed" not in first.headers
    job_id = first.json()["id"]
    await finished(client, job_id)
    again = await client.post("/v1/jobs", json=job_body("Hello world."), headers=KEY)
    assert again.status_code == 202
    assert again.content == first.content  # the answer as it was, "queued" and all
    assert again.headers["location"] == f"/v1/jobs/{job_id}"
    assert again.headers["idempotent-replayed"] == "true"
    # The same JSON written another way is the same request.
    reordered = json.dumps(dict(reversed(list(job_body("Hello world.").items()))), indent=2)
    headers = {**KEY, "Content-Type": "application/json"}
    assert (await client.post("/v1/jobs", content=reordered, headers=headers)).content == (
        first.content
    )
    assert await job_ids(client) == [job_id]
    # Without a key, the same body is a new job.
    other = await client.post("/v1/jobs", json=job_body("Hello world."))
    assert other.json()["id"] != job_id


async def test_the_same_key_with_another_request_is_a_422_naming_the_key(serve: Any) -> None:
    _, client = await serve()
    assert (await client.post("/v1/jobs", json=job_body("Hello."), headers=KEY)).is_success
    response = await client.post("/v1/jobs", json=job_body("Goodbye."), headers=KEY)
    assert_error(response, 422, "idempotency_key_reused")
    assert KEY["Idempotency-Key"] in response.json()["error"]["message"]
    # Another path with the key is another request too.
    response = await client.post("/v1/glossaries", json=glossary_body(), headers=KEY)
    assert_error(response, 422, "idempotency_key_reused")
    assert len(await job_ids(client)) == 1


@pytest.mark.parametrize("key", [b"", b"x" * 256, "caf\u00e9".encode(), b"a\tb"])
async def test_a_malformed_key_is_a_422_and_creates_nothing(serve: Any, key: bytes) -> None:
    _, client = await serve()
    headers = {"Idempotency-Key": key}
    response = await client.post("/v1/jobs", json=job_body("Hello."), headers=headers)
    assert_error(response, 422, "invalid_request")
    assert "Idempotency-Key" in response.json()["error"]["message"]
    assert await job_ids(client) == []


async def test_duplicates_at_once_make_one_job_and_all_get_its_answer(serve: Any) -> None:
    _, client = await serve()
    body = job_body("The cat sleeps.", "Where is the station?")
    answers = await asyncio.gather(
        *(client.post("/v1/jobs", json=body, headers=KEY) for _ in range(10))
    )
    assert {response.status_code for response in answers} == {202}
    assert len({response.json()["id"] for response in answers}) == 1
    assert len(await job_ids(client)) == 1


async def test_keys_are_each_tenants_own(serve: Any) -> None:
    _, client = await serve(api_keys="acme:key-a,globex:key-g")
    acme = {**KEY, "Authorization": "Bearer key-a"}
    globex = {**KEY, "Authorization": "Bearer key-g"}
    first = await client.post("/v1/jobs", json=job_body("Hello."), headers=acme)
    second = await client.post("/v1/jobs", json=job_body("Goodbye."), headers=globex)
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] != second.json()["id"]
    # A key without a valid API key is refused as any request is.
    response = await client.post("/v1/jobs", json=job_body("Hello."), headers=KEY)
    assert_error(response, 401, "unauthorized")


async def test_a_file_job_retried_with_a_new_multipart_boundary_is_the_same_job(
    serve: Any,
) -> None:
    _, client = await serve()
    form = {"source_lang": "en", "target_lang": "es"}
    files = {"files": ("notes.txt", b"Hello world.\nThe cat sleeps.\n", "text/plain")}
    answers = [await client.post("/v1/jobs", data=form, files=files, headers=KEY) for _ in range(2)]
    assert [response.status_code for response in answers] == [202, 202]
    assert answers[0].json()["id"] == answers[1].json()["id"]
    assert len(await job_ids(client)) == 1


async def test_a_glossary_and_a_memory_are_created_once(serve: Any) -> None:
    _, client = await serve()
    created = [
        await client.post("/v1/glossaries", json=glossary_body(), headers=KEY) for _ in range(2)
    ]
    assert [response.status_code for response in created] == [201, 201]
    assert created[0].json()["id"] == created[1].json()["id"]
    assert len((await client.get("/v1/glossaries")).json()["glossaries"]) == 1
    tmx = (
        b'<?xml version="1.0"?><tmx version="1.4"><header srclang="en" datatype="plaintext" '
        b'segtype="sentence" adminlang="en" creationtool="t" creationtoolversion="1" '
        b'o-tmf="t"/><body><tu><tuv xml:lang="en"><seg>Hello.</seg></tuv>'
        b'<tuv xml:lang="es"><seg>Hola.</seg></tuv></tu></body></tmx>'
    )
    upload = {"file": ("product.tmx", tmx, "application/x-tmx+xml")}
    memory_key = {"Idempotency-Key": "memory-1"}
    made = [
        await client.post(
            "/v1/memories", data={"name": "product"}, files=upload, headers=memory_key
        )
        for _ in range(2)
    ]
    assert [response.status_code for response in made] == [201, 201], made[0].text
    assert made[0].content == made[1].content


async def test_a_retry_after_a_crash_between_storing_and_answering_gets_the_stored_job(
    serve: Any,
) -> None:
    """The first process stored the job and died before it answered: its key is claimed
    with no answer. A retry to another process gets that job, not a second one."""
    service, client = await serve(idempotency_wait_s=0.2)
    body = job_body("Hello world.")
    key = KEY["Idempotency-Key"]
    await crashed_after_storing(service, body, key)
    retry = await client.post("/v1/jobs", json=body, headers=KEY)
    assert retry.status_code == 202
    [job_id] = await job_ids(client)
    assert retry.json()["id"] == job_id
    assert retry.headers["location"] == f"/v1/jobs/{job_id}"
    assert retry.headers["idempotent-replayed"] == "true"
    # The same service restarted over the same database answers the same.
    await stop_service(service)
    _, restarted = await serve(idempotency_wait_s=0.2)
    again = await restarted.post("/v1/jobs", json=body, headers=KEY)
    assert (again.status_code, again.json()["id"]) == (202, job_id)
    assert await job_ids(restarted) == [job_id]


async def test_a_retry_after_the_glossary_was_deleted_gets_the_first_answer_again(
    serve: Any,
) -> None:
    """The first answer, as it was: a key does not create again because what it created
    has gone, and nothing is created by the retry."""
    _, client = await serve()
    first = await client.post("/v1/glossaries", json=glossary_body(), headers=KEY)
    glossary_id = first.json()["id"]
    assert (await client.delete(f"/v1/glossaries/{glossary_id}")).status_code == 204
    again = await client.post("/v1/glossaries", json=glossary_body(), headers=KEY)
    assert (again.status_code, again.json(), again.headers["Location"]) == (
        201,
        first.json(),
        first.headers["Location"],
    )
    assert again.headers["Idempotent-Replayed"] == "true"
    assert (await client.get(f"/v1/glossaries/{glossary_id}")).status_code == 404
    assert (await client.get("/v1/glossaries")).json()["glossaries"] == []


async def test_a_glossary_stored_by_a_request_that_died_is_the_retrys_answer(
    serve: Any,
) -> None:
    """As for jobs: the glossary keeps the key it was created with, so a retry after a
    crash between storing and answering gets it, never a second glossary."""
    service, client = await serve(idempotency_wait_s=0.2)
    body, key = glossary_body(), "glossary-7"
    held = await service.idempotency.begin(None, key, fingerprint_of(body, "/v1/glossaries"))
    assert isinstance(held, Claimed)
    pair = service.terminology.pair_of(body["source_lang"], body["target_lang"])
    rows = from_json((entry["source"], entry["target"]) for entry in body["entries"])
    stored = await service.terminology.create(
        tenant=None, name=body["name"], dictionaries=[(pair, rows)], idempotency_key=key
    )
    retry = await client.post("/v1/glossaries", json=body, headers={"Idempotency-Key": key})
    assert retry.status_code == 201, retry.text
    assert retry.json()["id"] == stored.id
    assert retry.headers["location"] == f"/v1/glossaries/{stored.id}"
    assert retry.headers["idempotent-replayed"] == "true"
    shown = (await client.get(f"/v1/glossaries/{stored.id}")).json()
    assert retry.json() == {name: value for name, value in shown.items() if name != "entries"}
    listed = (await client.get("/v1/glossaries")).json()["glossaries"]
    assert [glossary["id"] for glossary in listed] == [stored.id]


async def test_a_first_request_that_died_before_storing_is_run_again_after_its_lease(
    serve: Any,
) -> None:
    service, client = await serve(idempotency_wait_s=0.2, idempotency_lease_s=0.5)
    body = job_body("Hello world.")
    held = await service.idempotency.begin(None, KEY["Idempotency-Key"], fingerprint_of(body))
    assert isinstance(held, Claimed)
    # Within the lease the first request may still answer: the retry waits, then 409.
    response = await client.post("/v1/jobs", json=body, headers=KEY)
    assert_error(response, 409, "idempotency_key_in_use")
    assert await job_ids(client) == []
    await asyncio.sleep(0.5)
    retry = await client.post("/v1/jobs", json=body, headers=KEY)
    assert retry.status_code == 202 and "idempotent-replayed" not in retry.headers
    assert await job_ids(client) == [retry.json()["id"]]


async def test_a_failed_request_leaves_its_key_free_for_the_retry(serve: Any) -> None:
    """An answer that a retry may get otherwise (here a 429) is not kept."""
    _, client = await serve(requests_per_minute=1)
    assert (await client.post("/v1/jobs", json=job_body("Hello."))).is_success
    limited = await client.post("/v1/jobs", json=job_body("Hello."), headers=KEY)
    assert_error(limited, 429, "rate_limited")
    again = await client.post("/v1/jobs", json=job_body("Hello."), headers=KEY)
    assert again.status_code == 429 and "idempotent-replayed" not in again.headers


def fingerprint_of(body: dict[str, Any], path: str = "/v1/jobs") -> str:
    from dragoman.api.idempotency import fingerprint

    scope = {
        "method": "POST",
        "path": path,
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
    }
    return fingerprint(scope, json.dumps(body).encode())


async def crashed_after_storing(service: EmbeddedService, body: dict[str, Any], key: str) -> None:
    """What a process leaves that stored a job with ``key`` and died before it answered."""
    held = await service.idempotency.begin(None, key, fingerprint_of(body))
    assert isinstance(held, Claimed)
    request = JobIn.model_validate(body)
    documents = [Document(doc.name, doc.segments) for doc in request.documents]
    options = replace(request.options(), idempotency_key=key)
    await service.manager.submit(None, request.pair(), documents, options)
