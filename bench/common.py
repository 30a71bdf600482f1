"""Shared helpers for the benchmark scripts: servers, corpora, timing, results."""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import aio_pika
import aiohttp
import asyncpg
import httpx
import psutil

from dragoman.bus import DEAD_LETTER_QUEUE
from dragoman.messages import WATCHDOG_QUEUE, work_queue
from dragoman.models import Pool

REPO = Path(__file__).resolve().parent.parent
# Where results go; set DRAGOMAN_BENCH_RESULTS_DIR to keep trial runs out of the repository's.
RESULTS_DIR = Path(os.environ.get("DRAGOMAN_BENCH_RESULTS_DIR") or REPO / "bench" / "results")
SEED = 20_240_611
APERTIUM_MODE = "eng-spa"
READY_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0

T = TypeVar("T")


# ---------------------------------------------------------------- corpora


def corpus_dir() -> Path:
    """``$DRAGOMAN_CORPUS_DIR``, else the repository's ``tests/data`` (``en_licenses.txt``,
    ``fr_sentences.txt``)."""
    override = os.environ.get("DRAGOMAN_CORPUS_DIR")
    return Path(override) if override else REPO / "tests" / "data"


def load_corpus(name: str = "en_licenses.txt") -> list[str]:
    """The corpus's non-blank lines, stripped: one segment each."""
    text = (corpus_dir() / name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def normalize(text: str) -> str:
    """Whitespace runs collapsed to one space, ends stripped."""
    return re.sub(r"\s+", " ", text).strip()


# ---------------------------------------------------------------- timing and statistics


@dataclass
class Stopwatch:
    """Wall time of a ``with`` block, in seconds."""

    started: float = 0.0
    elapsed: float = 0.0

    def __enter__(self) -> Stopwatch:
        self.started = time.perf_counter()
        return self

    def __exit__(self, *_: object) -> None:
        self.elapsed = time.perf_counter() - self.started


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()``'s value and its wall time in seconds."""
    with Stopwatch() as watch:
        value = fn()
    return value, watch.elapsed


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, linearly interpolated."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float | None]) -> float | None:
    """The median of the values that are not ``None``, to 3 decimals; ``None`` if none are."""
    known = [value for value in values if value is not None]
    return round(statistics.median(known), 3) if known else None


def ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``, or ``None`` when the denominator is zero."""
    return round(numerator / denominator, 3) if denominator else None


# ---------------------------------------------------------------- apertium


def run_apertium(text: str, mode: str = APERTIUM_MODE, timeout_s: float = 120.0) -> str:
    """``apertium -u MODE`` (unknown words unmarked, as dragoman) over ``text`` in one
    fresh process."""
    done = subprocess.run(
        ["apertium", "-u", mode],
        input=text,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout_s,
        check=True,
    )
    return done.stdout


def package_version(name: str) -> str | None:
    """A Debian package's installed version, from ``dpkg-query``."""
    try:
        done = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", name],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


# ---------------------------------------------------------------- processes


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop_process(
    proc: subprocess.Popen[bytes], timeout_s: float = STOP_TIMEOUT_S
) -> dict[str, Any]:
    """SIGTERM ``proc``, SIGKILL it after ``timeout_s``, then any descendants it left.

    Returns how it went: exit code, seconds to stop, whether SIGKILL was needed.
    """
    try:
        descendants = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        descendants = []
    started = time.perf_counter()
    killed = False
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            killed = True
            proc.kill()
            proc.wait(10)
    for child in descendants:
        with suppress(psutil.NoSuchProcess):
            child.kill()
    return {
        "exit_code": proc.returncode,
        "stop_s": round(time.perf_counter() - started, 3),
        "sigkilled": killed,
    }


def cpu_seconds(pids: Sequence[int]) -> float:
    """CPU seconds so far (user and system) of these processes and their live descendants
    (the engine pipelines); a descendant gone meanwhile (a replaced tagger) is not counted."""
    total = 0.0
    for pid in pids:
        try:
            root = psutil.Process(pid)
            family = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for process in family:
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
    return total


def log_problems(path: Path, examples: int = 3) -> dict[str, Any]:
    """Counts ERROR, CRITICAL and Traceback lines in a server log; keeps the first few."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return {}
    pattern = re.compile(r"\b(ERROR|CRITICAL|Traceback)\b")
    found = [line for line in lines if pattern.search(line)]
    return {"log_errors": len(found), "log_error_examples": [x[:300] for x in found[:examples]]}


def log_tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of a log file."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@dataclass
class Service:
    """A server started by a benchmark: its process, URL and log file."""

    proc: subprocess.Popen[bytes]
    url: str
    log: Path
    info: dict[str, Any] = field(default_factory=dict)
    launched_at: float = field(default_factory=time.perf_counter)

    @property
    def pid(self) -> int:
        return self.proc.pid


def wait_until_answers(service: Service, path: str, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Polls ``GET path`` until it answers 200; raises if the process dies or time runs out."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=service.url, timeout=2.0) as client:
        while time.monotonic() < deadline:
            if service.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited with {service.proc.returncode}:\n{log_tail(service.log)}"
                )
            try:
                if client.get(path).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
    raise TimeoutError(
        f"{service.url}{path} not ready in {timeout_s:.0f}s:\n{log_tail(service.log)}"
    )


@contextmanager
def launched(
    argv: list[str], port: int, log: Path, env: dict[str, str] | None = None
) -> Iterator[Service]:
    """Runs ``argv`` (logging to ``log``) without waiting for it; stops it on exit."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    service = Service(proc=proc, url=f"http://127.0.0.1:{port}", log=log)
    try:
        yield service
    finally:
        service.info.update(stop_process(proc))
        service.info.update(log_problems(log))


def wait_ready(service: Service, ready_path: str) -> None:
    """Waits until a launched service answers ``ready_path``; records its start-up time."""
    wait_until_answers(service, ready_path)
    service.info["startup_s"] = round(time.perf_counter() - service.launched_at, 3)


@contextmanager
def spawned(
    argv: list[str], port: int, ready_path: str, log: Path, env: dict[str, str] | None = None
) -> Iterator[Service]:
    """Runs ``argv`` (logging to ``log``), waits for ``ready_path``, stops it on exit."""
    with launched(argv, port, log, env) as service:
        wait_ready(service, ready_path)
        yield service


def dragoman_executable() -> str:
    """The ``dragoman`` script beside this interpreter, else the one on ``PATH``."""
    beside = Path(sys.executable).parent / "dragoman"
    found = str(beside) if beside.exists() else shutil.which("dragoman")
    if found is None:
        raise FileNotFoundError("dragoman executable not found; install the project first")
    return found


def with_settings(settings: dict[str, str] | None) -> dict[str, str] | None:
    """This process's environment plus ``settings`` (``DRAGOMAN_*`` variables), if any."""
    return {**os.environ, **settings} if settings else None


@contextmanager
def dragoman_server(settings: dict[str, str] | None = None) -> Iterator[Service]:
    """An embedded ``dragoman serve`` on a free port with a fresh data dir, ready;
    ``settings`` are ``DRAGOMAN_*`` variables to set on top of this environment."""
    with tempfile.TemporaryDirectory(prefix="dragoman-bench-") as tmp:
        port = free_port()
        argv = [dragoman_executable(), "serve", "--host", "127.0.0.1", "--port", str(port)]
        argv += ["--data-dir", str(Path(tmp) / "data")]
        env = with_settings(settings)
        with spawned(argv, port, "/readyz", Path(tmp) / "server.log", env) as service:
            yield service


@contextmanager
def reference_server() -> Iterator[Service]:
    """``reference_app.py`` (a bare FastAPI route, one ``aiosqlite`` read) on a free port."""
    with tempfile.TemporaryDirectory(prefix="dragoman-reference-") as tmp:
        port = free_port()
        app = Path(__file__).with_name("reference_app.py")
        argv = [sys.executable, str(app), "--port", str(port), "--db", str(Path(tmp) / "db")]
        with spawned(argv, port, "/healthz", Path(tmp) / "server.log") as service:
            yield service


# ---------------------------------------------------------------- distributed deployment

POSTGRES_ADMIN_URL = os.environ.get(
    "DRAGOMAN_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
BROKER_URL = os.environ.get("DRAGOMAN_BENCH_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672/")


CLEANUP_TIMEOUT_S = 60.0


async def _admin(statement: str) -> None:
    connection = await asyncpg.connect(POSTGRES_ADMIN_URL)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def clean_up(what: str, action: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Runs a clean-up coroutine, retried for a while: other work on the machine (fault
    tests) may be restarting PostgreSQL or RabbitMQ. If it still fails, says what was
    left behind rather than losing the measurements."""
    deadline = time.monotonic() + CLEANUP_TIMEOUT_S
    while True:
        try:
            asyncio.run(action())
            return
        except (OSError, asyncpg.PostgresError, aio_pika.exceptions.AMQPError) as exc:
            if time.monotonic() > deadline:
                print(f"warning: {what} left behind: {describe(exc)}", file=sys.stderr)
                return
            time.sleep(1.0)


@contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one run: its URL; dropped on exit."""
    name = f"dragoman_bench_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield f"{POSTGRES_ADMIN_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        # FORCE: a process that was SIGKILLed may leave its connections behind for a moment.
        drop = f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
        clean_up(f"database {name}", lambda: _admin(drop))


async def _delete_rabbitmq_names(prefix: str) -> None:
    """Deletes the queues and the dead-letter exchange that dragoman declares under
    ``prefix`` (``PREFIX.NAME``, as its RabbitMQ bus names them)."""
    connection = await aio_pika.connect(BROKER_URL)
    try:
        channel = await connection.channel()
        queues = [WATCHDOG_QUEUE, DEAD_LETTER_QUEUE, *(work_queue(pool) for pool in Pool)]
        for queue in queues:
            await channel.queue_delete(f"{prefix}.{queue}")
        await channel.exchange_delete(f"{prefix}.{DEAD_LETTER_QUEUE}")
    finally:
        await connection.close()


@contextmanager
def rabbitmq_prefix() -> Iterator[str]:
    """A queue prefix unique to one run; its queues and exchange are deleted on exit."""
    prefix = f"dragoman-bench-{uuid.uuid4().hex[:8]}"
    try:
        yield prefix
    finally:
        clean_up(f"queues {prefix}.*", lambda: _delete_rabbitmq_names(prefix))


@dataclass
class Deployment:
    """The processes of a running distributed deployment and what they share."""

    api: Service
    watchdog: Service
    workers: list[Service]
    database_url: str
    queue_prefix: str
    settings: dict[str, str]

    @property
    def url(self) -> str:
        """The API's base URL."""
        return self.api.url

    @property
    def pids(self) -> list[int]:
        """Every process of the deployment."""
        return [service.pid for service in (self.api, self.watchdog, *self.workers)]

    def info(self) -> dict[str, Any]:
        """Start-up and stop figures of every process (complete once it has stopped)."""
        return {
            "api": self.api.info,
            "watchdog": self.watchdog.info,
            "workers": [worker.info for worker in self.workers],
        }


@contextmanager
def distributed_deployment(
    workers: int, settings: dict[str, str] | None = None
) -> Iterator[Deployment]:
    """One ``dragoman api``, one ``dragoman watchdog`` and ``workers`` processes of
    ``dragoman worker --pool cpu`` over a fresh PostgreSQL database and a fresh RabbitMQ
    queue prefix, all ready.

    On exit the workers stop first (SIGTERM drains them), then the watchdog, then the API;
    then the database is dropped and the queues are deleted.
    """
    with (
        tempfile.TemporaryDirectory(prefix="dragoman-bench-") as tmp,
        postgres_database() as database_url,
        rabbitmq_prefix() as prefix,
        ExitStack() as stack,
    ):
        env_settings = {
            "DRAGOMAN_DATABASE_URL": database_url,
            "DRAGOMAN_BROKER_URL": BROKER_URL,
            "DRAGOMAN_QUEUE_PREFIX": prefix,
            **(settings or {}),
        }
        env = with_settings(env_settings)

        def launch(name: str, *args: str) -> Service:
            port = free_port()
            argv = [dragoman_executable(), *args, "--host", "127.0.0.1", "--port", str(port)]
            return stack.enter_context(launched(argv, port, Path(tmp) / f"{name}.log", env))

        # All at once: the store serialises their migrations of the fresh database. The
        # ExitStack stops them in reverse, so workers drain before the watchdog goes.
        api = launch("api", "api")
        watchdog = launch("watchdog", "watchdog")
        pool = [launch(f"worker-{i}", "worker", "--pool", "cpu") for i in range(workers)]
        for service in (api, watchdog, *pool):
            wait_ready(service, "/readyz")
        yield Deployment(api, watchdog, pool, database_url, prefix, env_settings)


@contextmanager
def apy_server(modes_dir: str = "/usr/share/apertium/modes") -> Iterator[Service]:
    """``apertium-apy`` on a free port serving ``modes_dir``, ready."""
    with tempfile.TemporaryDirectory(prefix="apy-bench-") as tmp:
        port = free_port()
        argv = ["apertium-apy", "-p", str(port), modes_dir]
        with spawned(argv, port, "/listPairs", Path(tmp) / "apy.log") as service:
            service.info["argv"] = argv
            yield service


# ---------------------------------------------------------------- results


def machine_info() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(psutil.Process().cpu_affinity() or []),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "apertium": package_version("apertium"),
    }


def write_result(name: str, data: dict[str, Any]) -> Path:
    """Writes ``bench/results/NAME.json`` (atomically) with a timestamp and machine info."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    document = {
        "benchmark": name,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
        **data,
    }
    path = RESULTS_DIR / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def report(name: str, result: dict[str, Any], summarize: Callable[[dict[str, Any]], str]) -> None:
    """Writes ``result`` to bench/results/NAME.json and prints its summary."""
    path = write_result(name, result)
    print(summarize(result))
    print(f"written to {path}")


def error_text(status: int, body: bytes) -> str:
    """``status code: message`` from a dragoman error body, else the start of the raw body."""
    try:
        error = json.loads(body)["error"]
        return f"{status} {error['code']}: {error['message']}"
    except (ValueError, KeyError, TypeError):
        return f"{status} {body[:200].decode(errors='replace')}"


def describe(exc: BaseException) -> str:
    """A short one-line description of an exception, for error tallies."""
    return f"{type(exc).__name__}: {exc}"[:200]


# ---------------------------------------------------------------- load-generating client

# httpx.AsyncClient costs the client ~10 ms of CPU per request at 32 in flight, which on a
# two-core machine takes a core away from the server under test; aiohttp costs ~0.4 ms.
CLIENT = f"aiohttp {aiohttp.__version__}"
# What a failed request may raise (the JSON errors come from reading its answer).
REQUEST_ERRORS = (aiohttp.ClientError, TimeoutError, ValueError, KeyError, TypeError)


def client_session(url: str, concurrency: int, timeout_s: float) -> aiohttp.ClientSession:
    """An aiohttp session to ``url`` that keeps at most ``concurrency`` connections open."""
    return aiohttp.ClientSession(
        base_url=url,
        connector=aiohttp.TCPConnector(limit=concurrency),
        timeout=aiohttp.ClientTimeout(total=timeout_s),
    )


async def exchange(
    session: aiohttp.ClientSession, method: str, path: str, body: bytes | None = None
) -> tuple[int, bytes]:
    """Sends one request (``body`` as JSON, if any); returns the status and the body."""
    headers = {"Content-Type": "application/json"} if body is not None else None
    async with session.request(method, path, data=body, headers=headers) as response:
        return response.status, await response.read()
