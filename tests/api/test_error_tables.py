"""Each API words dragoman's one error tree in its own shape, every exception included: a
route of LibreTranslate or DeepL never answers v1's error body or FastAPI's."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from dragoman.api.deepl.errors import refusal as deepl_refusal
from dragoman.api.libretranslate.errors import refusal as lt_refusal
from dragoman.errors import (
    GlossaryMismatch,
    PayloadTooLarge,
    QuotaExceeded,
    UnknownGlossary,
    UnknownLanguage,
    UnsupportedPair,
)


def lt(exc: Exception) -> tuple[int, Any]:
    answer = lt_refusal(exc)
    return answer.status_code, json.loads(answer.body)


@pytest.mark.parametrize(
    ("exc", "status", "message"),
    [
        (UnknownLanguage("no", language="xx1"), 400, "xx1 is not supported"),
        (
            UnsupportedPair("no", source="en", target="zz", missing="target"),
            400,
            "zz is not supported",
        ),
        (
            UnsupportedPair("no", source="en", target="fr", missing=None),
            400,
            "French (fr) is not available as a target language from English (en)",
        ),
        (
            PayloadTooLarge("no", count=7, limit=5, unit="segments"),
            400,
            "Invalid request: request (7) exceeds text limit (5)",
        ),
        (QuotaExceeded("spent", retry_after_s=60), 429, "spent"),
        (RuntimeError("boom"), 500, "Internal error; see the server log"),
    ],
)
def test_libretranslate_words_each_refusal(exc: Exception, status: int, message: str) -> None:
    assert lt(exc) == (status, {"error": message})


@pytest.mark.parametrize(
    ("exc", "status", "message"),
    [
        (UnknownGlossary("no"), 404, "Glossary not found"),
        (
            GlossaryMismatch("no"),
            400,
            "Language pair of the glossary doesn't match the language pair of the request",
        ),
        (
            UnsupportedPair("no", target="zz", missing="target"),
            400,
            "Value for 'target_lang' not supported.",
        ),
        (
            UnsupportedPair("no", source="en", target="fr"),
            400,
            "No translation from EN into FR is installed on this server.",
        ),
        (
            PayloadTooLarge("no", count=9000, limit=5000, unit="characters"),
            413,
            "A text has 9000 characters; the limit is 5000",
        ),
        (QuotaExceeded("spent", retry_after_s=60), 456, "spent"),
        (RuntimeError("boom"), 500, "Internal error; see the server log"),
    ],
)
def test_deepl_words_each_refusal(exc: Exception, status: int, message: str) -> None:
    refused = deepl_refusal(exc)
    assert (refused.status, refused.message) == (status, message)


async def test_an_unexpected_error_in_a_route_keeps_each_apis_shape(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*_: Any) -> Any:
        raise RuntimeError("a bug")

    service = client._transport.app.state.service  # type: ignore[attr-defined]
    monkeypatch.setattr(service.translation, "translate", broken)
    lt_answer = await client.post("/translate", json={"q": "Hi.", "source": "en", "target": "es"})
    assert (lt_answer.status_code, lt_answer.json()) == (
        500,
        {"error": "Internal error; see the server log"},
    )
    deepl = await client.post("/v2/translate", json={"text": ["Hi."], "target_lang": "ES"})
    assert (deepl.status_code, deepl.json()) == (
        500,
        {"message": "Internal error; see the server log"},
    )
