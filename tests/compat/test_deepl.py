"""The DeepL v2 facade, spoken to by DeepL's own Python SDK, unchanged, over a real socket
(``dragoman serve`` with the real Apertium pairs): its answers equal ``/v1/translate``'s,
and the routes keep DeepL's shapes and status codes."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import deepl
import docx
import httpx
import pytest

from dragoman.api.deepl.documents import not_ready, seconds_remaining
from dragoman.models import Job, JobStatus, Pool, utcnow
from tests.integration.server import Server

pytestmark = pytest.mark.integration

TEXTS = ["Hello world.", "The cat is on the table.", "Good morning."]
KEYS = "acme:key-acme,beta:key-beta,poor:key-poor,busy:key-busy"
LIMITS = "poor:20:0,busy:0:1"  # 20 characters a month; one request a minute


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server]]:
    """One server without keys, one with tenants and limits, started side by side."""
    plain = Server(tmp_path_factory.mktemp("deepl") / "data")
    data = tmp_path_factory.mktemp("deepl-keyed") / "data"
    keyed = Server(data, DRAGOMAN_API_KEYS=KEYS, DRAGOMAN_TENANT_LIMITS=LIMITS)
    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(Server.start, (plain, keyed)))
        yield plain, keyed
    finally:
        for running in (plain, keyed):
            if running.proc is not None:
                running.stop(signal.SIGKILL)


@pytest.fixture(scope="module")
def server(servers: tuple[Server, Server]) -> Server:
    return servers[0]


@pytest.fixture(scope="module")
def keyed(servers: tuple[Server, Server]) -> Server:
    return servers[1]


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


@pytest.fixture
def translator(server: Server) -> Iterator[deepl.Translator]:
    # A free-account key (":fx") picks DeepL's free host only when no server_url is given.
    found = deepl.Translator("any-key:fx", server_url=server.url)
    yield found
    found.close()  # type: ignore[no-untyped-call]


def v1(http: httpx.Client, texts: list[str], source: str = "en", target: str = "es") -> list[str]:
    body = {"source_lang": source, "target_lang": target, "segments": texts}
    response = http.post("/v1/translate", json=body)
    assert response.status_code == 200, response.text
    translations: list[str] = response.json()["translations"]
    return translations


def untagged(text: str) -> str:
    return " ".join(re.sub(r"<[^>]*>", " ", text).split()).replace(" .", ".")


def test_translate_text_equals_v1(translator: deepl.Translator, http: httpx.Client) -> None:
    one = translator.translate_text(TEXTS[0], target_lang="ES")
    assert isinstance(one, deepl.TextResult)
    assert (one.text, one.detected_source_lang) == (v1(http, TEXTS[:1])[0], "EN")
    assert one.billed_characters == len(TEXTS[0])
    many = translator.translate_text(TEXTS, source_lang="EN", target_lang="es")
    assert isinstance(many, list)
    assert [r.text for r in many] == v1(http, TEXTS)
    assert {r.detected_source_lang for r in many} == {"EN"}


def test_reverse_pair_into_english_variants(
    translator: deepl.Translator, http: httpx.Client
) -> None:
    spanish = ["Hola mundo.", "El gato está en la mesa."]
    expected = v1(http, spanish, "es", "en")
    for target in ("EN-US", "en-gb"):
        found = translator.translate_text(spanish, source_lang="es", target_lang=target)
        assert isinstance(found, list)
        assert [r.text for r in found] == expected
    detected = translator.translate_text(spanish[1], target_lang="EN-US")
    assert isinstance(detected, deepl.TextResult)
    assert (detected.text, detected.detected_source_lang) == (expected[1], "ES")


def test_html_keeps_the_tags_on_their_words(
    translator: deepl.Translator, http: httpx.Client
) -> None:
    text = "Hello <b>big</b> world."
    found = translator.translate_text(text, source_lang="EN", target_lang="ES", tag_handling="html")
    assert isinstance(found, deepl.TextResult)
    assert "<b>grande</b>" in found.text
    lt = http.post("/translate", json={"q": text, "source": "en", "target": "es", "format": "html"})
    assert found.text == lt.json()["translatedText"]


def test_xml_placeholders_stay_inside_their_sentence(
    translator: deepl.Translator, http: httpx.Client
) -> None:
    texts = [
        'Hello <x id="1"/> world, how are you?',
        'The <x id="1"/>cat<x id="2"/> is on the <g id="3">big</g> table.',
    ]
    found = translator.translate_text(
        texts, source_lang="EN", target_lang="ES", tag_handling="xml", ignore_tags="x"
    )
    assert isinstance(found, list)
    assert [re.findall(r"<[^>]*>", r.text) for r in found] == [
        re.findall(r"<[^>]*>", t) for t in texts
    ]
    # One sentence each, translated as v1 translates it without its tags.
    assert [untagged(r.text) for r in found] == v1(http, [untagged(t) for t in texts])


def test_weblate_requests_keep_their_placeholders(http: httpx.Client) -> None:
    texts = ['Hello <x id="6"></x> world, how are you?', 'You have <x id="9"></x> new messages.']
    body = {
        "text": texts,
        "source_lang": "EN",
        "target_lang": "ES",
        "formality": "default",
        "tag_handling": "xml",
        "ignore_tags": ["x"],
    }  # as Weblate's DeepL backend sends it
    response = http.post("/v2/translate", json=body)
    assert response.status_code == 200
    found = [t["text"] for t in response.json()["translations"]]
    assert ['<x id="6"></x>' in found[0], '<x id="9"></x>' in found[1]] == [True, True]
    assert [untagged(t) for t in found] == [
        t.strip() for t in v1(http, [untagged(t) for t in texts])
    ]


def test_ignore_tags_keep_their_content(translator: deepl.Translator) -> None:
    text = "The cat <keep>Big Cat</keep> is on the table."
    for handling in ("xml", "html"):
        found = translator.translate_text(
            text, source_lang="EN", target_lang="ES", tag_handling=handling, ignore_tags=["keep"]
        )
        assert isinstance(found, deepl.TextResult)
        assert "<keep>Big Cat</keep>" in found.text
        assert "gato" in found.text


def test_languages(translator: deepl.Translator) -> None:
    sources = {lang.code: lang.name for lang in translator.get_source_languages()}
    assert {"EN": "English", "ES": "Spanish", "FR": "French", "CA": "Catalan"}.items() <= (
        sources.items()
    )
    targets = {lang.code: lang for lang in translator.get_target_languages()}
    assert {"EN-GB", "EN-US", "ES", "CA"} <= set(targets)
    assert "EN" not in targets
    assert targets["EN-US"].name == "English (American)"
    assert not any(lang.supports_formality for lang in targets.values())


def test_options_are_accepted(translator: deepl.Translator, http: httpx.Client) -> None:
    found = translator.translate_text(
        TEXTS[1],
        source_lang="EN",
        target_lang="ES",
        split_sentences="0",
        preserve_formatting=True,
        formality="prefer_less",
        context="A sentence about pets.",
        model_type="quality_optimized",
    )
    assert isinstance(found, deepl.TextResult)
    assert found.text == v1(http, TEXTS[1:2])[0]
    assert found.model_type_used == "quality_optimized"  # Apertium's pair: its one engine


def test_translate_documents(
    translator: deepl.Translator, http: httpx.Client, tmp_path: Path
) -> None:
    page, out = tmp_path / "page.html", tmp_path / "page.es.html"
    page.write_text("<html><body><p>Hello <b>big</b> world.</p><p>Good morning.</p></body></html>")
    status = translator.translate_document_from_filepath(
        page, out, source_lang="EN", target_lang="ES"
    )
    assert status.done
    assert status.billed_characters == len("Hello big world.Good morning.")
    assert "<b>grande</b>" in out.read_text()
    assert f"<p>{v1(http, ['Good morning.'])[0]}</p>" in out.read_text()

    letter = docx.Document()
    for text in TEXTS:
        letter.add_paragraph(text)
    source, result = tmp_path / "letter.docx", tmp_path / "letter.es.docx"
    letter.save(str(source))
    translator.translate_document_from_filepath(source, result, target_lang="ES")  # detected
    assert [p.text for p in docx.Document(str(result)).paragraphs] == v1(http, TEXTS)


def test_documents_refuse_what_they_cannot_do(translator: deepl.Translator, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<p>Hello world.</p>")
    with pytest.raises(deepl.DeepLException, match="output_format"):
        translator.translate_document_from_filepath(page, tmp_path / "page.pdf", target_lang="ES")
    with pytest.raises(deepl.DeepLException, match="Invalid file data"):
        translator.translate_document_upload(b"Hello", filename="notes.xyz", target_lang="ES")
    with pytest.raises(deepl.DeepLException, match="equal"):
        translator.translate_document_upload(
            b"Hello", filename="a.txt", target_lang="EN-US", source_lang="EN"
        )


def test_a_bad_key_is_refused(keyed: Server) -> None:
    with pytest.raises(deepl.AuthorizationException):
        deepl.Translator("wrong-key", server_url=keyed.url).translate_text("Hi", target_lang="ES")
    with keyed.client() as http:
        for headers in ({}, {"Authorization": "DeepL-Auth-Key wrong"}):
            response = http.post(
                "/v2/translate", data={"text": "Hi", "target_lang": "ES"}, headers=headers
            )
            assert response.status_code == 403
            assert set(response.json()) == {"message"}
        malformed = {"content-type": "application/json", "Authorization": "DeepL-Auth-Key no"}
        assert http.post("/v2/translate", content=b"{", headers=malformed).status_code == 403
        legacy = {"text": "Hello world.", "target_lang": "ES", "auth_key": "key-acme"}
        assert http.post("/v2/translate", data=legacy).status_code == 200
        bearer = {"Authorization": "Bearer key-acme"}
        assert http.get("/v2/usage", headers=bearer).status_code == 200


def test_usage_counts_each_tenant(keyed: Server) -> None:
    acme = deepl.Translator("key-acme", server_url=keyed.url)
    before = acme.get_usage().character
    acme.translate_text(TEXTS, target_lang="ES")
    after = acme.get_usage().character
    assert after.count == (before.count or 0) + sum(len(t) for t in TEXTS)
    assert after.limit == 1_000_000_000_000
    assert deepl.Translator("key-beta", server_url=keyed.url).get_usage().character.count == 0


def test_a_spent_quota_is_456(keyed: Server) -> None:
    poor = deepl.Translator("key-poor", server_url=keyed.url)
    poor.translate_text("Hello world.", target_lang="ES")  # 12 of 20
    with pytest.raises(deepl.QuotaExceededException):
        poor.translate_text("Hello world.", target_lang="ES")
    with pytest.raises(deepl.QuotaExceededException):  # a document is charged its text
        poor.translate_document_upload(b"Hello world.\n", filename="a.txt", target_lang="ES")
    usage = poor.get_usage().character
    assert (usage.count, usage.limit, usage.limit_reached) == (12, 20, False)


def test_a_rate_limit_is_429_with_retry_after(
    keyed: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deepl.http_client, "max_network_retries", 0)
    busy = deepl.Translator("key-busy", server_url=keyed.url)
    busy.translate_text("Hello world.", target_lang="ES")
    with pytest.raises(deepl.TooManyRequestsException):
        busy.translate_text("Hello world.", target_lang="ES")
    with keyed.client() as http:
        headers = {"Authorization": "DeepL-Auth-Key key-busy"}
        response = http.post(
            "/v2/translate", data={"text": "Hi", "target_lang": "ES"}, headers=headers
        )
    assert response.status_code == 429
    assert 1 <= int(response.headers["retry-after"]) <= 60
    assert set(response.json()) == {"message"}


def test_a_document_is_its_owners_alone(keyed: Server) -> None:
    acme = deepl.Translator("key-acme", server_url=keyed.url)
    beta = deepl.Translator("key-beta", server_url=keyed.url)
    handle = acme.translate_document_upload(b"Hello world.\n", filename="a.txt", target_lang="ES")
    assert len(handle.document_key) == 64
    wrong = deepl.DocumentHandle(handle.document_id, "0" * 64)
    for who, what in ((beta, handle), (acme, wrong)):
        with pytest.raises(deepl.DeepLException, match="Not found") as refused:
            who.translate_document_get_status(what)
        assert refused.value.http_status_code == 404
        with pytest.raises(deepl.DeepLException, match="Not found"):
            who.translate_document_download(what)
    deadline = time.monotonic() + 30
    while not acme.translate_document_get_status(handle).done:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    downloaded = acme.translate_document_download(handle)
    assert downloaded is not None
    with keyed.client() as http:
        http.headers["Authorization"] = "Bearer key-acme"
        assert downloaded.text == v1(http, ["Hello world."])[0] + "\n"
    with pytest.raises(deepl.DeepLException, match="Not found"):
        beta.translate_document_download(handle)


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"text": ["Hi"]}, 400, "Parameter 'target_lang' not specified."),
        ({"target_lang": "ES"}, 400, "Parameter 'text' not specified."),
        ({"text": [], "target_lang": "ES"}, 400, "Parameter 'text' not specified."),
        ({"text": [42], "target_lang": "ES"}, 400, "list of strings"),
        ({"text": ["Hi"], "target_lang": "XX"}, 400, "Value for 'target_lang' not supported."),
        ({"text": ["Hi"], "target_lang": "EN-AU"}, 400, "Value for 'target_lang' not supported."),
        ({"text": ["Hi"], "target_lang": "ES", "source_lang": "english"}, 400, "source_lang"),
        ({"text": ["Hi"], "target_lang": "CA", "source_lang": "FR"}, 400, "No translation from FR"),
        ({"text": ["Hi"], "target_lang": "ES", "formality": "more"}, 400, "'formality' is not"),
        ({"text": ["Hi"], "target_lang": "ES", "formality": "odd"}, 400, "'formality'"),
        ({"text": ["Hi"], "target_lang": "ES", "split_sentences": "2"}, 400, "split_sentences"),
        ({"text": ["Hi"], "target_lang": "ES", "tag_handling": "pdf"}, 400, "tag_handling"),
        ({"text": ["Hi"], "target_lang": "ES", "preserve_formatting": "x"}, 400, "preserve"),
        ({"text": ["Hi"] * 101, "target_lang": "ES"}, 413, "Too many texts"),
        ({"text": ["a" * 10_001], "target_lang": "ES"}, 413, "characters"),
    ],
)
def test_bad_requests_in_deepl_shape(
    http: httpx.Client, body: dict[str, object], status: int, message: str
) -> None:
    response = http.post("/v2/translate", json=body)
    assert response.status_code == status
    assert set(response.json()) == {"message"}
    assert message in response.json()["message"]


def test_a_markdown_document_over_its_limit_is_a_413(http: httpx.Client) -> None:
    page = b"Hello world.\n\n" * (2 * 2**20 // 14 + 1)  # past DRAGOMAN_MAX_TREE_FILE_BYTES
    files = {"file": ("notes.md", page)}
    response = http.post("/v2/document", data={"target_lang": "ES"}, files=files)
    assert response.status_code == 413
    assert "notes.md: larger than the limit" in response.json()["message"]


def test_malformed_bodies_and_unknown_routes(
    http: httpx.Client, translator: deepl.Translator
) -> None:
    for content in (b"{not json", b"[1, 2]"):
        headers = {"content-type": "application/json"}
        response = http.post("/v2/translate", content=content, headers=headers)
        assert response.status_code == 400
        assert isinstance(response.json()["message"], str)
    assert http.post("/v2/document", data={"target_lang": "ES"}).json() == {
        "message": "Invalid file data."
    }
    assert http.post("/v2/document/abc", json={}).status_code == 400  # no document_key
    assert http.post("/v2/document/abc", json={"document_key": "k"}).status_code == 404
    for method, path in (("GET", "/v2/nothing"), ("DELETE", "/v2/translate")):
        response = http.request(method, path)
        assert response.status_code == 404
        assert set(response.json()) == {"message"}
    assert http.get("/v2/languages", params={"type": "both"}).status_code == 400
    with pytest.raises(deepl.DeepLException, match="Bad request"):
        translator.translate_text("Hi", target_lang="XX")


def _job(**fields: object) -> Job:
    base: dict[str, object] = {
        "id": "j", "tenant": None, "source_lang": "en", "target_lang": "es",
        "engine": "apertium", "pool": Pool.CPU,
        "documents": 1, "segments_total": 30,
    }  # fmt: skip
    return Job(**{**base, **fields})  # type: ignore[arg-type]


def test_seconds_remaining_follow_the_jobs_pace() -> None:
    started = utcnow() - timedelta(seconds=10)
    assert seconds_remaining(
        _job(status=JobStatus.RUNNING, started_at=started, segments_done=10)
    ) in (20, 21)
    assert seconds_remaining(_job()) >= 1
    early = not_ready(_job(status=JobStatus.RUNNING))
    assert (early.status, early.message) == (503, "Document translation is not done")
    assert early.retry_after_s is not None and early.retry_after_s >= 1
    failed = not_ready(_job(status=JobStatus.FAILED))
    assert failed.status == 400
