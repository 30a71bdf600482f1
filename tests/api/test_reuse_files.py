"""Memories and the cache in files: XLIFF marks memory matches as CAT tools read them, PO
leaves them unmarked as fuzzy, and a job's TMX export seeds a memory that matches again
(read back with lxml, polib and PythonTmx)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import polib
from lxml import etree
from PythonTmx import from_element  # type: ignore[import-untyped]

from tests.api.helpers import finished
from tests.reuse.tmx_samples import bilingual

XLIFF_1 = b"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file source-language="en" datatype="plaintext" original="ui">
    <body>
      <trans-unit id="save"><source>Save the file.</source></trans-unit>
      <trans-unit id="dog"><source>The dog eats.</source></trans-unit>
      <trans-unit id="link"><source>Click <g id="1">here</g> now.</source></trans-unit>
    </body>
  </file>
</xliff>
"""

XLIFF_2 = b"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="2.0" xmlns="urn:oasis:names:tc:xliff:document:2.0" srcLang="en">
  <file id="f1">
    <unit id="u1"><segment><source>Save the file.</source></segment></unit>
    <unit id="u2"><segment><source>The dog eats.</source></segment></unit>
  </file>
</xliff>
"""

PO = b"""msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

msgid "Save the file."
msgstr ""

msgid "The dog eats."
msgstr ""
"""

X1 = "{urn:oasis:names:tc:xliff:document:1.2}"
X2 = "{urn:oasis:names:tc:xliff:document:2.0}"


async def file_job(
    client: httpx.AsyncClient, name: str, content: bytes, **fields: str
) -> tuple[str, list[str], bytes]:
    """Submits one file, waits; the job id, the origins and the translated file."""
    answer = await client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "es", **fields},
        files={"files": (name, content)},
    )
    assert answer.status_code == 202, answer.text
    job_id = answer.json()["id"]
    await finished(client, job_id)
    origins = (await client.get(f"/v1/jobs/{job_id}/result")).json()["documents"][0]["origins"]
    got = await client.get(f"/v1/jobs/{job_id}/files/0")
    assert got.status_code == 200, got.text
    return job_id, origins, got.content


async def seed(client: httpx.AsyncClient, name: str, data: bytes) -> None:
    response = await client.post(
        "/v1/memories", data={"name": name}, files={"file": ("m.tmx", data)}
    )
    assert response.status_code == 201, response.text


async def test_xliff_1_2_marks_memory_matches_as_exact_matches(client: httpx.AsyncClient) -> None:
    await seed(client, "ui", bilingual(("Save the file.", "Guarde el archivo.")))
    _, origins, out = await file_job(client, "ui.xlf", XLIFF_1, memories="ui")
    assert origins == ["tm", "mt", "mt"]
    units = {u.get("id"): u for u in etree.fromstring(out).iter(f"{X1}trans-unit")}
    target = units["save"].find(f"{X1}target")
    assert target is not None and target.text == "Guarde el archivo."
    assert (target.get("state"), target.get("state-qualifier")) == ("translated", "exact-match")
    alt = units["save"].find(f"{X1}alt-trans")
    assert alt is not None
    assert (alt.get("match-quality"), alt.get("origin")) == ("100", "dragoman:tm")
    assert alt.findtext(f"{X1}target") == "Guarde el archivo."
    machine = units["dog"].find(f"{X1}target")
    assert machine is not None and machine.get("state-qualifier") == "mt-suggestion"
    assert units["dog"].find(f"{X1}alt-trans") is None


async def test_cache_hits_keep_the_machine_translation_marking(client: httpx.AsyncClient) -> None:
    await file_job(client, "ui.xlf", XLIFF_1)
    _, origins, out = await file_job(client, "ui.xlf", XLIFF_1)
    assert origins == ["cache", "cache", "cache"]
    targets = list(etree.fromstring(out).iter(f"{X1}target"))
    assert [t.get("state") for t in targets] == ["needs-review-translation"] * 3
    assert next(etree.fromstring(out).iter(f"{X1}alt-trans"), None) is None


async def test_xliff_2_says_memory_in_its_substate(client: httpx.AsyncClient) -> None:
    await seed(client, "ui", bilingual(("Save the file.", "Guarde el archivo.")))
    _, origins, out = await file_job(client, "ui.xlf", XLIFF_2, memories="ui")
    assert origins == ["tm", "mt"]
    segments = list(etree.fromstring(out).iter(f"{X2}segment"))
    assert [(s.get("state"), s.get("subState")) for s in segments] == [
        ("translated", "dragoman:tm"),
        ("translated", "dragoman:mt"),
    ]


async def test_po_leaves_memory_matches_unmarked_and_machine_ones_fuzzy(
    client: httpx.AsyncClient,
) -> None:
    await seed(client, "ui", bilingual(("Save the file.", "Guarde el archivo.")))
    _, origins, out = await file_job(client, "ui.po", PO, memories="ui")
    assert origins == ["tm", "mt"]
    catalog = polib.pofile(out.decode())
    by_id = {entry.msgid: entry for entry in catalog}
    assert by_id["Save the file."].msgstr == "Guarde el archivo."
    assert "fuzzy" not in by_id["Save the file."].flags
    assert "fuzzy" in by_id["The dog eats."].flags


async def test_a_jobs_tmx_seeds_a_memory_that_matches_it_again(client: httpx.AsyncClient) -> None:
    job_id, origins, first = await file_job(client, "ui.xlf", XLIFF_1, cache="false")
    assert origins == ["mt", "mt", "mt"]
    exported = await client.get(f"/v1/jobs/{job_id}/tmx")
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("application/x-tmx+xml")
    document = from_element(etree.fromstring(exported.content))
    assert document.header.srclang == "en" and len(document.tus) == 3
    coded = [tu for tu in document.tus if len(tu.tuvs[0].content) > 1]
    assert [type(x).__name__ for x in coded[0].tuvs[0].content] == [
        "str",
        "Bpt",
        "str",
        "Ept",
        "str",
    ]
    await seed(client, "reviewed", exported.content)
    _, again, second = await file_job(client, "ui.xlf", XLIFF_1, memories="reviewed", cache="false")
    assert again == ["tm", "tm", "tm"]

    def targets(out: bytes) -> list[bytes]:
        """Each unit's own target, its content as canonical XML."""
        units = etree.fromstring(out).iter(f"{X1}trans-unit")
        return [etree.tostring(u.find(f"{X1}target"), method="c14n") for u in units]

    strip = [
        t.replace(b' state="translated" state-qualifier="exact-match"', b"")
        for t in targets(second)
    ]
    assert strip == [
        t.replace(b' state="needs-review-translation" state-qualifier="mt-suggestion"', b"")
        for t in targets(first)
    ]


async def test_a_json_jobs_tmx_round_trip(client: httpx.AsyncClient) -> None:
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [
            {"name": "a", "segments": ["The dog eats.", "Hello {name}", "The dog eats."]}
        ],
    }
    first = (await client.post("/v1/jobs", json=body)).json()
    await finished(client, first["id"])
    exported = await client.get(f"/v1/jobs/{first['id']}/tmx")
    assert len(from_element(etree.fromstring(exported.content)).tus) == 2  # one per pair
    await seed(client, "from-job", exported.content)
    again = (await client.post("/v1/jobs", json={**body, "memories": ["from-job"]})).json()
    assert again["status"] == "succeeded"
    result = (await client.get(f"/v1/jobs/{again['id']}/result")).json()["documents"][0]
    assert result["origins"] == ["tm", "tm", "tm"]
    original = (await client.get(f"/v1/jobs/{first['id']}/result")).json()["documents"][0]
    assert result["segments"] == original["segments"]


async def test_another_tenants_tmx_is_not_found(make_client: Any) -> None:
    client = await make_client(api_keys="a:key-a,b:key-b")
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [{"name": "a", "segments": ["x"]}],
    }
    a = {"Authorization": "Bearer key-a"}
    job = await client.post("/v1/jobs", json=body, headers=a)
    other = await client.get(
        f"/v1/jobs/{job.json()['id']}/tmx", headers={"Authorization": "Bearer key-b"}
    )
    assert other.status_code == 404
    # Finished before the service stops, as every other test's job.
    for _ in range(600):
        own = await client.get(f"/v1/jobs/{job.json()['id']}", headers=a)
        if own.json()["status"] == "succeeded":
            break
        await asyncio.sleep(0.05)
