"""A DeepL document status asked while its job runs is answered when the job ends, or as
it is after ``DRAGOMAN_DEEPL_STATUS_WAIT_S``: DeepL's SDKs poll every 5 s."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from dragoman.engines import Engines
from tests.conftest import ScriptedEngine

Made = Callable[..., Any]


@pytest.fixture
def held(serve: Any) -> Made:
    """A client of a service whose engine holds every translation until released."""

    async def make(**overrides: Any) -> tuple[httpx.AsyncClient, ScriptedEngine]:
        engine = ScriptedEngine()
        engine.release.clear()
        _, client = await serve(Engines([engine]), **overrides)
        return client, engine

    return make


async def uploaded(client: httpx.AsyncClient) -> tuple[str, dict[str, str]]:
    response = await client.post(
        "/v2/document",
        data={"source_lang": "EN", "target_lang": "ES"},
        files={"file": ("notes.txt", b"Hello world.\n")},
    )
    assert response.status_code == 200, response.text
    found = response.json()
    return found["document_id"], {"document_key": found["document_key"]}


async def test_a_status_asked_while_the_job_runs_is_answered_when_it_ends(held: Made) -> None:
    client, engine = await held(deepl_status_wait_s=30)
    document, key = await uploaded(client)
    asking = asyncio.create_task(client.post(f"/v2/document/{document}", data=key))
    await asyncio.sleep(0.3)
    assert not asking.done()  # the job is held: the answer waits for its end
    engine.release.set()
    status = (await asking).json()
    assert status["status"] == "done" and status["seconds_remaining"] == 0
    result = await client.post(f"/v2/document/{document}/result", data=key)
    assert result.status_code == 200 and result.content == b"HELLO WORLD.\n"


@pytest.mark.parametrize("wait_s", [0.2, 0], ids=["past-the-wait", "no-wait"])
async def test_a_job_that_does_not_end_in_time_is_answered_as_it_is(
    held: Made, wait_s: float
) -> None:
    client, engine = await held(deepl_status_wait_s=wait_s)
    document, key = await uploaded(client)
    status = (await client.post(f"/v2/document/{document}", data=key)).json()
    assert status["status"] in {"queued", "translating"}
    engine.release.set()


async def test_a_wait_longer_than_a_minute_is_refused_at_start(make_settings: Any) -> None:
    with pytest.raises(ValueError, match="deepl_status_wait_s"):
        make_settings(deepl_status_wait_s=61)
