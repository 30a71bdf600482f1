"""DeepL's v3 glossaries (a dictionary per language pair, editable), spoken to by DeepL's
own Python SDK (``DeepLClient``) over a real socket (``dragoman serve`` with the real
Apertium pairs): one store with ``/v2/glossaries`` and ``/v1/glossaries``, each pair
translated with its own dictionary in texts, documents, ``/v1/translate`` and jobs, and an
edit seen by the very next translation."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import deepl
import httpx
import pytest
from deepl.api_data import MultilingualGlossaryDictionaryEntries as Entries

from tests.integration.server import Server

pytestmark = pytest.mark.integration

ACME, BETA = {"Authorization": "DeepL-Auth-Key key-acme"}, {"Authorization": "Bearer key-beta"}
ACME_V1 = {"Authorization": "Bearer key-acme"}
EN_ES = Entries("EN", "ES", {"server": "servidor de aplicaciones", "Dragoman": "Dragoman"})
ES_EN = Entries("ES", "EN", {"servidor": "host"})
UNKNOWN = "96ab91fd-e715-41a1-adeb-5d701f84a483"
ENGLISH, SPANISH = "The server is down.", "El servidor está caído."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("deepl-v3-glossaries") / "data"
    running = Server(data, DRAGOMAN_API_KEYS="acme:key-acme,beta:key-beta").start()
    try:
        yield running
    finally:
        if running.proc is not None:
            running.stop(signal.SIGKILL)


@pytest.fixture
def acme(server: Server) -> Iterator[deepl.DeepLClient]:
    found = deepl.DeepLClient("key-acme", server_url=server.url)
    yield found
    for glossary in found.list_multilingual_glossaries():
        found.delete_multilingual_glossary(glossary)
    found.close()  # type: ignore[no-untyped-call]


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def dictionary(source: str, target: str, entries: str, fmt: str = "tsv") -> dict[str, str]:
    return {"source_lang": source, "target_lang": target, "entries": entries, "entries_format": fmt}


def tsv_of(client: deepl.DeepLClient, glossary: Any, source: str, target: str) -> str:
    """A dictionary's entries as the server sends them, TSV (the SDK types them a dict)."""
    (found,) = client.get_multilingual_glossary_entries(glossary, source, target).dictionaries
    entries: object = found.entries
    assert isinstance(entries, str)
    return entries


def refused(response: httpx.Response, status: int, says: str) -> None:
    assert response.status_code == status, response.text
    assert set(response.json()) == {"message"} and says in response.json()["message"]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"name": "t"}, "Parameter 'dictionaries' not specified."),
        ({"name": "t", "dictionaries": "en\tes"}, "Value for 'dictionaries' not supported"),
        ({"name": "t", "dictionaries": []}, "Parameter 'dictionaries' not specified."),
        ({"dictionaries": [dictionary("en", "es", "cat\tgato")]}, "Parameter 'name' not"),
        ({"name": "t", "dictionaries": [dictionary("en", "es", "")]}, "Parameter 'entries' not"),
        ({"name": "t", "dictionaries": [dictionary("en", "es", "cat\tgato\ncat\tgata")]}, "line 2"),
        ({"name": "t", "dictionaries": [dictionary("en", "es", "cat\tgato\tx")]}, "line 1"),
        ({"name": "t", "dictionaries": [dictionary("en", "es", "cat,gato,en,fr", "csv")]}, "en-fr"),
        ({"name": "t", "dictionaries": [dictionary("en", "es", "a\tb", "xml")]}, "entries_format"),
        ({"name": "t", "dictionaries": [dictionary("XX1", "es", "a\tb")]}, "'source_lang' not"),
        ({"name": "t", "dictionaries": [dictionary("en", "de", "a\tb")]}, "Unsupported glossary"),
        (
            {"name": "t", "dictionaries": [dictionary("en", "es", "a\tb")] * 2},
            "en-es is given twice",
        ),
    ],
)
def test_bad_glossaries_are_refused_in_deepls_shape(
    http: httpx.Client, body: dict[str, Any], says: str
) -> None:
    refused(http.post("/v3/glossaries", json=body, headers=ACME), 400, says)
    assert http.get("/v3/glossaries", headers=ACME).json() == {"glossaries": []}


def test_unknown_glossaries_and_dictionaries_are_deepls_404(
    acme: deepl.DeepLClient, server: Server, http: httpx.Client
) -> None:
    missing = deepl.GlossaryNotFoundException
    glossary = acme.create_multilingual_glossary("terms", [EN_ES])
    beta = deepl.DeepLClient("key-beta", server_url=server.url)
    try:
        assert beta.list_multilingual_glossaries() == []
        for client, glossary_id in ((acme, UNKNOWN), (beta, glossary.glossary_id)):
            with pytest.raises(missing):
                client.get_multilingual_glossary(glossary_id)
            with pytest.raises(missing):
                client.get_multilingual_glossary_entries(glossary_id, "EN", "ES")
            with pytest.raises(missing):
                client.update_multilingual_glossary_name(glossary_id, "stolen")
            with pytest.raises(missing):
                client.update_multilingual_glossary_dictionary(glossary_id, ES_EN)
            with pytest.raises(missing):
                client.replace_multilingual_glossary_dictionary(glossary_id, ES_EN)
            with pytest.raises(missing):
                client.delete_multilingual_glossary_dictionary(glossary_id, None, "EN", "ES")
            with pytest.raises(missing):
                client.delete_multilingual_glossary(glossary_id)
    finally:
        beta.close()  # type: ignore[no-untyped-call]
    with pytest.raises(missing, match="Dictionary not found"):
        acme.get_multilingual_glossary_entries(glossary, "ES", "EN")
    with pytest.raises(missing, match="Dictionary not found"):
        acme.delete_multilingual_glossary_dictionary(glossary, None, "ES", "EN")
    assert http.get("/v3/style_rules", headers=ACME).status_code == 404
    assert acme.get_multilingual_glossary(glossary.glossary_id).name == "terms"


def test_bad_edits_are_refused_and_change_nothing(
    acme: deepl.DeepLClient, http: httpx.Client
) -> None:
    glossary = acme.create_multilingual_glossary("terms", [EN_ES])
    url = f"/v3/glossaries/{glossary.glossary_id}"
    with pytest.raises(deepl.DeepLException, match="last; delete the glossary"):
        acme.delete_multilingual_glossary_dictionary(glossary, None, "EN", "ES")
    two = {"dictionaries": [dictionary("en", "es", "a\tb"), dictionary("es", "en", "b\ta")]}
    refused(http.patch(url, json=two, headers=ACME), 400, "Only one dictionary")
    bad = dictionary("en", "es", "server\tservidor\nserver\tnodo")
    refused(http.patch(url, json={"dictionaries": [bad]}, headers=ACME), 400, "line 2")
    refused(http.put(f"{url}/dictionaries", json=bad, headers=ACME), 400, "line 2")
    refused(
        http.put(f"{url}/dictionaries", json={**bad, "target_lang": "de"}, headers=ACME),
        400,
        "Unsupported glossary",
    )
    refused(
        http.get(f"{url}/entries", params={"source_lang": "en"}, headers=ACME),
        400,
        "'target_lang' not",
    )
    refused(
        http.get(f"{url}/entries?source_lang=xx1&target_lang=es", headers=ACME),
        400,
        "'source_lang' not",
    )
    assert deepl.convert_tsv_to_dict(tsv_of(acme, glossary, "EN", "ES")) == EN_ES.entries
    assert acme.get_multilingual_glossary(glossary.glossary_id).name == "terms"


def test_a_glossary_without_the_requests_pair_is_refused_everywhere(
    acme: deepl.DeepLClient, http: httpx.Client
) -> None:
    glossary = acme.create_multilingual_glossary("terms", [EN_ES]).glossary_id
    body = {"text": [SPANISH], "source_lang": "ES", "target_lang": "EN", "glossary_id": glossary}
    refused(http.post("/v2/translate", json=body, headers=ACME), 400, "doesn't match")
    with pytest.raises(deepl.DeepLException, match="doesn't match"):
        acme.translate_document_upload(
            SPANISH.encode(),
            filename="a.txt",
            source_lang="ES",
            target_lang="EN-US",
            glossary=glossary,
        )
    v1 = {"source_lang": "es", "target_lang": "en", "segments": [SPANISH], "glossary": glossary}
    translated = http.post("/v1/translate", json=v1, headers=ACME_V1)
    assert (translated.status_code, translated.json()["error"]["code"]) == (422, "invalid_request")
    assert "is for en-es, not es-en" in translated.json()["error"]["message"]
    job = {"documents": [{"name": "a.txt", "segments": [SPANISH]}], **v1}
    del job["segments"]
    submitted = http.post("/v1/jobs", json=job, headers=ACME_V1)
    assert (submitted.status_code, submitted.json()["error"]["code"]) == (422, "invalid_request")


def test_the_sdks_multilingual_glossary_calls(acme: deepl.DeepLClient) -> None:
    made = acme.create_multilingual_glossary("product terms", [EN_ES, ES_EN])
    assert (made.name, made.creation_time.tzinfo is not None) == ("product terms", True)
    assert [(d.source_lang, d.target_lang, d.entry_count) for d in made.dictionaries] == [
        ("EN", "ES", 2),
        ("ES", "EN", 1),
    ]
    assert [g.glossary_id for g in acme.list_multilingual_glossaries()] == [made.glossary_id]
    assert acme.get_multilingual_glossary(made.glossary_id).dictionaries[1].entry_count == 1
    found = acme.get_multilingual_glossary_entries(made, "ES", "EN").dictionaries
    assert [(d.source_lang, d.target_lang) for d in found] == [("es", "en")]
    assert tsv_of(acme, made, "ES", "EN") == "servidor\thost"
    renamed = acme.update_multilingual_glossary_name(made, "renamed")
    assert renamed.name == acme.get_multilingual_glossary(made.glossary_id).name == "renamed"
    merged = acme.update_multilingual_glossary_dictionary(
        made, Entries("EN", "ES", {"server": "ordenador central", "disk": "disco"})
    )
    assert [d.entry_count for d in merged.dictionaries] == [3, 1]
    tsv = tsv_of(acme, made, "EN", "ES")
    assert tsv == "server\tordenador central\nDragoman\tDragoman\ndisk\tdisco"
    added = acme.update_multilingual_glossary_dictionary_from_csv(
        made, "FR", "ES", "serveur,anfitrión\n"
    )
    assert [(d.source_lang, d.target_lang) for d in added.dictionaries][-1] == ("FR", "ES")
    replaced = acme.replace_multilingual_glossary_dictionary(
        made, Entries("EN", "ES", {"disk": "unidad"})
    )
    assert (replaced.source_lang, replaced.target_lang, replaced.entry_count) == ("EN", "ES", 1)
    again = acme.replace_multilingual_glossary_dictionary_from_csv(
        made, "ES", "FR", "servidor,serveur"
    )
    assert (again.source_lang, again.target_lang, again.entry_count) == ("ES", "FR", 1)
    acme.delete_multilingual_glossary_dictionary(made, None, "ES", "EN")
    pairs = [
        (d.source_lang, d.target_lang)
        for d in acme.get_multilingual_glossary(made.glossary_id).dictionaries
    ]
    assert pairs == [("EN", "ES"), ("FR", "ES"), ("ES", "FR")]
    from_csv = acme.create_multilingual_glossary_from_csv(
        "csv", "EN", "ES", "server,servidor central\n"
    )
    assert [d.entry_count for d in from_csv.dictionaries] == [1]
    acme.delete_multilingual_glossary(made)
    with pytest.raises(deepl.GlossaryNotFoundException):
        acme.get_multilingual_glossary(made.glossary_id)
    assert [g.glossary_id for g in acme.list_multilingual_glossaries()] == [from_csv.glossary_id]


def test_one_store_for_v1_v2_and_v3(acme: deepl.DeepLClient, http: httpx.Client) -> None:
    v2 = acme.create_glossary("v2 terms", "EN", "ES", {"server": "servidor central"})
    seen = acme.get_multilingual_glossary(v2.glossary_id)
    assert [(d.source_lang, d.target_lang, d.entry_count) for d in seen.dictionaries] == [
        ("EN", "ES", 1)
    ]
    assert tsv_of(acme, v2.glossary_id, "EN", "ES") == "server\tservidor central"
    multi = acme.create_multilingual_glossary("multi", [EN_ES, ES_EN])
    # As on DeepL, v2 reads a glossary of several dictionaries as its first one.
    first = acme.get_glossary(multi.glossary_id)
    assert (first.source_lang, first.target_lang, first.entry_count) == ("EN", "ES", 2)
    assert acme.get_glossary_entries(multi.glossary_id) == EN_ES.entries
    assert {g.glossary_id for g in acme.list_glossaries()} == {v2.glossary_id, multi.glossary_id}
    v1 = http.get(f"/v1/glossaries/{multi.glossary_id}", headers=ACME_V1).json()
    assert (v1["source_lang"], v1["target_lang"], v1["entry_count"]) == ("en", "es", 2)
    assert len(http.get("/v1/glossaries", headers=ACME_V1).json()["glossaries"]) == 2
    # Changed through v3 (or of several dictionaries), a glossary is deleted through v3 only.
    acme.update_multilingual_glossary_name(v2.glossary_id, "edited")
    for glossary in (v2.glossary_id, multi.glossary_id):
        refused(
            http.delete(f"/v2/glossaries/{glossary}", headers=ACME), 400, "DELETE /v3/glossaries"
        )
    assert acme.get_glossary(v2.glossary_id).name == "edited"


def test_each_pair_translates_with_its_own_dictionary(
    acme: deepl.DeepLClient, http: httpx.Client
) -> None:
    glossary = acme.create_multilingual_glossary("terms", [EN_ES, ES_EN])
    there = acme.translate_text(ENGLISH, source_lang="EN", target_lang="ES", glossary=glossary)
    back = acme.translate_text(
        SPANISH, source_lang="ES", target_lang="EN-US", glossary=glossary.glossary_id
    )
    assert isinstance(there, deepl.TextResult) and isinstance(back, deepl.TextResult)
    assert (there.text, back.text) == (
        "El servidor de aplicaciones es abajo.",
        "The host is fallen.",
    )
    v1 = {
        "source_lang": "es",
        "target_lang": "en",
        "segments": [SPANISH],
        "glossary": glossary.glossary_id,
    }
    assert http.post("/v1/translate", json=v1, headers=ACME_V1).json()["translations"] == [
        back.text
    ]
    job: dict[str, Any] = {"source_lang": "en", "target_lang": "es"}
    job |= {"glossary": glossary.glossary_id, "documents": [{"name": "a", "segments": [ENGLISH]}]}
    assert job_segments(http, job) == [there.text]


def job_segments(http: httpx.Client, body: dict[str, Any]) -> list[str]:
    """A v1 job's translations, once it has finished."""
    job = http.post("/v1/jobs", json=body, headers=ACME_V1)
    assert job.status_code == 202, job.text
    url = f"/v1/jobs/{job.json()['id']}"
    deadline = time.monotonic() + 60
    while http.get(url, params={"wait": 0.5}, headers=ACME_V1).json()["status"] != "succeeded":
        assert time.monotonic() < deadline
    segments: list[str] = http.get(f"{url}/result", headers=ACME_V1).json()["documents"][0][
        "segments"
    ]
    return segments


def translated_document(acme: deepl.DeepLClient, tmp_path: Path, glossary: Any) -> str:
    given, out = tmp_path / "page.html", tmp_path / "page.es.html"
    given.write_text(f"<html><body><p>{ENGLISH}</p><p>Open Dragoman.</p></body></html>")
    out.unlink(missing_ok=True)
    status = acme.translate_document_from_filepath(
        given, out, source_lang="EN", target_lang="ES", glossary=glossary
    )
    assert status.done
    return out.read_text()


def test_an_edited_dictionary_is_used_by_the_next_translation(
    acme: deepl.DeepLClient, tmp_path: Path
) -> None:
    glossary = acme.create_multilingual_glossary("terms", [EN_ES, ES_EN])
    first = translated_document(acme, tmp_path, glossary)
    text = acme.translate_text(ENGLISH, source_lang="EN", target_lang="ES", glossary=glossary)
    assert "servidor de aplicaciones" in first and "servidor de aplicaciones" in str(text)
    acme.update_multilingual_glossary_dictionary(
        glossary, Entries("EN", "ES", {"server": "ordenador central"})
    )
    merged = translated_document(acme, tmp_path, glossary)
    text = acme.translate_text(ENGLISH, source_lang="EN", target_lang="ES", glossary=glossary)
    assert "ordenador central" in merged and "servidor de aplicaciones" not in merged
    assert str(text) == "El ordenador central es abajo."
    acme.replace_multilingual_glossary_dictionary(glossary, Entries("EN", "ES", {"server": "nodo"}))
    replaced = translated_document(acme, tmp_path, glossary)
    assert "nodo" in replaced and "ordenador central" not in replaced
    acme.replace_multilingual_glossary_dictionary(glossary, EN_ES)
    assert translated_document(acme, tmp_path, glossary) == first
