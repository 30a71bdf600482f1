"""``/v1/glossaries`` over HTTP, in process with the real Apertium engine: every mistake a
4xx naming it, tenants apart, and the terms kept by jobs, files and ``/v1/translate``."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.helpers import assert_error, finished, job_body

TERMS = [
    {"source": "server", "target": "servidor de aplicaciones"},
    {"source": "Dragoman", "target": "Dragoman"},
]
KEYS = "acme:key-a,globex:key-g"


def glossary_body(entries: list[dict[str, str]] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "product",
        "source_lang": "en",
        "target_lang": "es",
        "entries": TERMS if entries is None else entries,
    }
    body.update(extra)
    return body


async def created(client: httpx.AsyncClient, **headers: str) -> dict[str, Any]:
    response = await client.post("/v1/glossaries", json=glossary_body(), headers=headers)
    assert response.status_code == 201, response.text
    found: dict[str, Any] = response.json()
    return found


def upload(filename: str, content: bytes, **fields: str) -> dict[str, Any]:
    data = {"name": "terms", "source_lang": "en", "target_lang": "es", **fields}
    return {"data": data, "files": [("file", (filename, content))]}


@pytest.mark.parametrize(
    ("body", "status", "code", "says"),
    [
        (glossary_body([]), 422, "invalid_request", "at least one entry"),
        (
            glossary_body([{"source": "cat", "target": "gato"}, {"source": "cat", "target": "x"}]),
            422,
            "invalid_request",
            "entries[1]: the source term 'cat' duplicates entries[0]",
        ),
        (glossary_body([{"source": "a\tb", "target": "c"}]), 422, "invalid_request", "U+0009"),
        (glossary_body([{"source": "a", "target": "b\x07"}]), 422, "invalid_request", "U+0007"),
        (glossary_body([{"source": "", "target": "b"}]), 422, "invalid_request", "empty"),
        (glossary_body([{"source": "a", "target": "b", "note": "x"}]), 422, "invalid_request", ""),
        (glossary_body(colour="red"), 422, "invalid_request", "colour"),
        (glossary_body(entries=None, name=" "), 422, "invalid_request", "name"),
        (glossary_body(target_lang="de"), 422, "unsupported_language_pair", "en-de"),
        (glossary_body(source_lang="x1"), 422, "invalid_request", "x1"),
        (glossary_body([{"source": "a" * 30, "target": "b"}]), 422, "invalid_request", "bytes"),
        (glossary_body([{"source": f"t{i}", "target": "x"} for i in range(6)]), 413, "", "5"),
        ({"name": "n", "source_lang": "en"}, 422, "invalid_request", "target_lang"),
    ],
)
async def test_bad_glossaries_are_refused(
    make_client: Any, body: dict[str, Any], status: int, code: str, says: str
) -> None:
    client = await make_client(glossary_max_entries=5, glossary_max_term_bytes=20)
    response = await client.post("/v1/glossaries", json=body)
    assert_error(response, status, code or "payload_too_large")
    assert says in response.json()["error"]["message"]
    assert (await client.get("/v1/glossaries")).json() == {"glossaries": []}


@pytest.mark.parametrize(
    ("name", "content", "fields", "status", "says"),
    [
        ("t.csv", b'a,b\n"open,b\n', {}, 422, "not valid CSV"),
        ("t.tsv", b"a\tb\nc\td\te\n", {}, 422, "line 2"),
        ("t.csv", b"a,b,en,fr\n", {}, 422, "en-fr"),
        ("t.xlsx", b"a,b\n", {}, 415, "tsv or csv"),
        ("t.txt", b"a\tb\n", {"format": "json"}, 415, "tsv or csv"),
        ("t.tsv", b"a\tb\n", {"colour": "red"}, 422, "unknown form fields: colour"),
        ("t.tsv", b"a\tcaf\xe9", {}, 400, "not valid UTF-8"),
        ("t.tsv", b"a\tb\n" * 600, {}, 413, "limit"),
    ],
)
async def test_bad_uploads_are_refused(
    make_client: Any, name: str, content: bytes, fields: dict[str, str], status: int, says: str
) -> None:
    client = await make_client(glossary_max_file_bytes=2048)
    response = await client.post("/v1/glossaries", **upload(name, content, **fields))
    assert response.status_code == status, response.text
    assert says in response.json()["error"]["message"]


async def test_an_upload_without_a_file_or_a_name_is_refused(client: httpx.AsyncClient) -> None:
    no_file = await client.post("/v1/glossaries", data={"name": "n", "source_lang": "en"})
    assert_error(no_file, 422, "invalid_request")
    no_name = await client.post("/v1/glossaries", **upload("t.tsv", b"a\tb\n", name=""))
    assert_error(no_name, 422, "invalid_request")
    assert "name" in no_name.json()["error"]["message"]


async def test_create_list_read_delete(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/glossaries", json=glossary_body())
    assert response.status_code == 201
    made = response.json()
    assert set(made) == {"id", "name", "source_lang", "target_lang", "entry_count", "created_at"}
    assert (made["name"], made["source_lang"], made["target_lang"]) == ("product", "en", "es")
    assert made["entry_count"] == 2
    assert response.headers["location"] == f"/v1/glossaries/{made['id']}"
    assert (await client.get("/v1/glossaries")).json() == {"glossaries": [made]}
    one = (await client.get(f"/v1/glossaries/{made['id']}")).json()
    assert one == {**made, "entries": TERMS}
    deleted = await client.delete(f"/v1/glossaries/{made['id']}")
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert_error(await client.get(f"/v1/glossaries/{made['id']}"), 404, "not_found")
    assert_error(await client.delete(f"/v1/glossaries/{made['id']}"), 404, "not_found")
    assert (await client.get("/v1/glossaries")).json() == {"glossaries": []}


async def test_a_csv_or_tsv_upload_makes_the_same_glossary(client: httpx.AsyncClient) -> None:
    tsv = await client.post("/v1/glossaries", **upload("t.tsv", b"server\tservidor\nAPI\tAPI\n"))
    csv = await client.post(
        "/v1/glossaries", **upload("t.txt", b"server,servidor\nAPI,API\n", format="csv")
    )
    for response in (tsv, csv):
        assert response.status_code == 201, response.text
        entries = (await client.get(f"/v1/glossaries/{response.json()['id']}")).json()["entries"]
        assert entries == [
            {"source": "server", "target": "servidor"},
            {"source": "API", "target": "API"},
        ]


async def test_the_number_of_glossaries_is_bounded(make_client: Any) -> None:
    client = await make_client(glossaries_per_tenant=1)
    await created(client)
    assert_error(await client.post("/v1/glossaries", json=glossary_body()), 409, "conflict")


async def test_tenants_see_only_their_own_glossaries(make_client: Any) -> None:
    client = await make_client(api_keys=KEYS)
    acme = {"Authorization": "Bearer key-a"}
    globex = {"Authorization": "Bearer key-g"}
    mine = await created(client, **acme)
    assert (await client.get("/v1/glossaries", headers=globex)).json() == {"glossaries": []}
    for call in (client.get, client.delete):
        assert_error(await call(f"/v1/glossaries/{mine['id']}", headers=globex), 404, "not_found")
    job = await client.post("/v1/jobs", json=job_body("Hi.", glossary=mine["id"]), headers=globex)
    assert_error(job, 404, "not_found")
    assert mine["id"] in job.json()["error"]["message"]
    translate = {"source_lang": "en", "target_lang": "es", "segments": ["Hi."]}
    sync = await client.post(
        "/v1/translate", json={**translate, "glossary": mine["id"]}, headers=globex
    )
    assert_error(sync, 404, "not_found")
    assert (await client.get(f"/v1/glossaries/{mine['id']}", headers=acme)).status_code == 200


async def test_a_job_naming_a_glossary_that_does_not_fit_is_refused(
    client: httpx.AsyncClient,
) -> None:
    made = await created(client)
    for body, status, code, says in (
        (
            job_body("Hi.", glossary="no-such-glossary"),
            404,
            "not_found",
            "'no-such-glossary' is not one of",
        ),
        (
            {**job_body("Hi.", glossary=made["id"]), "target_lang": "ca"},
            422,
            "invalid_request",
            "for en-es, not en-ca",
        ),
        (
            {**job_body("Hola.", glossary=made["id"]), "source_lang": "es", "target_lang": "en"},
            422,
            "invalid_request",
            "en-es",
        ),
    ):
        response = await client.post("/v1/jobs", json=body)
        assert_error(response, status, code)
        assert says in response.json()["error"]["message"]
    files = await client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "ca", "glossary": made["id"]},
        files=[("files", ("a.txt", b"Hello."))],
    )
    assert_error(files, 422, "invalid_request")
    assert made["id"] in files.json()["error"]["message"]
    assert (await client.get("/v1/jobs")).json()["jobs"] == []


SENTENCES = ["The server is down.", "Server restarts are slow.", "Open Dragoman on the server."]
KEPT = [
    "El servidor de aplicaciones es abajo.",
    "Servidor de aplicaciones Retoma es lento.",
    "Abierto Dragoman en el servidor de aplicaciones.",
]


async def test_translate_keeps_the_terms(client: httpx.AsyncClient) -> None:
    made = await created(client)
    body = {"source_lang": "en", "target_lang": "es", "segments": SENTENCES}
    plain = (await client.post("/v1/translate", json=body)).json()["translations"]
    kept = (await client.post("/v1/translate", json={**body, "glossary": made["id"]})).json()
    assert kept["translations"] == KEPT
    assert plain[0] == "El servidor es abajo."  # what the engine says without a glossary
    auto = {**body, "source_lang": "auto", "glossary": made["id"]}
    assert (await client.post("/v1/translate", json=auto)).json()["translations"] == KEPT


async def test_a_job_and_a_file_job_keep_the_terms(client: httpx.AsyncClient) -> None:
    made = await created(client)
    job = (await client.post("/v1/jobs", json=job_body(*SENTENCES, glossary=made["id"]))).json()
    assert (await finished(client, job["id"]))["status"] == "succeeded"
    result = (await client.get(f"/v1/jobs/{job['id']}/result")).json()
    assert result["documents"][0]["segments"] == KEPT
    html = b"<p>The <b>server</b> is down.</p><p>Restart the <i>Dragoman server</i>.</p>"
    response = await client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "es", "glossary": made["id"]},
        files=[("files", ("page.html", html))],
    )
    assert response.status_code == 202, response.text
    assert (await finished(client, response.json()["id"]))["status"] == "succeeded"
    page = (await client.get(f"/v1/jobs/{response.json()['id']}/files/0")).text
    assert "<b>servidor de aplicaciones</b>" in page
    assert "<i>" in page and "Dragoman servidor de aplicaciones" in page


async def test_a_deleted_glossary_still_serves_the_jobs_that_named_it(
    client: httpx.AsyncClient,
) -> None:
    made = await created(client)
    job = (await client.post("/v1/jobs", json=job_body(*SENTENCES, glossary=made["id"]))).json()
    assert (await client.delete(f"/v1/glossaries/{made['id']}")).status_code == 204
    assert (await finished(client, job["id"]))["status"] == "succeeded"
    result = (await client.get(f"/v1/jobs/{job['id']}/result")).json()
    assert result["documents"][0]["segments"] == KEPT
    again = await client.post("/v1/jobs", json=job_body("Hi.", glossary=made["id"]))
    assert_error(again, 404, "not_found")


async def test_with_auto_the_glossary_serves_the_documents_in_its_language(
    client: httpx.AsyncClient,
) -> None:
    made = await created(client)
    french = "Le serveur est en panne depuis ce matin."
    body = {
        "source_lang": "auto",
        "target_lang": "es",
        "glossary": made["id"],
        "documents": [
            {"name": "en.txt", "segments": [SENTENCES[0]]},
            {"name": "fr.txt", "segments": [french]},
        ],
    }
    plain = {"source_lang": "fr", "target_lang": "es", "segments": [french]}
    expected = (await client.post("/v1/translate", json=plain)).json()["translations"]
    for documents in (body["documents"], body["documents"][1:]):  # mixed, then French alone
        job = (await client.post("/v1/jobs", json={**body, "documents": documents})).json()
        assert (await finished(client, job["id"]))["status"] == "succeeded", job
        result = (await client.get(f"/v1/jobs/{job['id']}/result")).json()["documents"]
        found = {doc["name"]: (doc["source_lang"], doc["segments"]) for doc in result}
        assert found["fr.txt"] == ("fr", expected)
        if "en.txt" in found:
            assert found["en.txt"] == ("en", KEPT[:1])
