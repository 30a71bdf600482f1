"""In the embedded service, a job ends in the process that answers its long polls and event
streams: they learn it at once, not at the next read of their interval."""

from __future__ import annotations

import asyncio
from typing import Any

from dragoman.engines import Engines
from tests.conftest import ScriptedEngine


async def test_a_long_poll_is_answered_when_its_job_ends(serve: Any) -> None:
    engine = ScriptedEngine()
    engine.release.clear()
    service, client = await serve(Engines([engine]))
    # Reads at the interval alone would answer in an hour.
    service.front.manager.waits._interval_s = 3600
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [{"name": "a", "segments": ["Hello."]}],
    }
    job = (await client.post("/v1/jobs", json=body)).json()
    polling = asyncio.create_task(client.get(f"/v1/jobs/{job['id']}", params={"wait": 60}))
    await asyncio.sleep(0.2)
    assert not polling.done()
    engine.release.set()
    async with asyncio.timeout(20):
        answer = (await polling).json()
    if answer["status"] != "succeeded":  # it moved to running first: ask again
        async with asyncio.timeout(20):
            answer = (await client.get(f"/v1/jobs/{job['id']}", params={"wait": 60})).json()
    assert answer["status"] == "succeeded"
