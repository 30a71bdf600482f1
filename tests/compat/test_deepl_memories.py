"""DeepL's translation memories over dragoman's, spoken to by DeepL's own Python SDK
(``DeepLClient``) over a real socket (``dragoman serve`` with the real Apertium pairs): a
tenant's ``/v1/memories`` listed on ``/v3/translation_memories``, and applied by
``translation_memory`` on texts and documents, exact matches only, everything else
translated exactly as without the memory."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from pathlib import Path

import deepl
import httpx
import pytest

from tests.integration.server import Server
from tests.reuse.tmx_samples import bilingual

pytestmark = pytest.mark.integration

ACME, BETA = {"Authorization": "DeepL-Auth-Key key-acme"}, {"Authorization": "Bearer key-beta"}
ACME_V1 = {"Authorization": "Bearer key-acme"}
MATCHED, CUSTOM = "Hello world.", "¡Hola a todos!"
OTHER = "The cat is on the table."
MEMORY = bilingual((MATCHED, CUSTOM), ("Good morning.", "Muy buenos días."), source="en")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("deepl-memories") / "data"
    running = Server(data, DRAGOMAN_API_KEYS="acme:key-acme,beta:key-beta").start()
    try:
        with running.client() as http:
            for name in ("support", "zz-second"):
                files = {"file": ("m.tmx", MEMORY, "application/x-tmx+xml")}
                made = http.post("/v1/memories", data={"name": name}, files=files, headers=ACME_V1)
                assert made.status_code == 201, made.text
        yield running
    finally:
        if running.proc is not None:
            running.stop(signal.SIGKILL)


@pytest.fixture
def acme(server: Server) -> Iterator[deepl.DeepLClient]:
    found = deepl.DeepLClient("key-acme", server_url=server.url)
    yield found
    found.close()  # type: ignore[no-untyped-call]


@pytest.fixture
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def refused(response: httpx.Response, status: int, says: str) -> None:
    assert response.status_code == status, response.text
    assert response.json() == {"message": says}


def texts_of(results: object) -> list[str]:
    assert isinstance(results, list)
    return [r.text for r in results]


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "status", "says"),
    [
        ({"translation_memory_id": "nope"}, 404, "Translation memory not found"),
        ({"translation_memory": "nope"}, 404, "Translation memory not found"),
        (
            {"translation_memory_id": "support", "translation_memory_threshold": 101},
            400,
            "Value for 'translation_memory_threshold' not supported.",
        ),
        (
            {"translation_memory_id": "support", "translation_memory_threshold": "high"},
            400,
            "Value for 'translation_memory_threshold' not supported.",
        ),
        (
            {"translation_memory_threshold": 80},
            400,
            "Parameter 'translation_memory_id' not specified.",
        ),
    ],
)
def test_a_bad_memory_or_threshold_is_refused_in_deepls_shape(
    http: httpx.Client, extra: dict[str, object], status: int, says: str
) -> None:
    body = {"text": [MATCHED], "source_lang": "EN", "target_lang": "ES", **extra}
    refused(http.post("/v2/translate", json=body, headers=ACME), status, says)
    document = {"file": ("a.txt", b"Hello world.", "text/plain")}
    form = {"target_lang": "ES", **{k: str(v) for k, v in extra.items()}}
    refused(http.post("/v2/document", data=form, files=document, headers=ACME), status, says)


def test_another_tenants_memory_is_a_404_everywhere(http: httpx.Client, server: Server) -> None:
    body = {"text": [MATCHED], "target_lang": "ES", "translation_memory_id": "support"}
    refused(
        http.post("/v2/translate", json=body, headers=BETA), 404, "Translation memory not found"
    )
    missing = http.get("/v3/translation_memories/support", headers=BETA)
    refused(missing, 404, "Translation memory not found")
    assert http.get("/v3/translation_memories", headers=BETA).json() == {"translation_memories": []}
    beta = deepl.DeepLClient("key-beta", server_url=server.url)
    with pytest.raises(deepl.DeepLException, match="Translation memory not found"):
        beta.translate_text(MATCHED, target_lang="ES", translation_memory="support")
    beta.close()  # type: ignore[no-untyped-call]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/v3/translation_memories/support"),
        ("POST", "/v3/translation_memories/import"),
        ("GET", "/v3/translation_memories/support/segments"),
    ],
)
def test_deepls_other_memory_routes_are_404s(http: httpx.Client, method: str, path: str) -> None:
    refused(http.request(method, path, headers=ACME), 404, f"Not found: {path}")
    assert http.get("/v3/translation_memories/support", headers=ACME).status_code == 200


@pytest.mark.parametrize(
    "query", [{"page_size": "26"}, {"page_size": "0"}, {"page": "-1"}, {"page": "x"}]
)
def test_a_bad_page_is_refused(http: httpx.Client, query: dict[str, str]) -> None:
    (name,) = query
    found = http.get("/v3/translation_memories", params=query, headers=ACME)
    refused(found, 400, f"Value for '{name}' not supported.")


# -- listed -------------------------------------------------------------------------------


def test_the_sdk_lists_the_tenants_memories(acme: deepl.DeepLClient) -> None:
    listed = acme.list_translation_memories()
    assert [m.translation_memory_id for m in listed] == ["support", "zz-second"]
    first = listed[0]
    assert (first.name, first.source_language, first.target_languages) == ("support", "en", ["es"])
    assert first.segment_count == 2 and first.creation_time is not None
    again = acme.get_translation_memory(first)
    assert (again.translation_memory_id, again.segment_count) == ("support", 2)
    pages = [acme.list_translation_memories(page=n, page_size=1) for n in range(3)]
    assert [[m.name for m in page] for page in pages] == [["support"], ["zz-second"], []]


# -- applied -------------------------------------------------------------------------------


def test_texts_take_exact_matches_and_the_rest_is_translated_as_without(
    acme: deepl.DeepLClient,
) -> None:
    texts = [MATCHED, OTHER, " Hello   world. "]
    plain = texts_of(acme.translate_text(texts, source_lang="EN", target_lang="ES"))
    assert plain[0] != CUSTOM  # the engine's own, now in the segment cache too
    for threshold in (None, 0, 75, 100):
        found = acme.translate_text(
            texts,
            source_lang="EN",
            target_lang="ES",
            translation_memory="support",
            translation_memory_threshold=threshold,
        )
        # Whitespace runs aside the match is exact, and keeps the text's outer spaces.
        assert texts_of(found) == [CUSTOM, plain[1], f" {CUSTOM} "]
    detected = acme.translate_text(MATCHED, target_lang="ES", translation_memory="support")
    assert isinstance(detected, deepl.TextResult)
    assert (detected.text, detected.detected_source_lang) == (CUSTOM, "EN")
    # The memory's target never went into the cache: without it, the engine's again.
    assert texts_of(acme.translate_text(texts, source_lang="EN", target_lang="ES")) == plain


def test_near_matches_are_not_applied(acme: deepl.DeepLClient) -> None:
    near = ["Hello world!", "Hello, world."]
    plain = texts_of(acme.translate_text(near, source_lang="EN", target_lang="ES"))
    found = acme.translate_text(
        near,
        source_lang="EN",
        target_lang="ES",
        translation_memory="support",
        translation_memory_threshold=0,
    )
    assert texts_of(found) == plain and CUSTOM not in plain


def test_a_memory_applies_only_in_its_pair(acme: deepl.DeepLClient) -> None:
    plain = acme.translate_text(MATCHED, source_lang="EN", target_lang="CA")
    with_memory = acme.translate_text(
        MATCHED, source_lang="EN", target_lang="CA", translation_memory="support"
    )
    assert str(with_memory) == str(plain) != CUSTOM


def test_tagged_texts_take_matches_per_sentence(acme: deepl.DeepLClient) -> None:
    html = f"<p>{MATCHED}</p><p>{OTHER}</p>"
    plain = acme.translate_text(html, source_lang="EN", target_lang="ES", tag_handling="html")
    found = acme.translate_text(
        html,
        source_lang="EN",
        target_lang="ES",
        tag_handling="html",
        translation_memory="support",
    )
    assert str(found).startswith(f"<p>{CUSTOM}</p><p>")
    assert str(found).split("</p>")[1] == str(plain).split("</p>")[1]


def test_a_match_wins_over_the_glossary_which_keeps_the_rest(acme: deepl.DeepLClient) -> None:
    glossary = acme.create_glossary("pets", "EN", "ES", {"cat": "minino", "world": "orbe"})
    try:
        texts = [MATCHED, OTHER]
        kept = acme.translate_text(texts, source_lang="EN", target_lang="ES", glossary=glossary)
        found = acme.translate_text(
            texts,
            source_lang="EN",
            target_lang="ES",
            glossary=glossary,
            translation_memory="support",
        )
        assert "minino" in texts_of(kept)[1] and "orbe" in texts_of(kept)[0]
        assert texts_of(found) == [CUSTOM, texts_of(kept)[1]]
    finally:
        acme.delete_glossary(glossary)


def paragraphs(path: Path) -> list[str]:
    return re.findall(r"<p>(.*?)</p>", path.read_text())


def test_documents_take_the_memory(acme: deepl.DeepLClient, tmp_path: Path) -> None:
    page, out, bare = tmp_path / "page.html", tmp_path / "page.es.html", tmp_path / "bare.html"
    page.write_text(f"<html><body><p>{MATCHED}</p><p>{OTHER}</p></body></html>")
    acme.translate_document_from_filepath(page, bare, source_lang="EN", target_lang="ES")
    status = acme.translate_document_from_filepath(
        page,
        out,
        source_lang="EN",
        target_lang="ES",
        translation_memory="support",
        translation_memory_threshold=90,
    )
    assert status.done
    assert paragraphs(out) == [CUSTOM, paragraphs(bare)[1]] != paragraphs(bare)
    handle = acme.translate_document_upload(
        page.read_bytes(),
        filename="page.html",
        target_lang="ES",
        translation_memory="support",
    )
    acme.translate_document_wait_until_done(handle)
    with httpx.Client(base_url=acme.server_url) as http:
        job_id = handle.document_id.lower()  # the job id, as /v1 shows it
        found = http.get(f"/v1/jobs/{job_id}/result", headers=ACME_V1).json()
    assert found["documents"][0]["origins"][0] == "tm"
