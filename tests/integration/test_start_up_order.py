"""Kubernetes starts pods in any order: every role of the distributed deployment started
before PostgreSQL or RabbitMQ waits for them, trying again with backoff (one log line per
attempt), alive but not ready, then starts once they answer. A proxy that does not listen
yet stands for the service that is not up; the real one serves the other tests meanwhile."""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.bus import DEAD_LETTER_QUEUE
from dragoman.bus.rabbitmq import RabbitBus
from dragoman.engines import Engines
from dragoman.errors import TransientError
from dragoman.messages import WATCHDOG_QUEUE, work_queue
from dragoman.models import Pool, WorkerInfo
from dragoman.programs import Distributed
from dragoman.services import ApiService, ScalerService, WatchdogService, WorkerService
from dragoman.settings import Settings
from tests.conftest import ScriptedEngine, stop_service, wait_until
from tests.contract.conftest import drop_postgres_database, fresh_postgres_database
from tests.integration.cluster import BROKER_URL, Cluster, Process, wait_for
from tests.integration.proxy import Proxy
from tests.processes import reaped

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

POSTGRES_PORT, RABBITMQ_PORT = 5432, 5672


class Fixed:
    """A replica controller that only counts."""

    def __init__(self) -> None:
        self.size = 0

    async def replicas(self) -> int:
        return self.size

    async def scale(self, replicas: int, remove: Sequence[WorkerInfo] = ()) -> None:
        self.size = replicas

    async def close(self) -> None:
        return None


def engines() -> Engines:
    return Engines([ScriptedEngine()])


PROGRAMS: dict[str, Callable[[Settings], Distributed]] = {
    "api": lambda settings: ApiService(settings, engines=engines()),
    "watchdog": WatchdogService,
    "worker": lambda settings: WorkerService(settings, Pool.CPU, engines=engines()),
    "scaler": lambda settings: ScalerService(settings, Pool.CPU, lambda _: Fixed()),
}
# The scaler needs the store only.
CASES = [
    (program, missing)
    for program in PROGRAMS
    for missing in ("store", "bus")
    if (program, missing) != ("scaler", "bus")
]
WHAT = {"store": "the store", "bus": "the message bus"}


@pytest.fixture
async def database() -> AsyncIterator[str]:
    url, name = await fresh_postgres_database()
    yield url
    await drop_postgres_database(name)


@pytest.fixture
async def prefix() -> AsyncIterator[str]:
    made = f"dragoman-test-{uuid.uuid4().hex[:8]}"
    yield made
    bus = RabbitBus(BROKER_URL, prefix=made)
    await bus.open()
    await bus.delete_queues(WATCHDOG_QUEUE, DEAD_LETTER_QUEUE, work_queue("cpu"))
    await bus.close()


@pytest.fixture
def proxies() -> Iterator[dict[str, Proxy]]:
    with Proxy(POSTGRES_PORT) as store, Proxy(RABBITMQ_PORT) as bus:
        yield {"store": store, "bus": bus}


def attempts(records: list[logging.LogRecord], what: str) -> list[int]:
    """The numbers of the failed attempts logged for ``what``, in order."""
    found = []
    for record in records:
        message = record.getMessage()
        if message.startswith(what) and " unreachable (attempt " in message:
            found.append(int(re.findall(r"\(attempt (\d+)\)", message)[0]))
    return found


@pytest.mark.parametrize(("program", "missing"), CASES)
async def test_a_program_started_before_its_store_or_bus_waits_then_starts(
    program: str,
    missing: str,
    database: str,
    prefix: str,
    proxies: dict[str, Proxy],
    make_settings: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    urls = {"store": database, "bus": BROKER_URL}
    urls[missing] = proxies[missing].url(urls[missing])  # nothing listens there yet
    settings = make_settings(
        database_url=urls["store"], broker_url=urls["bus"], queue_prefix=prefix
    )
    service = PROGRAMS[program](settings)
    await asyncio.wait_for(service.start(), 5)  # at once: the probes are served meanwhile
    try:

        async def tried_twice() -> bool:
            return len(attempts(caplog.records, WHAT[missing])) >= 2

        await wait_until(tried_twice, timeout_s=20)
        assert service.alive()
        with pytest.raises(TransientError, match="starting: waiting for"):
            await service.ready()
        waiting = list(caplog.records)
        numbers = attempts(waiting, WHAT[missing])
        assert numbers == list(range(1, len(numbers) + 1))
        # One line per attempt: the drivers' own lines about it are not repeated.
        others = [r for r in waiting if r.name.startswith(("aiormq", "aio_pika", "sqlalchemy"))]
        assert others == []

        proxies[missing].open()
        await asyncio.wait_for(service.wait_started(), 30)
        await service.ready()
        assert service.alive()
        assert any(
            r.getMessage().startswith(WHAT[missing]) and " reached (attempt " in r.getMessage()
            for r in caplog.records
        )
    finally:
        await stop_service(service)


async def test_a_program_stopped_while_it_waits_stops_at_once(
    database: str, proxies: dict[str, Proxy], make_settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(database_url=proxies["store"].url(database), broker_url=BROKER_URL)
    service = WorkerService(settings, Pool.CPU, engines=engines())
    await service.start()

    async def tried() -> bool:
        return len(attempts(caplog.records, "the store")) >= 1

    await wait_until(tried)
    await stop_service(service, patience_s=5)
    assert not service.started


# --- the real processes ------------------------------------------------------------------

ROLES = {
    "api": [],
    "watchdog": [],
    "worker": ["--pool", "cpu"],
    "scaler": ["--pool", "cpu", "--backend", "process"],
}


def probe(process: Process, path: str) -> int:
    try:
        return httpx.get(f"{process.url}{path}", timeout=2).status_code
    except httpx.HTTPError:
        return 0


def tries(process: Process, what: str) -> int:
    """How many failed attempts to reach ``what`` the process has logged; it must be running."""
    assert process.proc.poll() is None, f"{process.role} exited:\n{process.text()}"
    return sum(1 for line in process.text().splitlines() if f"{what} at " in line)


@pytest.mark.parametrize("role", ROLES)
def test_a_role_started_before_postgresql_and_rabbitmq_waits_for_them(
    role: str, tmp_path: Path, proxies: dict[str, Proxy]
) -> None:
    cluster = Cluster(tmp_path, DRAGOMAN_CPU_STANDBY_WORKERS="0")
    cluster.env["DRAGOMAN_DATABASE_URL"] = proxies["store"].url(cluster.database_url)
    cluster.env["DRAGOMAN_BROKER_URL"] = proxies["bus"].url(BROKER_URL)
    needs = ["store"] if role == "scaler" else ["store", "bus"]
    try:
        process = cluster.start(role, *ROLES[role], wait=False)
        with reaped(process.proc, group=True):
            for missing in needs:
                # Alive and answering its probes, not ready, trying again: for as long as the
                # service is down, whatever its place in the order.
                wait_for(lambda m=missing: tries(process, WHAT[m]) >= 2, 60, f"{missing} tries")
                assert probe(process, "/healthz") == 200, process.text()
                assert probe(process, "/readyz") == 503, process.text()
                proxies[missing].open()
            process.wait_ready(60)
            assert probe(process, "/healthz") == 200
            process.signal(signal.SIGTERM)
            assert process.wait(30) == 0, process.text()
        log = process.text()
        assert "Traceback" not in log and "startup failed" not in log, log
        assert "unreachable (attempt 1)" in log and "reached (attempt " in log, log
    finally:
        cluster.close()


def test_a_role_stopped_while_it_waits_exits_0_at_once(
    tmp_path: Path, proxies: dict[str, Proxy]
) -> None:
    cluster = Cluster(tmp_path)
    cluster.env["DRAGOMAN_BROKER_URL"] = proxies["bus"].url(BROKER_URL)
    try:
        worker = cluster.start("worker", "--pool", "cpu", wait=False)
        with reaped(worker.proc, group=True):
            wait_for(lambda: tries(worker, "the message bus") >= 1, 60, "a first attempt")
            stopped = time.monotonic()
            worker.signal(signal.SIGTERM)
            assert worker.wait(30) == 0, worker.text()
            assert time.monotonic() - stopped < 10
    finally:
        cluster.close()


def test_a_role_whose_start_up_fails_otherwise_says_why_and_exits_3(tmp_path: Path) -> None:
    # Not a service that is down: a database that does not exist is a mistake to fix.
    cluster = Cluster(tmp_path)
    server = cluster.database_url.rsplit("/", 1)[0]
    cluster.env["DRAGOMAN_DATABASE_URL"] = f"{server}/dragoman_no_such_database"
    try:
        worker = cluster.start("worker", "--pool", "cpu", wait=False)
        with reaped(worker.proc, group=True):
            assert worker.wait(60) == 3, worker.text()
        log = worker.text()
        assert "could not start" in log and "does not exist" in log, log
    finally:
        cluster.close()
