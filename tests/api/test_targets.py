"""One job into several languages (``target_langs``): a result per target, files per
target and as one zip, each target's progress, each target's pairs run as their own work,
over the real Apertium pairs (en→es and en→ca direct, en→fr through es)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dragoman.api.app import create_app
from dragoman.engines import Engines
from dragoman.models import Pair
from dragoman.services import EmbeddedService
from tests.api.helpers import assert_error, finished
from tests.conftest import ScriptedEngine, stop_service

TARGETS = ["es", "ca", "fr"]
DOCUMENTS = [
    {"name": "a.txt", "segments": ["Hello world.", "The cat sleeps."]},
    {"name": "b.txt", "segments": ["Good morning."]},
]


def several(**extra: Any) -> dict[str, Any]:
    return {"source_lang": "en", "target_langs": TARGETS, "documents": DOCUMENTS, **extra}


async def alone(client: httpx.AsyncClient, target: str, segments: list[str]) -> list[str]:
    """Each segment translated alone, through ``/v1/translate``."""
    body = {"source_lang": "en", "target_lang": target, "segments": segments}
    response = await client.post("/v1/translate", json=body)
    assert response.status_code == 200, response.text
    translations: list[str] = response.json()["translations"]
    return translations


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"source_lang": "en", "documents": DOCUMENTS}, "target_lang or target_langs"),
        (several(target_langs=[]), "target_langs"),
        (several(target_langs=["es", "x1"]), "target_langs"),
        (several(target_langs=["es"] * 33), "target_langs"),
        (several(target_langs="es,fr"), "target_langs"),
    ],
)
async def test_bad_target_lists_are_refused_naming_the_field(
    client: httpx.AsyncClient, body: dict[str, Any], says: str
) -> None:
    response = await client.post("/v1/jobs", json=body)
    assert_error(response, 422, "invalid_request")
    assert says in response.json()["error"]["message"]


async def test_a_target_with_no_route_refuses_the_whole_job(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/jobs", json=several(target_langs=["es", "de"]))
    assert_error(response, 422, "unsupported_language_pair")
    assert "en-de" in response.json()["error"]["message"]
    listed = (await client.get("/v1/jobs")).json()["jobs"]
    assert listed == []  # nothing stored, nothing charged
    assert (await client.get("/v1/usage")).json()["characters"] == 0


async def test_one_job_into_three_languages_has_a_result_per_target(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/v1/jobs", json=several())
    assert response.status_code == 202, response.text
    job = response.json()
    assert (job["target_lang"], job["target_langs"]) == ("es", TARGETS)
    assert job["segments_total"] == 9 and job["documents"] == 2
    assert [t["target_lang"] for t in job["targets"]] == TARGETS
    done = await finished(client, job["id"])
    assert (done["status"], done["segments_done"]) == ("succeeded", 9)
    assert done["targets"] == [
        {"target_lang": t, "status": "succeeded", "segments_total": 3, "segments_done": 3}
        for t in TARGETS
    ]
    sources = ["Hello world.", "The cat sleeps.", "Good morning."]
    # Each target is charged: the characters three times over.
    characters = sum(len(s) for s in sources) * 3
    assert (await client.get("/v1/usage")).json()["characters"] == characters
    for target in TARGETS:
        expected = await alone(client, target, sources)
        result = (await client.get(f"/v1/jobs/{job['id']}/result?target={target}")).json()
        assert [d["target_lang"] for d in result["documents"]] == [target, target]
        assert [d["segments"] for d in result["documents"]] == [expected[:2], expected[2:]]
    # Without ?target=, every target's documents, target after target.
    every = (await client.get(f"/v1/jobs/{job['id']}/result")).json()["documents"]
    assert [(d["name"], d["target_lang"]) for d in every] == [
        (name, target) for target in TARGETS for name in ("a.txt", "b.txt")
    ]
    # en→fr has no direct pair: its pivot engine made it.
    fr = [d for d in every if d["target_lang"] == "fr"]
    assert {engine for d in fr for engine in d["engines"]} == {"pivot"}
    # The sources are the documents' own, once.
    own = (await client.get(f"/v1/jobs/{job['id']}/sources")).json()["documents"]
    assert [d["segments"] for d in own] == [sources[:2], sources[2:]]


async def test_a_target_the_job_has_not_is_not_found(client: httpx.AsyncClient) -> None:
    job = (await client.post("/v1/jobs", json=several(target_langs=["es", "ca"]))).json()
    await finished(client, job["id"])
    for path in ("result", "tmx", "files.zip"):
        missing = await client.get(f"/v1/jobs/{job['id']}/{path}?target=fr")
        assert_error(missing, 404, "not_found")
        assert "es, ca" in missing.json()["error"]["message"]


async def test_a_language_listed_twice_is_translated_once(client: httpx.AsyncClient) -> None:
    body = several(target_lang="es", target_langs=["ES", "spa", "ca"])
    job = (await client.post("/v1/jobs", json=body)).json()
    assert job["target_langs"] == ["es", "ca"] and job["segments_total"] == 6


async def test_a_big_job_is_split_per_target_and_its_events_name_the_target(
    make_client: Any,
) -> None:
    client = await make_client(shard_segments=2)
    segments = [f"The dog number {n} sleeps." for n in range(5)]
    body = {
        "source_lang": "en",
        "target_langs": ["es", "ca"],
        "documents": [{"name": "a.txt", "segments": segments}],
    }
    job = (await client.post("/v1/jobs", json=body)).json()
    done = await finished(client, job["id"])
    assert done["status"] == "succeeded" and done["segments_done"] == 10
    told: dict[str, list[str | None]] = {"es": [None] * 5, "ca": [None] * 5}
    progress: list[dict[str, Any]] = []
    async with client.stream("GET", f"/v1/jobs/{job['id']}/events") as stream:
        kind = ""
        async for line in stream.aiter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: ") and kind == "segments":
                data = json.loads(line.removeprefix("data: "))
                assert data["document"] == 0
                for segment in data["segments"]:
                    told[data["target_lang"]][segment["index"]] = segment["text"]
            elif line.startswith("data: ") and kind == "progress":
                progress.append(json.loads(line.removeprefix("data: ")))
    for target in ("es", "ca"):
        assert told[target] == await alone(client, target, segments)
    # Progress tells each target's own state too.
    assert (
        progress[-1]["targets"]
        == done["targets"]
        == [
            {"target_lang": t, "status": "succeeded", "segments_total": 5, "segments_done": 5}
            for t in ("es", "ca")
        ]
    )


async def test_files_come_back_per_target_and_as_one_zip(client: httpx.AsyncClient) -> None:
    files = [
        ("files", ("a.txt", b"Hello world.\nGood morning.\n")),
        ("files", ("b.txt", b"The cat.\n")),
    ]
    form = {"source_lang": "en", "target_langs": "es, ca"}
    response = await client.post("/v1/jobs", data=form, files=files)
    assert response.status_code == 202, response.text
    job = await finished(client, response.json()["id"])
    assert job["status"] == "succeeded" and job["target_langs"] == ["es", "ca"]
    # With several targets, a file is asked for by its target.
    assert_error(await client.get(f"/v1/jobs/{job['id']}/files/0"), 422, "invalid_request")
    each: dict[str, bytes] = {}
    for target in ("es", "ca"):
        for n, name in enumerate(("a", "b")):
            got = await client.get(f"/v1/jobs/{job['id']}/files/{n}?target={target}")
            assert got.status_code == 200, got.text
            assert f'filename="{name}.{target}.txt"' in got.headers["content-disposition"]
            each[f"{target}/{name}.{target}.txt"] = got.content
    expected = await alone(client, "ca", ["Hello world.", "Good morning."])
    assert each["ca/a.ca.txt"].decode() == "".join(f"{line}\n" for line in expected)
    archive = await client.get(f"/v1/jobs/{job['id']}/files.zip")
    assert archive.status_code == 200 and archive.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(archive.content)) as unzipped:
        assert unzipped.testzip() is None
        assert {name: unzipped.read(name) for name in unzipped.namelist()} == each
    only = await client.get(f"/v1/jobs/{job['id']}/files.zip?target=es")
    with zipfile.ZipFile(io.BytesIO(only.content)) as unzipped:
        assert sorted(unzipped.namelist()) == ["es/a.es.txt", "es/b.es.txt"]


async def test_a_segments_job_has_no_files_to_zip(client: httpx.AsyncClient) -> None:
    job = (await client.post("/v1/jobs", json=several(target_langs=["es", "ca"]))).json()
    await finished(client, job["id"])
    assert_error(await client.get(f"/v1/jobs/{job['id']}/files.zip"), 404, "not_found")


async def test_the_tmx_has_a_unit_per_target(client: httpx.AsyncClient) -> None:
    job = (await client.post("/v1/jobs", json=several(target_langs=["es", "ca"]))).json()
    await finished(client, job["id"])
    tmx = (await client.get(f"/v1/jobs/{job['id']}/tmx")).text
    assert tmx.count('xml:lang="es"') == 3 and tmx.count('xml:lang="ca"') == 3
    only = (await client.get(f"/v1/jobs/{job['id']}/tmx?target=ca")).text
    assert only.count('xml:lang="ca"') == 3 and 'xml:lang="es"' not in only


@pytest.fixture
async def french_fails(make_settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    engine = ScriptedEngine([Pair("en", "es"), Pair("en", "fr")])
    engine.fail_into.add("fr")
    service = EmbeddedService(make_settings(max_attempts=1), engines=Engines([engine]))
    await service.start()
    app = create_app(service, manage_lifecycle=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        yield client
    await stop_service(service)


async def test_a_failed_target_ends_alone_and_the_others_are_delivered(
    french_fails: httpx.AsyncClient,
) -> None:
    client = french_fails
    files = [("files", ("a.txt", b"Hello world.\nGood morning.\n"))]
    form = {"source_lang": "en", "target_langs": "es,fr"}
    response = await client.post("/v1/jobs", data=form, files=files)
    assert response.status_code == 202, response.text
    job = await finished(client, response.json()["id"])
    assert job["status"] == "failed"
    assert job["error"]["code"] == "engine_error"
    assert job["error"]["message"].startswith("fr: ")
    assert [(t["target_lang"], t["status"]) for t in job["targets"]] == [
        ("es", "succeeded"),
        ("fr", "failed"),
    ]
    # What was translated is delivered: the Spanish file, result and zip.
    spanish = await client.get(f"/v1/jobs/{job['id']}/files/0?target=es")
    assert spanish.status_code == 200 and spanish.content == b"HELLO WORLD.\nGOOD MORNING.\n"
    assert_error(await client.get(f"/v1/jobs/{job['id']}/files/0?target=fr"), 409, "not_finished")
    result = (await client.get(f"/v1/jobs/{job['id']}/result?target=es")).json()
    assert result["documents"][0]["segments"] == ["HELLO WORLD.", "GOOD MORNING."]
    archive = await client.get(f"/v1/jobs/{job['id']}/files.zip")
    assert archive.status_code == 200, archive.text
    with zipfile.ZipFile(io.BytesIO(archive.content)) as unzipped:
        assert unzipped.namelist() == ["es/a.es.txt"]
