"""Honest detection through the ecosystem's own clients, over a real socket (``dragoman
serve`` with the real Apertium pairs): DeepL's SDK without ``source_lang`` and
LibreTranslate's clients with ``auto`` get a text in the target back as it is, a 400 naming
both languages for one that nothing translates into the target, and the language with a
route for a short text the model alone cannot tell."""

from __future__ import annotations

import io
from collections.abc import Iterator

import deepl
import httpx
import pytest
from libretranslate_aio import BadRequestError, LibreTranslate

from tests.integration.server import Server

pytestmark = pytest.mark.integration

SPANISH = "Hace un tiempo estupendo hoy y vamos a ir a la playa."
GERMAN = "Ich habe heute keine Zeit für das Treffen."
SHORT = "proton beam"  # Northern Sami 0.075, English 0.052: a near-tie for the model


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp("detection") / "data") as running:
        yield running


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


@pytest.fixture
def translator(server: Server) -> Iterator[deepl.Translator]:
    found = deepl.Translator("any-key:fx", server_url=server.url)
    yield found
    found.close()  # type: ignore[no-untyped-call]


def v1(http: httpx.Client, texts: list[str], source: str, target: str) -> list[str]:
    body = {"source_lang": source, "target_lang": target, "segments": texts}
    response = http.post("/v1/translate", json=body)
    assert response.status_code == 200, response.text
    translations: list[str] = response.json()["translations"]
    return translations


def test_deepl_gives_a_text_in_the_target_back_unchanged(translator: deepl.Translator) -> None:
    found = translator.translate_text(SPANISH, target_lang="ES")
    assert isinstance(found, deepl.TextResult)
    assert (found.text, found.detected_source_lang) == (SPANISH, "ES")


def test_deepl_refuses_a_language_with_no_route_naming_both(
    translator: deepl.Translator,
) -> None:
    with pytest.raises(deepl.DeepLException, match="from DE into ES") as refused:
        translator.translate_text([SPANISH, GERMAN], target_lang="ES")
    assert refused.value.http_status_code == 400


def test_deepl_reads_a_short_near_tie_as_a_language_with_a_route(
    translator: deepl.Translator, http: httpx.Client
) -> None:
    found = translator.translate_text(SHORT, target_lang="FR")
    assert isinstance(found, deepl.TextResult)
    assert (found.text, found.detected_source_lang) == (v1(http, [SHORT], "en", "fr")[0], "EN")


def test_deepl_takes_a_document_in_the_target_then_ends_it_in_error(
    translator: deepl.Translator,
) -> None:
    out = io.BytesIO()
    with pytest.raises(deepl.DocumentTranslationException) as failed:
        translator.translate_document(SPANISH.encode(), out, filename="playa.txt", target_lang="ES")
    assert out.getvalue() == b""
    assert "Source and target language are equal." in str(failed.value)
    handle = failed.value.document_handle
    assert handle is not None
    status = translator.translate_document_get_status(handle)
    assert (status.status, status.error_message) == (
        deepl.DocumentStatus.Status.ERROR,
        "Source and target language are equal.",
    )


def test_deepl_refuses_a_document_with_no_route(translator: deepl.Translator) -> None:
    with pytest.raises(deepl.DeepLException, match="from DE into ES"):
        translator.translate_document_upload(GERMAN.encode(), filename="a.txt", target_lang="ES")


def test_libretranslate_follows_the_same_rule(server: Server, http: httpx.Client) -> None:
    with LibreTranslate(server.url) as client:
        same = client.translate(SPANISH, "auto", "es")
        assert same.translated_text == SPANISH
        assert same.detected_language.language == "es"  # type: ignore[union-attr]
        short = client.translate(SHORT, "auto", "fr")
        assert short.translated_text == v1(http, [SHORT], "en", "fr")[0]
        assert short.detected_language.language == "en"  # type: ignore[union-attr]
        with pytest.raises(BadRequestError, match=r"\(es\) is not available .* German \(de\)"):
            client.translate(GERMAN, "auto", "es")


def test_libretranslate_detect_is_honest(http: httpx.Client) -> None:
    (found,) = http.post("/detect", data={"q": GERMAN}).json()
    assert found["language"] == "de"  # no installed pair reads German
    assert found["confidence"] > 99
    (short,) = http.post("/detect", data={"q": SHORT}).json()
    assert short["language"] == "en"
    assert 0 < short["confidence"] < 10  # a near-tie, said so


def test_libretranslate_file_in_the_target_is_a_400(http: httpx.Client) -> None:
    files = {"file": ("playa.txt", SPANISH.encode())}
    response = http.post("/translate_file", data={"source": "auto", "target": "es"}, files=files)
    assert response.status_code == 400
    assert response.json() == {"error": "Invalid request: Source and target language are equal."}
