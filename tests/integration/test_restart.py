"""Nothing accepted is lost: stop ``dragoman serve`` mid-job, start it again, the job ends."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.integration.conftest import squash
from tests.integration.server import Server

FINISHED = {"succeeded", "failed", "cancelled"}


def wait_for(client: httpx.Client, job_id: str, predicate: object, timeout_s: float = 120) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if predicate(job):  # type: ignore[operator]
            return dict(job)
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} never reached the condition: {job}")


def stopped(server: Server, sig: int, timeout_s: float = 20) -> int:
    """The exit status; a process still running ``timeout_s`` after ``sig`` is killed, and
    the test fails."""
    try:
        return server.stop(sig, timeout_s)
    except subprocess.TimeoutExpired:
        server.stop(signal.SIGKILL)
        raise AssertionError(f"dragoman serve still running {timeout_s} s after {sig!r}") from None


# Times a stop to the second: runs alone, after the rest.
@pytest.mark.serial
@pytest.mark.timeout(300)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_job_survives_a_restart_of_the_service(
    tmp_path: Path, corpus_lines: list[str], sig: int
) -> None:
    segments = (corpus_lines * 12)[:2400]
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [{"name": "big.txt", "segments": segments}],
    }
    server = Server(tmp_path / "data", DRAGOMAN_CHUNK_SEGMENTS="64").start()
    try:
        with server.client() as client:
            job_id = client.post("/v1/jobs", json=body).json()["id"]
            wait_for(client, job_id, lambda job: job["segments_done"] > 0)
    finally:
        code = stopped(server, sig)
    assert code == (0 if sig == signal.SIGTERM else -signal.SIGKILL)  # SIGTERM: a clean stop

    # The segment cache off after the restart: what is left of the job goes through the
    # engine, and each segment alone (the reference) too, not the job's own cached outputs.
    restarted = Server(tmp_path / "data", port=server.port, DRAGOMAN_CACHE="false")
    with restarted as again, again.client() as client:
        partial = client.get(f"/v1/jobs/{job_id}").json()
        assert partial["status"] not in FINISHED
        job = wait_for(client, job_id, lambda job: job["status"] in FINISHED)
        assert job["status"] == "succeeded"
        assert job["segments_done"] == job["segments_total"] == len(segments)
        result = client.get(f"/v1/jobs/{job_id}/result").json()
        # Each distinct segment alone, through the sync path: its parity with a fresh
        # `apertium` process per segment is test_apertium_parity's.
        distinct = sorted(set(corpus_lines))
        reference: dict[str, str] = {}
        for start in range(0, len(distinct), 100):
            batch = distinct[start : start + 100]
            answer = client.post(
                "/v1/translate",
                json={"source_lang": "en", "target_lang": "es", "segments": batch},
            )
            assert answer.status_code == 200, answer.text
            reference.update(zip(batch, answer.json()["translations"], strict=True))
    translations = result["documents"][0]["segments"]
    assert [squash(t) for t in translations] == [squash(reference[s]) for s in segments]
