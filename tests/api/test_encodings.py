"""Every character arrives: a text reaches the engine with the same code points whichever
way a client sent it (JSON, urlencoded with raw UTF-8 bytes as ``curl -d`` sends them,
percent-encoded, multipart, the query string), for every text route; bytes that are not text
in the charset in force are a 400 naming the field; no answer gains whitespace at its edges."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dragoman.api.app import create_app
from dragoman.engines import Engines, Pair
from dragoman.services import EmbeddedService
from tests.conftest import stop_service


class RecordingEngine:
    """Gives back each segment wrapped in brackets and keeps what it was given."""

    name = "recording"
    gpu_capable = False

    def __init__(self) -> None:
        self.received: list[str] = []

    def pairs(self) -> frozenset[Pair]:
        return frozenset({Pair("es", "en"), Pair("en", "es"), Pair("en", "de")})

    def warm_pairs(self) -> frozenset[Pair]:
        return self.pairs()

    def version(self, pair: Pair) -> str:
        return "1"

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        self.received += segments
        return [f" [{s.strip()}] " for s in segments]  # an engine adding space at the edges

    async def close(self) -> None:
        pass


@pytest.fixture
async def api(make_settings: Any) -> AsyncIterator[tuple[httpx.AsyncClient, RecordingEngine]]:
    engine = RecordingEngine()
    service = EmbeddedService(make_settings(cache=False), engines=Engines([engine]))
    await service.start()
    app = create_app(service, manage_lifecycle=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        yield c, engine
    await stop_service(service)


FORM = "application/x-www-form-urlencoded"


def raw_form(fields: dict[str, str]) -> bytes:
    """As ``curl -d`` sends it: UTF-8 bytes as they are; only the form's own syntax
    characters (``&``, ``=``, ``+``, ``%``) escaped."""

    def escape(text: str) -> bytes:
        return "".join(quote(c) if c in "&=+%" else c for c in text).encode()

    return b"&".join(escape(k) + b"=" + escape(v) for k, v in fields.items())


async def send(client: httpx.AsyncClient, way: str, path: str, fields: dict[str, str]) -> Any:
    if way == "json":
        return await client.post(path, json=fields)
    if way == "raw":
        return await client.post(path, content=raw_form(fields), headers={"content-type": FORM})
    if way == "encoded":
        return await client.post(path, content=urlencode(fields), headers={"content-type": FORM})
    assert way == "query"
    return await client.post(f"{path}?{urlencode(fields)}")


WAYS = ("json", "raw", "encoded", "multipart", "query")

TEXT = st.text(
    st.characters(
        blacklist_categories=("Cs", "Cc"),
        blacklist_characters="\ufffe\uffff\ufeff",
    ),
    min_size=1,
    max_size=40,
).filter(lambda t: t.strip() != "")

SAMPLES = ["¿Dónde está la estación?", "Cuesta 5 €.", "a&b=c+d%20e", "مرحبا 𝄞 e\u0301 ü"]


async def multipart(client: httpx.AsyncClient, path: str, fields: dict[str, str]) -> Any:
    boundary = "x-boundary-x"
    body = (
        b"".join(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n'.encode()
            + v.encode()
            + b"\r\n"
            for k, v in fields.items()
        )
        + f"--{boundary}--\r\n".encode()
    )
    return await client.post(
        path, content=body, headers={"content-type": f"multipart/form-data; boundary={boundary}"}
    )


async def each_way(
    client: httpx.AsyncClient, engine: RecordingEngine, path: str, fields: dict[str, str]
) -> dict[str, tuple[int, Any, list[str]]]:
    seen = {}
    for way in WAYS:
        engine.received.clear()
        if way == "multipart":
            response = await multipart(client, path, fields)
        else:
            response = await send(client, way, path, fields)
        seen[way] = (response.status_code, response.json(), list(engine.received))
    return seen


@pytest.mark.parametrize("text", SAMPLES)
async def test_libretranslate_gets_the_same_text_every_way(
    api: tuple[httpx.AsyncClient, RecordingEngine], text: str
) -> None:
    client, engine = api
    seen = await each_way(client, engine, "/translate", {"q": text, "source": "es", "target": "en"})
    for way, (status, body, received) in seen.items():
        assert status == 200, (way, body)
        assert received == [text.strip()], way
        assert body == {"translatedText": f"[{text.strip()}]"}, way


async def test_deepl_bills_and_translates_the_same_text_every_way(
    api: tuple[httpx.AsyncClient, RecordingEngine],
) -> None:
    client, engine = api
    text = "Cuesta 5 €."
    seen = await each_way(
        client, engine, "/v2/translate", {"text": text, "source_lang": "ES", "target_lang": "EN"}
    )
    for way, (status, body, received) in seen.items():
        assert status == 200, (way, body)
        assert received == [text], way
        (translation,) = body["translations"]
        assert translation["text"] == f"[{text}]", way
        assert translation["billed_characters"] == 11, way


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=TEXT)
async def test_any_text_reaches_the_engine_unchanged_whichever_way_it_comes(
    api: tuple[httpx.AsyncClient, RecordingEngine], text: str
) -> None:
    client, engine = api
    lt = await each_way(client, engine, "/translate", {"q": text, "source": "en", "target": "es"})
    deepl = await each_way(
        client, engine, "/v2/translate", {"text": text, "source_lang": "EN", "target_lang": "ES"}
    )
    detect = await each_way(client, engine, "/detect", {"q": text})
    expected = lt["json"]
    assert expected[0] == 200
    # The engine gets every code point of the text (lines may come as segments of their own).
    assert "".join("".join(expected[2]).split()) == "".join(text.split())
    for way in WAYS:
        assert lt[way] == expected, way
        assert deepl[way] == deepl["json"], way
        assert detect[way][:2] == detect["json"][:2], way
    billed = deepl["json"][1]["translations"][0]["billed_characters"]
    assert billed == len(text)


async def test_a_deepl_glossary_keeps_its_name_and_entries_every_way(
    api: tuple[httpx.AsyncClient, RecordingEngine],
) -> None:
    client, _ = api
    fields = {
        "name": "glosa ñ €",
        "source_lang": "en",
        "target_lang": "de",
        "entries": "café\tKaffee ☕\nnaïve\tnaiv",
        "entries_format": "tsv",
    }
    for way in WAYS:
        if way == "multipart":
            created = await multipart(client, "/v2/glossaries", fields)
        else:
            created = await send(client, way, "/v2/glossaries", fields)
        assert created.status_code == 201, (way, created.text)
        glossary = created.json()
        assert glossary["name"] == "glosa ñ €", way
        entries = await client.get(f"/v2/glossaries/{glossary['glossary_id']}/entries")
        assert entries.text == "café\tKaffee ☕\nnaïve\tnaiv", way


@pytest.mark.parametrize(
    ("path", "fields", "field"),
    [
        ("/translate", b"q=caf\xe9&source=es&target=en", "q"),
        ("/translate", b"q=caf%E9&source=es&target=en", "q"),
        ("/v2/translate", b"text=caf\xe9&target_lang=EN", "text"),
        ("/detect", b"q=\xff\xfe", "q"),
    ],
)
async def test_bytes_that_are_not_utf8_are_a_400_naming_the_field(
    api: tuple[httpx.AsyncClient, RecordingEngine], path: str, fields: bytes, field: str
) -> None:
    client, engine = api
    response = await client.post(path, content=fields, headers={"content-type": FORM})
    assert response.status_code == 400
    message = json.dumps(response.json())
    assert f"{field}: byte" in message and "utf-8" in message
    assert engine.received == []


async def test_a_declared_charset_is_honoured(
    api: tuple[httpx.AsyncClient, RecordingEngine],
) -> None:
    client, engine = api
    for charset in ("ISO-8859-1", "windows-1252"):
        engine.received.clear()
        body = "q=Café 5 €&source=es&target=en".encode(
            "cp1252" if "1252" in charset else "latin-1", errors="replace"
        )
        if charset == "ISO-8859-1":
            body = "q=Café&source=es&target=en".encode("latin-1")
        response = await client.post(
            "/translate", content=body, headers={"content-type": f"{FORM}; charset={charset}"}
        )
        assert response.status_code == 200, response.text
        assert engine.received == (["Café"] if charset == "ISO-8859-1" else ["Café 5 €"])


async def test_a_multipart_part_or_charset_field_names_its_charset(
    api: tuple[httpx.AsyncClient, RecordingEngine],
) -> None:
    client, engine = api
    boundary = "b0undary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="_charset_"\r\n\r\n'
            "windows-1252\r\n"
            f'--{boundary}\r\nContent-Disposition: form-data; name="q"\r\n\r\n'
        ).encode()
        + "5 €".encode("cp1252")
        + (
            f'\r\n--{boundary}\r\nContent-Disposition: form-data; name="source"\r\n'
            "Content-Type: text/plain; charset=utf-8\r\n\r\nes\r\n"
            f'--{boundary}\r\nContent-Disposition: form-data; name="target"\r\n\r\nen\r\n'
            f"--{boundary}--\r\n"
        ).encode()
    )
    response = await client.post(
        "/translate",
        content=body,
        headers={"content-type": f"multipart/form-data; boundary={boundary}"},
    )
    assert response.status_code == 200, response.text
    assert engine.received == ["5 €"]


async def test_no_answer_gains_whitespace_at_its_edges(
    api: tuple[httpx.AsyncClient, RecordingEngine],
) -> None:
    client, _ = api
    v1 = await client.post(
        "/v1/translate",
        json={"source_lang": "en", "target_lang": "es", "segments": ["I am here.", "  Hi.  "]},
    )
    assert v1.json()["translations"] == ["[I am here.]", "  [Hi.]  "]
    lt = await client.post("/translate", json={"q": "I am here.", "source": "en", "target": "es"})
    assert lt.json()["translatedText"] == "[I am here.]"
    deepl = await client.post("/v2/translate", json={"text": ["I am here."], "target_lang": "ES"})
    assert deepl.json()["translations"][0]["text"] == "[I am here.]"


async def test_an_uploaded_file_name_comes_back_whole_in_the_download(
    api: tuple[httpx.AsyncClient, RecordingEngine],
) -> None:
    client, _ = api
    submitted = await client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "es"},
        files={"files": ("résumé ☕.txt", b"Hello.\n", "text/plain")},
    )
    assert submitted.status_code == 202, submitted.text
    job = submitted.headers["location"]
    for _ in range(200):
        if (await client.get(job)).json()["status"] == "succeeded":
            break
        await asyncio.sleep(0.02)
    download = await client.get(f"{job}/files/0")
    assert download.status_code == 200, download.text
    disposition = download.headers["content-disposition"]
    assert f"filename*=UTF-8''{quote('résumé ☕.es.txt')}" in disposition
    assert download.text == "[Hello.]\n"
