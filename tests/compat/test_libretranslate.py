"""The LibreTranslate facade, spoken to by LibreTranslate's own clients, unchanged, over a
real socket (``dragoman serve`` with the real Apertium pairs): their answers equal
``/v1/translate``'s, and the routes keep LibreTranslate's shapes and status codes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from deep_translator import LibreTranslator
from deep_translator.exceptions import AuthorizationException
from libretranslate_aio import AsyncLibreTranslate, BadRequestError, ForbiddenError, LibreTranslate
from libretranslatepy import LibreTranslateAPI

from tests.integration.server import Server

pytestmark = pytest.mark.integration

TEXTS = ["Hello world.", "The cat is on the table.", "Good morning."]
ENGLISH = "The weather is lovely today, and we are going to the beach."
FRENCH = "Il fait très beau aujourd'hui, et nous allons à la plage."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp("lt") / "data") as running:
        yield running


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("lt-keyed") / "data"
    with Server(data, DRAGOMAN_API_KEYS="acme:secret-key") as running:
        yield running


@pytest.fixture(scope="module")
def http(server: Server) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def v1(http: httpx.Client, texts: list[str], source: str = "en", target: str = "es") -> list[str]:
    body = {"source_lang": source, "target_lang": target, "segments": texts}
    response = http.post("/v1/translate", json=body)
    assert response.status_code == 200, response.text
    translations: list[str] = response.json()["translations"]
    return translations


def test_libretranslatepy_translates_as_v1_does(server: Server, http: httpx.Client) -> None:
    api = LibreTranslateAPI(server.url)
    assert [api.translate(text, "en", "es") for text in TEXTS] == v1(http, TEXTS)
    assert (
        api.translate("Bonjour le monde.", "fr", "es") == v1(http, ["Bonjour le monde."], "fr")[0]
    )


def test_libretranslatepy_languages_and_detect(server: Server) -> None:
    api = LibreTranslateAPI(server.url)
    languages = {entry["code"]: entry for entry in api.languages()}
    assert languages["en"]["name"] == "English"
    assert {"es", "ca"} <= set(languages["en"]["targets"])
    assert "es" in languages["fr"]["targets"]
    assert api.detect(FRENCH)[0]["language"] == "fr"


def test_libretranslate_aio_sends_a_list_as_repeated_fields(
    server: Server, http: httpx.Client
) -> None:
    with LibreTranslate(server.url) as client:
        one = client.translate(TEXTS[0], "en", "es")
        many = client.translate(TEXTS, "en", "es")
        assert one.translated_text == v1(http, TEXTS[:1])[0]
        assert many.translated_text == v1(http, TEXTS)
        assert client.detect(ENGLISH)[0].language == "en"
        assert client.health()
        settings = client.frontend_settings()
        assert ".html" in settings.supported_files_format
        assert not settings.key_required
        with pytest.raises(BadRequestError, match="zz is not supported"):
            client.translate("Hello", "en", "zz")


async def test_libretranslate_aio_async_client(server: Server, http: httpx.Client) -> None:
    async with AsyncLibreTranslate(server.url) as client:
        result = await client.translate(TEXTS, "en", "es")
        detected = await client.translate([ENGLISH, FRENCH], "auto", "es")
    assert result.translated_text == v1(http, TEXTS)
    assert detected.translated_text == [v1(http, [ENGLISH])[0], v1(http, [FRENCH], "fr")[0]]
    assert isinstance(detected.detected_language, list)
    assert [d.language for d in detected.detected_language] == ["en", "fr"]


def test_deep_translator_posts_in_the_query_string(server: Server, http: httpx.Client) -> None:
    translator = LibreTranslator(
        source="en", target="es", custom_url=f"{server.url}/", api_key="any"
    )
    assert translator.translate(TEXTS[1]) == v1(http, TEXTS[1:2])[0]
    assert translator.translate_batch(TEXTS) == v1(http, TEXTS)


def test_translate_file_then_download_it(server: Server, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<html><body><p>Hello <b>big</b> world.</p></body></html>")
    with LibreTranslate(server.url) as client:
        url = client.translate_file(page, "en", "es").translated_file_url
    assert url.endswith("/page.es.html")
    response = httpx.get(url, timeout=30)
    assert response.status_code == 200
    assert "<b>grande</b>" in response.text
    assert 'filename="page.es.html"' in response.headers["content-disposition"]
    assert httpx.get(url.replace("page.es.html", "other.html")).status_code == 404


def test_translate_file_detects_the_source(
    server: Server, http: httpx.Client, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text(FRENCH + "\n")
    with LibreTranslate(server.url) as client:
        url = client.translate_file(notes, "auto", "es").translated_file_url
    assert url.endswith("/notes.es.txt")
    assert httpx.get(url, timeout=30).text == v1(http, [FRENCH], "fr")[0] + "\n"


def test_translate_file_refuses_an_unknown_extension(http: httpx.Client) -> None:
    files = {"file": ("notes.xyz", b"Hello")}
    response = http.post("/translate_file", data={"source": "en", "target": "es"}, files=files)
    assert response.status_code == 400
    assert ".xyz is not a supported format" in response.json()["error"]


def test_translate_file_refuses_a_markdown_file_over_its_limit(http: httpx.Client) -> None:
    page = b"Hello world.\n\n" * (2 * 2**20 // 14 + 1)  # past DRAGOMAN_MAX_TREE_FILE_BYTES
    files = {"file": ("notes.md", page)}
    response = http.post("/translate_file", data={"source": "en", "target": "es"}, files=files)
    assert response.status_code == 400
    assert "notes.md: larger than the limit" in response.json()["error"]


def test_answer_shapes(http: httpx.Client) -> None:
    def post(**body: object) -> dict[str, object]:
        response = http.post("/translate", json=body)
        assert response.status_code == 200, response.text
        found: dict[str, object] = response.json()
        return found

    assert post(q="Hello world.", source="en", target="es") == {"translatedText": "Hola Mundo."}
    assert post(q=["Hello world."], source="en", target="es") == {"translatedText": ["Hola Mundo."]}
    assert post(q="Hello world.", source="en", target="es", alternatives=3)["alternatives"] == []
    auto = post(q=ENGLISH, source="auto", target="es")
    assert auto["detectedLanguage"] == {"confidence": pytest.approx(100, abs=5), "language": "en"}


def test_html_keeps_the_tags_on_their_words(http: httpx.Client) -> None:
    body = {"q": "Hello <b>big</b> world.", "source": "en", "target": "es", "format": "html"}
    response = http.post("/translate", data=body)
    assert response.status_code == 200
    assert "<b>grande</b>" in response.json()["translatedText"]
    body = {**body, "q": [body["q"], "Good <i>morning</i>."], "source": "auto"}
    found = http.post("/translate", json=body).json()
    assert found["translatedText"][0] == response.json()["translatedText"]
    assert "<i>" in found["translatedText"][1]
    assert [d["language"] for d in found["detectedLanguage"]] == ["en", "en"]


def test_detect(http: httpx.Client) -> None:
    for text, language in [(ENGLISH, "en"), (FRENCH, "fr")]:
        response = http.post("/detect", data={"q": text})
        assert response.status_code == 200
        (best,) = response.json()
        assert best["language"] == language
        assert 90 <= best["confidence"] <= 100


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"source": "en", "target": "es"}, "Invalid request: missing q parameter"),
        ({"q": "Hi", "target": "es"}, "Invalid request: missing source parameter"),
        ({"q": "Hi", "source": "en"}, "Invalid request: missing target parameter"),
        ({"q": "Hi", "source": "en", "target": "zz"}, "zz is not supported"),
        ({"q": "Hi", "source": "xx", "target": "es"}, "xx is not supported"),
        ({"q": "Hi", "source": "english", "target": "es"}, "english is not supported"),
        ({"q": "Hi", "source": "ca", "target": "fr"}, "is not available as a target language"),
        ({"q": "a" * 10_001, "source": "en", "target": "es"}, "exceeds text limit (10000)"),
        ({"q": ["Hi"] * 101, "source": "en", "target": "es"}, "exceeds text limit (100)"),
        ({"q": 42, "source": "en", "target": "es"}, "q must be a string"),
        ({"q": "Hi", "source": "en", "target": "es", "format": "pdf"}, "format"),
    ],
)
def test_bad_requests_are_400_in_libretranslate_shape(
    http: httpx.Client, body: dict[str, object], message: str
) -> None:
    response = http.post("/translate", json=body)
    assert response.status_code == 400
    assert set(response.json()) == {"error"}
    assert message in response.json()["error"]


def test_malformed_bodies_are_400(http: httpx.Client) -> None:
    for content in (b"{not json", b"[1, 2]"):
        headers = {"content-type": "application/json"}
        response = http.post("/translate", content=content, headers=headers)
        assert response.status_code == 400
        assert isinstance(response.json()["error"], str)
    assert http.post("/detect").status_code == 400


def test_wrong_method_is_405_with_allow(http: httpx.Client) -> None:
    for method, path, allow in [("GET", "/translate", "POST"), ("POST", "/languages", "GET")]:
        response = http.request(method, path)
        assert response.status_code == 405
        assert allow in response.headers["allow"]


def test_settings_languages_and_health(http: httpx.Client) -> None:
    settings = http.get("/frontend/settings").json()
    assert settings["charLimit"] == 10_000
    assert settings["apiKeys"] is False
    assert settings["language"]["source"] == {"code": "auto", "name": "Auto Detect"}
    assert http.get("/health").json() == {"status": "ok"}
    codes = {entry["code"] for entry in http.get("/languages").json()}
    assert {"en", "es", "fr", "ca"} <= codes


def test_keys_are_checked_when_configured(keyed: Server) -> None:
    body = {"q": "Hello world.", "source": "en", "target": "es"}
    with keyed.client() as http:
        for key in (None, "wrong"):
            response = http.post("/translate", json={**body, "api_key": key})
            assert response.status_code == 403
            assert response.json() == {"error": "Invalid API key"}
        good = http.post("/translate", data={**body, "api_key": "secret-key"})
        assert good.json() == {"translatedText": "Hola Mundo."}
        assert http.get("/languages").status_code == 200
        assert http.get("/frontend/settings").json()["keyRequired"] is True
    with LibreTranslate(keyed.url, api_key="wrong") as client, pytest.raises(ForbiddenError):
        client.translate("Hello", "en", "es")
    assert LibreTranslateAPI(keyed.url, "secret-key").translate("Hello world.") == "Hola Mundo."
    custom = f"{keyed.url}/"
    good = LibreTranslator(source="en", target="es", custom_url=custom, api_key="secret-key")
    assert good.translate("Hello world.") == "Hola Mundo."
    with pytest.raises(AuthorizationException):
        LibreTranslator(source="en", target="es", custom_url=custom, api_key="bad").translate("Hi")
