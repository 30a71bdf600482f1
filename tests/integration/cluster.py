"""The distributed deployment as real processes (api, watchdog, workers) over the real
PostgreSQL and RabbitMQ, each test with its own database and queue names."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from dragoman.bus import DEAD_LETTER_QUEUE
from dragoman.bus.rabbitmq import RabbitBus
from dragoman.messages import WATCHDOG_QUEUE, work_queue
from tests.contract.conftest import drop_postgres_database, fresh_postgres_database
from tests.integration.server import free_port
from tests.processes import reap

BROKER_URL = os.environ.get("DRAGOMAN_TEST_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672/")

# Short timings so that faults are detected and recovered from within a test.
FAST = {
    "DRAGOMAN_HEARTBEAT_INTERVAL_S": "0.3",
    "DRAGOMAN_HEARTBEAT_TIMEOUT_S": "4",
    "DRAGOMAN_SWEEP_INTERVAL_S": "0.5",
    "DRAGOMAN_LEASE_TTL_S": "3",
    "DRAGOMAN_CHUNK_SEGMENTS": "20",
    "DRAGOMAN_CPU_MAX_WORKERS": "2",
    "DRAGOMAN_APERTIUM_PIPELINES_PER_PAIR": "1",
}


def wait_for(predicate: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class Process:
    """One ``dragoman <role>`` process with its health port and its log file."""

    def __init__(self, role: str, args: list[str], env: dict[str, str], log: Path) -> None:
        self.role = role
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "dragoman.cli", role, *args, "--port", str(self.port)]
        self.log = log
        with log.open("ab") as out:
            # A process group of its own: the cluster's close reaps a scaler's workers too.
            self.proc = subprocess.Popen(
                command, env=env, stdout=out, stderr=out, start_new_session=True
            )

    def ready(self) -> bool:
        assert self.proc.poll() is None, f"{self.role} exited:\n{self.log.read_text()}"
        try:
            return httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def wait_ready(self, timeout_s: float = 60) -> Process:
        wait_for(self.ready, timeout_s, f"{self.role} to be ready:\n{self.log.read_text()}")
        return self

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout_s: float = 60) -> int:
        return self.proc.wait(timeout_s)

    def text(self) -> str:
        return self.log.read_text(errors="replace")


class Cluster:
    def __init__(self, tmp_path: Path, **env: str) -> None:
        self.tmp_path = tmp_path
        self.database_url, self.database = asyncio.run(fresh_postgres_database())
        self.prefix = f"dragoman-test-{uuid.uuid4().hex[:8]}"
        self.env = {
            **os.environ,
            **FAST,
            "DRAGOMAN_DATABASE_URL": self.database_url,
            "DRAGOMAN_BROKER_URL": BROKER_URL,
            "DRAGOMAN_QUEUE_PREFIX": self.prefix,
            **env,
        }
        self.processes: list[Process] = []

    def start(self, role: str, *args: str, wait: bool = True) -> Process:
        index = sum(1 for p in self.processes if p.role == role)
        process = Process(role, list(args), self.env, self.tmp_path / f"{role}-{index}.log")
        self.processes.append(process)
        return process.wait_ready() if wait else process

    def api(self) -> Process:
        return self.start("api")

    def watchdog(self) -> Process:
        return self.start("watchdog")

    def worker(self, pool: str = "cpu") -> Process:
        return self.start("worker", "--pool", pool)

    def close(self) -> None:
        # SIGTERM first, so that a scaler drains the worker processes it started.
        for process in self.processes:
            if process.proc.poll() is None:
                process.proc.terminate()
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.proc.wait(15)
            reap(process.proc, group=True)  # what is left of it and of what it started

        async def cleanup() -> None:
            bus = RabbitBus(BROKER_URL, prefix=self.prefix)
            with contextlib.suppress(Exception):
                await bus.open()
                queues = [WATCHDOG_QUEUE, DEAD_LETTER_QUEUE, work_queue("cpu"), work_queue("gpu")]
                await bus.delete_queues(*queues)
                await bus.close()
            await drop_postgres_database(self.database)

        asyncio.run(cleanup())


def client(process: Process) -> httpx.Client:
    return httpx.Client(base_url=process.url, timeout=10)
