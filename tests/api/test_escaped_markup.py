"""An escaped tag is text, through the real engine, whichever door the HTML comes in: it
reaches Apertium as the characters ``<b>`` and comes back escaped, never as markup."""

from __future__ import annotations

import httpx

from tests.api.helpers import finished

HTML = "<p>Fish &amp; chips &lt;b&gt; are good.</p>"


def assert_escaped(html: str) -> None:
    assert "&lt;b&gt;" in html and "<b>" not in html, html
    assert "&amp;" in html, html


async def test_an_escaped_tag_stays_text_in_a_synchronous_html_text(
    client: httpx.AsyncClient,
) -> None:
    lt = {"q": HTML, "source": "en", "target": "es", "format": "html"}
    answer = await client.post("/translate", json=lt)
    assert answer.status_code == 200, answer.text
    assert_escaped(answer.json()["translatedText"])
    deepl = {"text": [HTML], "target_lang": "ES", "source_lang": "EN", "tag_handling": "html"}
    answer = await client.post("/v2/translate", json=deepl)
    assert_escaped(answer.json()["translations"][0]["text"])


async def test_an_escaped_tag_stays_text_in_a_translated_file(client: httpx.AsyncClient) -> None:
    page = f"<html><body>{HTML}</body></html>".encode()
    data = {"source_lang": "en", "target_lang": "es", "cache": "false"}
    answer = await client.post("/v1/jobs", files={"files": ("a.html", page)}, data=data)
    assert answer.status_code == 202, answer.text
    await finished(client, answer.json()["id"])
    translated = await client.get(f"/v1/jobs/{answer.json()['id']}/files/0")
    assert_escaped(translated.text)


async def test_a_character_reference_reaches_the_engine_as_its_character(
    client: httpx.AsyncClient,
) -> None:
    lt = {"q": "<p>The caf&eacute; is open.</p>", "source": "en", "target": "es", "format": "html"}
    answer = await client.post("/translate", json=lt)
    # Apertium knows "café" (cafetería), not "caf" followed by a code.
    assert "cafetería" in answer.json()["translatedText"], answer.text
