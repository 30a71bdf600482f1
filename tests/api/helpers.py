from __future__ import annotations

import asyncio
from typing import Any

import httpx

FINISHED = {"succeeded", "failed", "cancelled"}


def job_body(*segments: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [{"name": "a.txt", "segments": list(segments)}],
    }
    body.update(extra)
    return body


async def finished(client: httpx.AsyncClient, job_id: str, timeout_s: float = 30) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        job: dict[str, Any] = (await client.get(f"/v1/jobs/{job_id}")).json()
        if job["status"] in FINISHED:
            return job
        assert loop.time() < deadline, f"job {job_id} still {job['status']}"
        await asyncio.sleep(0.05)


def assert_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
