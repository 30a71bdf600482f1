"""The dashboard's source in the distributed deployment: one ``dragoman api`` shows, from the
store, the figures that the scaler's, the watchdog's and the workers' processes each have
in their own /metrics."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.cluster import Cluster, Process, client, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

SEGMENTS = 300


def gauge(process: Process, name: str, **labels: str) -> float:
    """The sum of a series' samples in ``process``'s /metrics with ``labels``."""
    total = 0.0
    for line in httpx.get(f"{process.url}/metrics", timeout=5).text.splitlines():
        found = re.match(rf"^{name}(?:{{(.*)}})? (\S+)$", line)
        if found and all(f'{k}="{v}"' in (found.group(1) or "") for k, v in labels.items()):
            total += float(found.group(2))
    return total


def fleet_cpu(api: Process) -> dict[str, Any]:
    with client(api) as http:
        pools: list[dict[str, Any]] = http.get("/v1/fleet").json()["pools"]
    return next(pool for pool in pools if pool["pool"] == "cpu")


def test_one_api_shows_what_each_process_knows(tmp_path: Path) -> None:
    cluster = Cluster(
        tmp_path,
        DRAGOMAN_CPU_MAX_WORKERS="2",
        DRAGOMAN_CPU_STANDBY_WORKERS="2",
        DRAGOMAN_CPU_SCALE_INTERVAL_S="0.5",
        DRAGOMAN_CPU_SCALE_DOWN_DELAY_S="600",
    )
    try:
        api = cluster.api()
        watchdog = cluster.watchdog()
        scaler = cluster.start("scaler", "--pool", "cpu", "--backend", "process")
        wait_for(lambda: fleet_cpu(api)["workers"]["live"] == 2, 90, "two registered workers")
        body = {"source_lang": "en", "target_lang": "es"}
        with client(api) as http:
            for i in range(3):
                segments = [f"Line {n} of job {i}." for n in range(SEGMENTS)]
                documents = [{"name": f"{i}.txt", "segments": segments}]
                assert (
                    http.post("/v1/jobs", json={**body, "documents": documents}).status_code == 202
                )

        def settled() -> dict[str, Any] | None:
            cpu = fleet_cpu(api)
            done = cpu["segments"]["translated"] == 3 * SEGMENTS and cpu["jobs"]["in_flight"] == 0
            # The watchdog publishes its routing counts at its next sweep, after the routing.
            published = cpu["routing"]["total"] == gauge(
                watchdog, "dragoman_routed_total", pool="cpu"
            )
            return cpu if done and published and cpu["workers"]["busy"] == 0 else None

        cpu = wait_for(settled, 90, "the jobs to be translated, counted and published")
        assert cpu["workers"]["desired"] == gauge(scaler, "dragoman_workers_desired", pool="cpu")
        assert cpu["workers"]["current"] == gauge(scaler, "dragoman_workers_current", pool="cpu")
        assert cpu["workers"]["desired"] == cpu["workers"]["current"] == 2
        assert cpu["routing"]["total"] == gauge(watchdog, "dragoman_routed_total", pool="cpu")
        assert cpu["routing"]["warm"] == gauge(
            watchdog, "dragoman_routed_total", pool="cpu", outcome="warm"
        )
        assert cpu["routing"]["total"] >= 1
        assert sum(w["segments_translated"] for w in cpu["registered"]) == 3 * SEGMENTS
        assert cpu["batches"]["segments"] == 3 * SEGMENTS
        # The api process translated nothing itself: its own /metrics could not have told.
        assert gauge(api, "dragoman_segments_translated_total") == 0
        assert cpu["segments"]["per_second"], "the api samples the workers' counters"
    finally:
        cluster.close()
