"""DeepL's glossaries, spoken to by DeepL's own Python SDK and by Weblate's requests over a
real socket (``dragoman serve`` with the real Apertium pairs): one store with ``/v1``, each
tenant its own, and the terms kept in texts, tagged texts and documents."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from pathlib import Path

import deepl
import httpx
import pytest

from tests.integration.server import Server

pytestmark = pytest.mark.integration

TERMS = {"server": "servidor de aplicaciones", "Dragoman": "Dragoman"}
TEXTS = ["The server is down.", "Open Dragoman on the server."]
KEPT = ["El servidor de aplicaciones es abajo.", "Abierto Dragoman en el servidor de aplicaciones."]
ACME, BETA = {"Authorization": "DeepL-Auth-Key key-acme"}, {"Authorization": "Bearer key-beta"}
ACME_V1 = {"Authorization": "Bearer key-acme"}  # what /v1 takes


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("deepl-glossaries") / "data"
    running = Server(data, DRAGOMAN_API_KEYS="acme:key-acme,beta:key-beta").start()
    try:
        yield running
    finally:
        if running.proc is not None:
            running.stop(signal.SIGKILL)


@pytest.fixture
def acme(server: Server) -> Iterator[deepl.Translator]:
    found = deepl.Translator("key-acme", server_url=server.url)
    yield found
    for glossary in found.list_glossaries():
        found.delete_glossary(glossary)
    found.close()  # type: ignore[no-untyped-call]


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def create(http: httpx.Client, entries: str, **fields: str) -> httpx.Response:
    body = {"name": "t", "source_lang": "EN", "target_lang": "ES", "entries": entries, **fields}
    return http.post("/v2/glossaries", json=body, headers=ACME)


@pytest.mark.parametrize(
    ("entries", "fields", "status", "says"),
    [
        ("cat\tgato\ncat\tgata", {}, 400, "line 2: the source term 'cat' duplicates line 1"),
        ("", {}, 400, "Parameter 'entries' not specified."),
        ("cat\tgato\tgata", {}, 400, "line 1"),
        ("cat\t", {}, 400, "the target term is empty"),
        ('"cat,gato', {"entries_format": "csv"}, 400, "not valid CSV"),
        ("cat,gato,en,fr", {"entries_format": "csv"}, 400, "en-fr"),
        ("cat\tgato", {"entries_format": "xml"}, 400, "Value for 'entries_format' not supported."),
        ("cat\tgato", {"target_lang": "DE"}, 400, "Unsupported glossary source and target"),
        ("cat\tgato", {"source_lang": "XX1"}, 400, "Value for 'source_lang' not supported."),
        ("cat\tgato", {"name": ""}, 400, "Parameter 'name' not specified."),
    ],
)
def test_bad_glossaries_are_refused_in_deepls_shape(
    http: httpx.Client, entries: str, fields: dict[str, str], status: int, says: str
) -> None:
    response = create(http, entries, **fields)
    assert response.status_code == status, response.text
    assert set(response.json()) == {"message"}
    assert says in response.json()["message"]
    assert http.get("/v2/glossaries", headers=ACME).json() == {"glossaries": []}


def test_bad_uses_of_a_glossary_are_refused(
    acme: deepl.Translator, http: httpx.Client, tmp_path: Path
) -> None:
    glossary = acme.create_glossary("terms", "EN", "ES", TERMS)
    translate = {"text": ["Hi"], "target_lang": "ES", "glossary_id": glossary.glossary_id}
    for body, status, says in (
        (translate, 400, "requires the source_lang"),
        ({**translate, "source_lang": "EN", "glossary_id": "nope"}, 404, "Glossary not found"),
        ({**translate, "source_lang": "ES", "target_lang": "EN"}, 400, "doesn't match"),
        ({**translate, "source_lang": "EN", "glossary_ids": ["a"]}, 400, "cannot be used together"),
    ):
        response = http.post("/v2/translate", json=body, headers=ACME)
        assert (response.status_code, set(response.json())) == (status, {"message"}), body
        assert says in response.json()["message"]
    two = {**translate, "source_lang": "EN", "glossary_ids": ["a", "b"]}
    del two["glossary_id"]
    assert http.post("/v2/translate", json=two, headers=ACME).status_code == 400
    accept_json = {**ACME, "Accept": "application/json"}
    entries = http.get(f"/v2/glossaries/{glossary.glossary_id}/entries", headers=accept_json)
    assert entries.status_code == 415
    with pytest.raises(deepl.DeepLException, match="Glossary not found"):
        acme.translate_document_upload(
            b"Hello.", filename="a.txt", source_lang="EN", target_lang="ES", glossary="nope"
        )


def test_a_tenant_sees_and_uses_only_its_own_glossaries(
    acme: deepl.Translator, server: Server, http: httpx.Client
) -> None:
    glossary = acme.create_glossary("terms", "EN", "ES", TERMS)
    beta = deepl.Translator("key-beta", server_url=server.url)
    try:
        assert beta.list_glossaries() == []
        for call in (beta.get_glossary, beta.get_glossary_entries, beta.delete_glossary):
            with pytest.raises(deepl.GlossaryNotFoundException):
                call(glossary.glossary_id)
        with pytest.raises(deepl.DeepLException, match="Glossary not found"):
            beta.translate_text("Hi", source_lang="EN", target_lang="ES", glossary=glossary)
    finally:
        beta.close()  # type: ignore[no-untyped-call]
    v1 = http.get(f"/v1/glossaries/{glossary.glossary_id}", headers=BETA)
    assert v1.status_code == 404
    assert [g.glossary_id for g in acme.list_glossaries()] == [glossary.glossary_id]


def test_the_sdks_glossary_calls(acme: deepl.Translator, http: httpx.Client) -> None:
    pairs = {(p.source_lang, p.target_lang) for p in acme.get_glossary_languages()}
    assert {("en", "es"), ("es", "en"), ("en", "ca"), ("fr", "es")} <= pairs
    glossary = acme.create_glossary("product terms", "EN", "ES", TERMS)
    assert (glossary.name, glossary.ready, glossary.entry_count) == ("product terms", True, 2)
    assert (glossary.source_lang, glossary.target_lang) == ("EN", "ES")
    assert glossary.creation_time.tzinfo is not None
    assert [g.glossary_id for g in acme.list_glossaries()] == [glossary.glossary_id]
    assert acme.get_glossary(glossary.glossary_id).name == "product terms"
    assert acme.get_glossary_entries(glossary) == TERMS
    found = acme.translate_text(TEXTS, source_lang="EN", target_lang="ES", glossary=glossary)
    assert isinstance(found, list) and [r.text for r in found] == KEPT
    same = acme.translate_text(TEXTS, source_lang="EN", target_lang="ES", glossary_ids=[glossary])
    assert isinstance(same, list) and [r.text for r in same] == KEPT
    from_csv = acme.create_glossary_from_csv("csv", "EN", "ES", "server,servidor central\n")
    one = acme.translate_text(TEXTS[0], source_lang="EN", target_lang="ES", glossary=from_csv)
    assert isinstance(one, deepl.TextResult) and one.text == "El servidor central es abajo."
    acme.delete_glossary(glossary)
    with pytest.raises(deepl.GlossaryNotFoundException):
        acme.get_glossary(glossary.glossary_id)
    assert [g.glossary_id for g in acme.list_glossaries()] == [from_csv.glossary_id]


def test_one_store_for_v1_and_deepl(acme: deepl.Translator, http: httpx.Client) -> None:
    body = {"source_lang": "en", "target_lang": "es", "segments": TEXTS}
    from_deepl = acme.create_glossary("terms", "EN", "ES", TERMS)
    v1 = http.post(
        "/v1/translate", json={**body, "glossary": from_deepl.glossary_id}, headers=ACME_V1
    )
    assert v1.json()["translations"] == KEPT
    entries = [{"source": s, "target": t} for s, t in TERMS.items()]
    made = http.post(
        "/v1/glossaries",
        json={"name": "v1", "source_lang": "en", "target_lang": "es", "entries": entries},
        headers=ACME_V1,
    ).json()
    found = acme.translate_text(TEXTS, source_lang="EN", target_lang="ES", glossary=made["id"])
    assert isinstance(found, list) and [r.text for r in found] == KEPT
    assert acme.get_glossary(made["id"]).entry_count == 2


def test_documents_and_tagged_texts_keep_the_terms(acme: deepl.Translator, tmp_path: Path) -> None:
    glossary = acme.create_glossary("terms", "EN", "ES", TERMS)
    page, out = tmp_path / "page.html", tmp_path / "page.es.html"
    page.write_text("<html><body><p>The <b>server</b> is down.</p></body></html>")
    status = acme.translate_document_from_filepath(
        page, out, source_lang="EN", target_lang="ES", glossary=glossary
    )
    assert status.done
    assert "<b>servidor de aplicaciones</b>" in out.read_text()
    tagged = acme.translate_text(
        "Open <b>Dragoman</b> on the server.",
        source_lang="EN",
        target_lang="ES",
        tag_handling="html",
        glossary=glossary,
    )
    assert isinstance(tagged, deepl.TextResult)
    assert tagged.text == "Abierto <b>Dragoman</b> en el servidor de aplicaciones."


def test_weblates_glossary_sync(http: httpx.Client) -> None:
    """What Weblate's DeepL backend does: check the pair, list, create ``weblate:…`` from
    TSV, translate with it (XML placeholders), and on a change create the new one and
    delete the stale one."""
    pairs = http.get("/v2/glossary-language-pairs", headers=ACME).json()["supported_languages"]
    assert {"source_lang": "en", "target_lang": "es"} in pairs
    assert http.get("/v2/glossaries", headers=ACME).json()["glossaries"] == []
    old = create(http, "server\tservidor de aplicaciones", name="weblate:1:EN:ES:aaa").json()
    assert old["name"] == "weblate:1:EN:ES:aaa" and old["entry_count"] == 1
    new = create(http, "server\tservidor central\nDragoman\tDragoman", name="weblate:1:EN:ES:bbb")
    assert new.status_code == 201
    assert http.delete(f"/v2/glossaries/{old['glossary_id']}", headers=ACME).status_code == 204
    listed = http.get("/v2/glossaries", headers=ACME).json()["glossaries"]
    assert [g["name"] for g in listed] == ["weblate:1:EN:ES:bbb"]
    body = {
        "text": ['Restart the <x id="3"></x> server.', "Dragoman server"],
        "source_lang": "EN",
        "target_lang": "ES",
        "formality": "default",
        "tag_handling": "xml",
        "ignore_tags": ["x"],
        "glossary_id": new.json()["glossary_id"],
    }
    response = http.post("/v2/translate", json=body, headers=ACME)
    assert response.status_code == 200, response.text
    found = [t["text"] for t in response.json()["translations"]]
    assert '<x id="3"></x>' in found[0] and "servidor central" in found[0]
    assert re.sub(r"\s+", " ", found[1]).strip() == "Dragoman servidor central"
    tsv = http.get(f"/v2/glossaries/{listed[0]['glossary_id']}/entries", headers=ACME)
    assert tsv.headers["content-type"].startswith("text/tab-separated-values")
    assert tsv.text == "server\tservidor central\nDragoman\tDragoman"
    http.delete(f"/v2/glossaries/{listed[0]['glossary_id']}", headers=ACME)
