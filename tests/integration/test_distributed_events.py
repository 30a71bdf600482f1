"""A job's events and long polls in the distributed deployment: the job is submitted to one
API process, translated by a worker process, and followed from another API process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.cluster import Cluster, client

SEGMENTS = [f"The cat number {n} sleeps on the table." for n in range(60)]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    made = Cluster(tmp_path)
    try:
        yield made
    finally:
        made.close()


def test_events_and_long_polls_reach_an_api_process_that_did_not_take_the_job(
    cluster: Cluster,
) -> None:
    taker, follower = cluster.api(), cluster.api()
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [{"name": "a.txt", "segments": SEGMENTS}],
    }
    with client(taker) as http:
        job = http.post("/v1/jobs", json=body).json()
    kinds: list[str] = []
    told: dict[int, str] = {}
    last: dict[str, object] = {}
    with client(follower) as http:
        # Nobody dispatches yet: a long poll gives the job as it was after its time.
        waited = http.get(f"/v1/jobs/{job['id']}", params={"wait": 0.5}).json()
        assert waited["status"] == "queued"
        cluster.watchdog()
        cluster.worker()
        with http.stream("GET", f"/v1/jobs/{job['id']}/events", timeout=120) as stream:
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    kinds.append(line.removeprefix("event: "))
                elif line.startswith("data: ") and kinds[-1] == "segments":
                    for segment in json.loads(line.removeprefix("data: "))["segments"]:
                        told[segment["index"]] = segment["text"]
                elif line.startswith("data: ") and kinds[-1] == "status":
                    last = json.loads(line.removeprefix("data: "))
        result = http.get(f"/v1/jobs/{job['id']}/result").json()
    assert last["status"] == "succeeded" and kinds[-1] == "status"
    assert "progress" in kinds and kinds.count("segments") >= 1
    assert [told[i] for i in range(len(SEGMENTS))] == result["documents"][0]["segments"]
