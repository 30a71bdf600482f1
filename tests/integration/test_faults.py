"""The distributed deployment under faults: real processes, real PostgreSQL and RabbitMQ.

Each test runs a load of jobs, injects its fault mid-load, and checks that every accepted job
succeeds with every segment translated once, exactly as a clean run translates it.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.engines import Engines, Pair
from dragoman.engines.apertium import ApertiumEngine
from dragoman.models import JobStatus
from dragoman.settings import Settings
from dragoman.store.sql import SqlJobStore
from tests.conftest import CORPUS_DIR
from tests.integration.cluster import Cluster, Process, client, wait_for
from tests.integration.conftest import MODES_DIR

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]
# Restarting the shared PostgreSQL or RabbitMQ would fail the tests running beside it: those
# tests run alone, after the rest (see the Makefile).
alone = pytest.mark.serial

JOBS = 8
SEGMENTS = 240


@cache
def corpus() -> list[str]:
    lines = (CORPUS_DIR / "en_licenses.txt").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip()]


def job_segments(index: int) -> list[str]:
    lines = corpus()
    return [lines[(index * 37 + k) % len(lines)] for k in range(SEGMENTS)]


@cache
def reference() -> dict[str, str]:
    """Each corpus line as the engine translates it alone, with the source's edges (as
    ``Engines`` gives every translation): a clean run's output."""

    async def translate() -> list[str]:
        engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=1)
        try:
            return await Engines([engine]).translate("apertium", Pair("en", "es"), corpus())
        finally:
            await engine.close()

    return dict(zip(corpus(), asyncio.run(translate()), strict=True))


def submit(api: Process, index: int) -> str:
    body = {
        "source_lang": "en",
        "target_lang": "es",
        # Every job goes through the workers: the jobs share lines, and a job whose lines
        # an earlier one translated would be served from the segment cache at submission.
        "cache": False,
        "documents": [
            {"name": f"doc-{index}-a.txt", "segments": job_segments(index)[: SEGMENTS // 2]},
            {"name": f"doc-{index}-b.txt", "segments": job_segments(index)[SEGMENTS // 2 :]},
        ],
    }
    with client(api) as http:
        response = http.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


def job(api: Process, job_id: str) -> dict[str, Any]:
    with client(api) as http:
        response = http.get(f"/v1/jobs/{job_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def wait_running(
    api: Process, job_ids: list[str], among: Callable[[], list[str]] | None = None
) -> str:
    """A job that a worker is in the middle of (one of ``among()``, read again at each
    poll, where given). One connection polls every job in turn: a job is mid-work for a
    few of its chunks only (``DRAGOMAN_CHUNK_SEGMENTS``), so a slow poll on a busy machine
    could miss them all."""
    with client(api) as http:

        def one() -> str | None:
            states = {j: http.get(f"/v1/jobs/{j}").json() for j in job_ids}
            mine = set(job_ids if among is None else among())
            for job_id, state in states.items():
                if job_id in mine and state["status"] == "running" and state["segments_done"]:
                    return job_id
            if all(state["status"] == "succeeded" for state in states.values()):
                raise AssertionError("every job finished before one was seen in mid-work")
            return None

        found: str = wait_for(one, 120, "a job in the middle of its work")
    return found


def taken(worker: Process) -> list[str]:
    """The jobs a worker's log says it ran: a line per batch, each job named in it."""
    lines = [line for line in worker.text().splitlines() if "running on worker" in line]
    return [job_id for line in lines for job_id in re.findall(r"job ([0-9a-f]{32})", line)]


def assert_all_exact(
    api: Process, job_ids: list[str], timeout_s: float = 120
) -> list[dict[str, Any]]:
    """Every job succeeded, each segment translated once, as a clean run translates it."""
    finished = {"succeeded", "failed", "cancelled"}
    wait_for(lambda: all(job(api, j)["status"] in finished for j in job_ids), timeout_s, "the jobs")
    states = [job(api, j) for j in job_ids]
    assert [s["status"] for s in states] == ["succeeded"] * len(job_ids), states
    expected = reference()
    for index, job_id in enumerate(job_ids):
        with client(api) as http:
            result = http.get(f"/v1/jobs/{job_id}/result").json()
        got = [seg for doc in result["documents"] for seg in doc["segments"]]
        assert got == [expected[line] for line in job_segments(index)], job_id
    return states


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    reference()  # computed before any process competes for the CPU
    made = Cluster(tmp_path)
    try:
        yield made
    finally:
        made.close()


def test_a_clean_distributed_run_translates_every_job_once(cluster: Cluster) -> None:
    api = cluster.api()
    cluster.watchdog()
    workers = [cluster.worker(), cluster.worker()]
    job_ids = [submit(api, i) for i in range(JOBS)]
    states = assert_all_exact(api, job_ids)
    assert {s["attempts"] for s in states} == {1}
    ran = [taken(w) for w in workers]
    # Both workers took jobs, and every job was taken once.
    assert sorted(ran[0] + ran[1]) == sorted(job_ids) and all(ran), ran


def test_a_worker_killed_mid_job_loses_nothing(cluster: Cluster) -> None:
    api = cluster.api()
    cluster.watchdog()
    victim, survivor = cluster.worker(), cluster.worker()
    job_ids = [submit(api, i) for i in range(JOBS)]
    # Killed in the middle of one of its own jobs: a job mid-work on the survivor, with
    # the victim between two batches, would leave nothing to retry.
    wait_running(api, job_ids, lambda: taken(victim))
    victim.signal(signal.SIGKILL)
    states = assert_all_exact(api, job_ids)
    # The victim's job was retried (a new attempt) after its heartbeats stopped.
    assert max(s["attempts"] for s in states) == 2
    assert "running on worker" in survivor.text()


def test_the_watchdog_killed_mid_load_is_replaced_by_its_standby(cluster: Cluster) -> None:
    api = cluster.api()
    active = cluster.watchdog()
    wait_for(lambda: "holds the lease" in active.text(), 30, "the first watchdog to lead")
    standby = cluster.watchdog()
    cluster.worker()
    cluster.worker()
    job_ids = [submit(api, i) for i in range(JOBS)]
    wait_running(api, job_ids)
    active.signal(signal.SIGKILL)
    states = assert_all_exact(api, job_ids)
    assert "holds the lease" in standby.text()
    # Workers went on heartbeating in the store meanwhile: nothing was retried.
    assert {s["attempts"] for s in states} == {1}


def test_an_api_killed_mid_load_loses_no_accepted_job(cluster: Cluster) -> None:
    doomed, other = cluster.api(), cluster.api()
    cluster.watchdog()
    cluster.watchdog()  # two watchdogs, two APIs: still each job dispatched once
    cluster.worker()
    cluster.worker()
    accepted = [submit(doomed if i % 2 else other, i) for i in range(JOBS - 2)]
    wait_running(other, accepted)
    doomed.signal(signal.SIGKILL)
    accepted += [submit(other, i) for i in range(JOBS - 2, JOBS)]
    states = assert_all_exact(other, accepted)
    assert {s["attempts"] for s in states} == {1}


def rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", *args], check=True, capture_output=True, timeout=120)


@alone
def test_a_rabbitmq_restart_mid_load_loses_nothing(cluster: Cluster) -> None:
    api = cluster.api()
    cluster.watchdog()
    cluster.worker()
    cluster.worker()
    job_ids = [submit(api, i) for i in range(JOBS)]
    wait_running(api, job_ids)
    try:
        rabbitmqctl("stop_app")
        # Jobs are still accepted while the broker is away: the store has them.
        job_ids.append(submit(api, JOBS))
        time.sleep(2)
    finally:
        rabbitmqctl("start_app")
    assert_all_exact(api, job_ids, timeout_s=180)


def postgres(action: str) -> None:
    version = sorted(p.name for p in Path("/etc/postgresql").iterdir())[-1]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action],
        check=True,
        capture_output=True,
        timeout=120,
    )


@alone
def test_a_postgresql_restart_mid_load_is_503_then_resumes(cluster: Cluster) -> None:
    api = cluster.api()
    cluster.watchdog()
    cluster.worker()
    cluster.worker()
    job_ids = [submit(api, i) for i in range(JOBS)]
    wait_running(api, job_ids)
    answers: list[httpx.Response] = []
    try:
        postgres("stop")
        with client(api) as http:
            for _ in range(5):
                answers.append(http.get(f"/v1/jobs/{job_ids[0]}"))
                answers.append(http.get("/v1/jobs"))
            time.sleep(1)
    finally:
        postgres("start")
    assert answers and {r.status_code for r in answers} == {503}, [r.text for r in answers]
    for response in answers:
        assert int(response.headers["Retry-After"]) > 0
        assert response.json()["error"]["code"] == "store_unavailable"
    assert_all_exact(api, job_ids, timeout_s=180)


def test_sigterm_lets_a_busy_worker_finish_its_job_and_exit_0(cluster: Cluster) -> None:
    api = cluster.api()
    watchdog = cluster.watchdog()
    worker = cluster.worker()
    busy = submit(api, 0)
    assert wait_running(api, [busy]) == busy
    # Submitted once the first is taken, so never in its batch (two jobs submitted back to
    # back may share one, which the worker then finishes whole); the worker takes one
    # batch at a time.
    waiting = submit(api, 1)
    job_ids = [busy, waiting]
    worker.signal(signal.SIGTERM)
    assert worker.wait(60) == 0, worker.text()
    state = job(api, busy)
    assert (state["status"], state["attempts"]) == ("succeeded", 1), state
    # The other job was not taken: it waits, intact, for the next worker.
    assert job(api, waiting)["status"] in {"queued", "submitted"}
    cluster.worker()
    assert_all_exact(api, job_ids)
    # api and watchdog stop cleanly too.
    for process in (api, watchdog):
        process.signal(signal.SIGTERM)
        assert process.wait(30) == 0, process.text()


def test_a_shard_lost_to_a_killed_worker_is_retried_alone(tmp_path: Path) -> None:
    reference()
    lines = corpus()
    segments = [lines[k % len(lines)] for k in range(2400)]
    cluster = Cluster(tmp_path, DRAGOMAN_SHARD_SEGMENTS="600")
    try:
        api = cluster.api()
        cluster.watchdog()
        victim, survivor = cluster.worker(), cluster.worker()
        body = {
            "source_lang": "en",
            "target_lang": "es",
            "documents": [{"name": "big.txt", "segments": segments}],
        }
        with client(api) as http:
            response = http.post("/v1/jobs", json=body)
        assert response.status_code == 202, response.text
        job_id = response.json()["id"]
        wait_for(lambda: "running on worker" in victim.text(), 60, "the victim to take a shard")
        victim.signal(signal.SIGKILL)
        wait_for(lambda: job(api, job_id)["status"] == "succeeded", 120, "the sharded job")
        with client(api) as http:
            result = http.get(f"/v1/jobs/{job_id}/result").json()
        expected = reference()
        assert result["documents"][0]["segments"] == [expected[line] for line in segments]
        state = job(api, job_id)
        assert state["segments_total"] == state["segments_done"] == 2400
        assert state["attempts"] == 2
        shards = asyncio.run(shards_of(cluster.database_url, job_id))
        # Only the shard the victim held ran twice; the others once, on either worker.
        assert sorted(shard.attempts for shard in shards) == [1, 1, 1, 2]
        assert "running on worker" in survivor.text()
    finally:
        cluster.close()


async def shards_of(database_url: str, job_id: str) -> list[Any]:
    store = SqlJobStore(Settings(database_url=database_url).resolved_database_url)
    await store.open()
    try:
        return [job for job in await store.in_status(list(JobStatus)) if job.parent_id == job_id]
    finally:
        await store.close()


def test_a_file_job_survives_a_killed_worker_and_any_api_serves_the_file(
    cluster: Cluster,
) -> None:
    first, second = cluster.api(), cluster.api()
    cluster.watchdog()
    victim = cluster.worker()
    plain = [line for line in corpus() if not set(line) & set("<>&%{}@") and "http" not in line]
    lines = plain[:SEGMENTS]
    page = "".join(f"<p>{line}<br></p>\n" for line in lines).encode()
    with client(first) as http:
        response = http.post(
            "/v1/jobs",
            data={"source_lang": "en", "target_lang": "es", "segmentation": "none"},
            files=[("files", ("page.html", page))],
        )
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    wait_running(first, [job_id])
    victim.signal(signal.SIGKILL)
    cluster.worker()
    state = assert_done(first, job_id)
    assert state["attempts"] == 2
    downloads = []
    for api in (first, second):  # the bytes live in the store: any API process rebuilds them
        with client(api) as http:
            downloads.append(http.get(f"/v1/jobs/{job_id}/files/0"))
    assert [d.status_code for d in downloads] == [200, 200]
    assert downloads[0].content == downloads[1].content
    out = downloads[0].content.decode().splitlines()
    expected = reference()
    assert len(out) == len(lines)
    for line, got in zip(lines, out, strict=True):
        assert got.startswith("<p>") and got.endswith("<br></p>"), got
        # One unit, one segment: what the engine gives that line alone, whitespace aside.
        assert got[3:-8].split() == expected[line].split(), line


def assert_done(api: Process, job_id: str) -> dict[str, Any]:
    finished = {"succeeded", "failed", "cancelled"}
    wait_for(lambda: job(api, job_id)["status"] in finished, 120, "the file job")
    state = job(api, job_id)
    assert state["status"] == "succeeded", state
    return state
