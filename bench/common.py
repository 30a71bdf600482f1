"""Shared helpers for the benchmark scripts: servers, corpora, timing, results."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import httpx
import psutil

REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "bench" / "results"
SEED = 20_240_611
APERTIUM_MODE = "eng-spa"
READY_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0

T = TypeVar("T")


# ---------------------------------------------------------------- corpora


def corpus_dir() -> Path:
    """``$DRAGOMAN_CORPUS_DIR``, else ``../shared/corpus`` from the repository root."""
    override = os.environ.get("DRAGOMAN_CORPUS_DIR")
    return Path(override) if override else (REPO.parent / "shared" / "corpus").resolve()


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


def ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``, or ``None`` when the denominator is zero."""
    return round(numerator / denominator, 3) if denominator else None


# ---------------------------------------------------------------- apertium


def run_apertium(text: str, mode: str = APERTIUM_MODE, timeout_s: float = 120.0) -> str:
    """``apertium MODE`` over ``text`` in one fresh process."""
    done = subprocess.run(
        ["apertium", mode],
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
def spawned(
    argv: list[str], port: int, ready_path: str, log: Path, env: dict[str, str] | None = None
) -> Iterator[Service]:
    """Runs ``argv`` (logging to ``log``), waits for ``ready_path``, stops it on exit."""
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    service = Service(proc=proc, url=f"http://127.0.0.1:{port}", log=log)
    try:
        started = time.perf_counter()
        wait_until_answers(service, ready_path)
        service.info["startup_s"] = round(time.perf_counter() - started, 3)
        yield service
    finally:
        service.info.update(stop_process(proc))
        service.info.update(log_problems(log))


def dragoman_executable() -> str:
    """The ``dragoman`` script beside this interpreter, else the one on ``PATH``."""
    beside = Path(sys.executable).parent / "dragoman"
    found = str(beside) if beside.exists() else shutil.which("dragoman")
    if found is None:
        raise FileNotFoundError("dragoman executable not found; install the project first")
    return found


@contextmanager
def dragoman_server() -> Iterator[Service]:
    """An embedded ``dragoman serve`` on a free port with a fresh data dir, ready."""
    with tempfile.TemporaryDirectory(prefix="dragoman-bench-") as tmp:
        port = free_port()
        argv = [dragoman_executable(), "serve", "--host", "127.0.0.1", "--port", str(port)]
        argv += ["--data-dir", str(Path(tmp) / "data")]
        with spawned(argv, port, "/readyz", Path(tmp) / "server.log") as service:
            yield service


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
