"""``/v1/memories`` over the real service: bad files and fields first, then what a memory
does to a job (``tm`` ahead of the cache and the engine), per tenant."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.helpers import assert_error, finished, job_body
from tests.reuse.tmx_samples import BROKEN, bilingual, tmx, tu

KEYS = "alpha:key-a,beta:key-b"
A = {"Authorization": "Bearer key-a"}
B = {"Authorization": "Bearer key-b"}


async def upload(
    client: httpx.AsyncClient, name: str, data: bytes, **headers: str
) -> httpx.Response:
    return await client.post(
        "/v1/memories",
        data={"name": name},
        files={"file": ("memory.tmx", data, "application/x-tmx+xml")},
        headers=headers,
    )


async def result(client: httpx.AsyncClient, job_id: str, **headers: str) -> dict[str, Any]:
    """The job's one document; a tenant's job (``headers``) must have finished already."""
    if not headers:
        await finished(client, job_id)
    body: dict[str, Any] = (await client.get(f"/v1/jobs/{job_id}/result", headers=headers)).json()
    return body["documents"][0]


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BROKEN))
async def test_a_broken_tmx_is_a_422_naming_the_file_and_the_fault(
    client: httpx.AsyncClient, name: str
) -> None:
    data, says = BROKEN[name]
    response = await upload(client, "product", data)
    assert_error(response, 422, "invalid_file")
    assert response.json()["error"]["message"].startswith("memory.tmx: ")
    assert says in response.json()["error"]["message"]
    assert (await client.get("/v1/memories")).json() == {"memories": []}


async def test_a_tmx_over_the_file_limit_is_a_413(make_client: Any) -> None:
    client = await make_client(max_file_bytes=1024)
    big = bilingual(*[(f"Sentence number {i}.", f"Frase número {i}.") for i in range(40)])
    assert len(big) > 1024
    assert_error(await upload(client, "big", big), 413, "payload_too_large")


@pytest.mark.parametrize(
    ("fields", "files", "says"),
    [
        ({}, {"file": ("m.tmx", b"<tmx/>")}, "name"),
        ({"name": "m"}, {}, "file"),
        ({"name": "-bad name-"}, {"file": ("m.tmx", b"<tmx/>")}, "name"),
        ({"name": "m", "file": "not a file"}, {}, "file"),
        ({"name": "m"}, {"file": ("m.tmx", b"")}, "empty"),
    ],
)
async def test_missing_or_bad_fields_are_a_422(
    client: httpx.AsyncClient, fields: dict[str, str], files: dict[str, Any], says: str
) -> None:
    response = await client.post("/v1/memories", data=fields, files=files or None)
    assert_error(response, 422, "invalid_request")
    assert says in response.json()["error"]["message"]


async def test_deleting_an_unknown_memory_is_a_404(client: httpx.AsyncClient) -> None:
    assert_error(await client.delete("/v1/memories/nothing"), 404, "not_found")


async def test_a_job_naming_an_unknown_memory_is_a_404_naming_it(client: httpx.AsyncClient) -> None:
    assert (await upload(client, "known", bilingual(("Yes", "Sí")))).status_code == 201
    response = await client.post("/v1/jobs", json=job_body("Yes", memories=["known", "ghost"]))
    assert_error(response, 404, "not_found")
    assert "'ghost'" in response.json()["error"]["message"]
    assert "'known'" not in response.json()["error"]["message"]
    files = await client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "es", "memories": "ghost"},
        files={"files": ("a.txt", b"Yes\n")},
    )
    assert_error(files, 404, "not_found")
    assert "'ghost'" in files.json()["error"]["message"]


# -- memories and jobs ----------------------------------------------------------------------


async def test_import_list_replace_delete(client: httpx.AsyncClient) -> None:
    first = await upload(client, "product", bilingual(("Save", "Guardar"), ("Open", "Abrir")))
    assert first.status_code == 201, first.text
    assert first.json() | {"created_at": None, "updated_at": None} == {
        "name": "product",
        "units": 2,
        "languages": ["en", "es"],
        "source_lang": "en",
        "replaced": False,
        "skipped": 0,
        "created_at": None,
        "updated_at": None,
    }
    untranslated = tu(("en-US", "Print"))  # a unit exported before anyone translated it
    again = await upload(
        client, "product", tmx(tu(("en-US", "Close"), ("es-ES", "Cerrar")) + untranslated)
    )
    assert again.status_code == 201, again.text
    assert (again.json()["replaced"], again.json()["units"], again.json()["skipped"]) == (
        True,
        1,
        1,
    )
    listed = (await client.get("/v1/memories")).json()["memories"]
    assert [(m["name"], m["units"]) for m in listed] == [("product", 1)]
    job = (await client.post("/v1/jobs", json=job_body("Save", memories=["product"]))).json()
    assert (await result(client, job["id"]))["origins"] == ["mt"]  # replaced: Save is gone
    assert (await client.delete("/v1/memories/product")).status_code == 204
    assert (await client.get("/v1/memories")).json() == {"memories": []}


async def test_a_job_takes_exact_matches_of_its_memories_first_listed_wins(
    client: httpx.AsyncClient,
) -> None:
    general = bilingual(("The dog eats.", "GENERAL"), ("Good morning.", "Buenos días."))
    product = tmx(
        tu(("EN_gb", "The  dog\n eats."), ("es-MX", "El perro come (memoria).")), srclang="en-GB"
    )
    assert (await upload(client, "general", general)).status_code == 201
    assert (await upload(client, "product", product)).status_code == 201
    body = job_body(
        "  The dog eats. ", "Good morning.", "The cat sleeps.", memories=["product", "general"]
    )
    response = await client.post("/v1/jobs", json=body)
    assert response.status_code == 202
    assert response.json()["segments_done"] == 2
    doc = await result(client, response.json()["id"])
    assert doc["origins"] == ["tm", "tm", "mt"]
    assert doc["segments"][:2] == ["  El perro come (memoria). ", "Buenos días."]


async def test_a_memory_match_wins_over_the_cache(client: httpx.AsyncClient) -> None:
    first = (await client.post("/v1/jobs", json=job_body("The house is big."))).json()
    await finished(client, first["id"])
    assert (
        await upload(client, "m", bilingual(("The house is big.", "REVISADA")))
    ).status_code == 201
    again = await client.post("/v1/jobs", json=job_body("The house is big.", memories=["m"]))
    assert again.json()["status"] == "succeeded"
    doc = await result(client, again.json()["id"])
    assert (doc["segments"], doc["origins"]) == (["REVISADA"], ["tm"])


async def test_a_unit_with_inline_codes_does_not_match_plain_text(
    client: httpx.AsyncClient,
) -> None:
    coded = tmx(tu(("en", 'Click <ph x="1"/>here'), ("es", 'Clic <ph x="1"/>aquí')))
    assert (await upload(client, "ui", coded)).status_code == 201
    job = (await client.post("/v1/jobs", json=job_body("Click here", memories=["ui"]))).json()
    assert (await result(client, job["id"]))["origins"] == ["mt"]


async def test_memories_are_the_tenants_own(make_client: Any) -> None:
    client = await make_client(api_keys=KEYS)
    assert (await upload(client, "shared-name", bilingual(("Yes", "A")), **A)).status_code == 201
    assert (await client.get("/v1/memories", headers=B)).json() == {"memories": []}
    assert_error(await client.delete("/v1/memories/shared-name", headers=B), 404, "not_found")
    refused = await client.post(
        "/v1/jobs", json=job_body("Yes", memories=["shared-name"]), headers=B
    )
    assert_error(refused, 404, "not_found")
    assert (await upload(client, "shared-name", bilingual(("Yes", "B")), **B)).status_code == 201
    for headers, expected in ((A, "A"), (B, "B")):
        job = await client.post(
            "/v1/jobs", json=job_body("Yes", memories=["shared-name"]), headers=headers
        )
        assert job.json()["status"] == "succeeded"
        doc = await result(client, job.json()["id"], **headers)
        assert doc["segments"] == [expected]
