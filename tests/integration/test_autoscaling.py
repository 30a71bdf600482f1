"""The ``process`` autoscaling backend end to end over PostgreSQL and RabbitMQ: a burst grows
the pool to its maximum, the pool shrinks after the delay, and no job is interrupted."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import httpx
import pytest

from tests.integration.cluster import Cluster, Process, wait_for
from tests.integration.test_faults import assert_all_exact, submit

# Measures a burst against the autoscaler's delays: runs alone, after the rest.
pytestmark = [pytest.mark.integration, pytest.mark.serial, pytest.mark.timeout(240)]

SCALING = {
    "DRAGOMAN_CPU_MAX_WORKERS": "3",
    "DRAGOMAN_CPU_MIN_WORKERS": "0",
    "DRAGOMAN_CPU_STANDBY_WORKERS": "0",
    "DRAGOMAN_CPU_SCALE_INTERVAL_S": "0.5",
    "DRAGOMAN_CPU_SCALE_DOWN_DELAY_S": "4",
    "DRAGOMAN_WORKER_TTL_S": "3",
}


def gauge(process: Process, name: str) -> float:
    text = httpx.get(f"{process.url}/metrics", timeout=5).text
    found = re.search(rf'^{name}{{pool="cpu"}} (\S+)$', text, re.MULTILINE)
    return float(found.group(1)) if found else -1.0


def test_a_burst_grows_the_pool_to_max_and_it_shrinks_after_the_delay(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, **SCALING)
    try:
        api = cluster.api()
        cluster.watchdog()
        scaler = cluster.start("scaler", "--pool", "cpu", "--backend", "process")
        wait_for(lambda: gauge(scaler, "dragoman_workers_desired") == 0, 30, "an idle pool")
        job_ids = [submit(api, i) for i in range(9)]
        wait_for(lambda: gauge(scaler, "dragoman_workers_current") == 3, 60, "three workers")
        peak = max(gauge(scaler, "dragoman_workers_desired") for _ in range(5))
        assert peak == 3  # never above max
        states = assert_all_exact(api, job_ids, timeout_s=180)
        assert {s["attempts"] for s in states} == {1}  # no job interrupted or retried
        wait_for(lambda: gauge(scaler, "dragoman_workers_current") == 0, 60, "the pool to shrink")
        wait_for(lambda: scaler.text().count("drained (exit 0)") == 3, 30, "workers to drain")
        scaler.signal(signal.SIGTERM)
        assert scaler.wait(60) == 0, scaler.text()
    finally:
        cluster.close()
