"""Many small jobs as fast as the API takes them: accepted jobs/s and the server's peak memory."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import httpx
import psutil
from common import (
    CLIENT,
    REQUEST_ERRORS,
    SEED,
    Stopwatch,
    client_session,
    describe,
    dragoman_server,
    error_text,
    exchange,
    load_corpus,
    percentile,
    report,
)

NAME = "scale"
SAMPLE_INTERVAL_S = 0.05
CHILDREN_EVERY = 20
REQUEST_TIMEOUT_S = 30.0
MIB = 2**20
MAX_ERRORS = 5
# Issue 14: 2,000 jobs/s accepted with the server (its own process) at most 200 MB resident.
TARGET_JOBS_PER_S = 2000.0
TARGET_SERVER_RSS_MB = 200.0
FINISHED = ("succeeded", "failed", "cancelled")


# ---------------------------------------------------------------- memory


@dataclass
class Peaks:
    """Resident set sizes seen, in bytes."""

    samples: int = 0
    server_first: int = 0
    server_last: int = 0
    server: int = 0
    children: int = 0
    with_children: int = 0
    child_processes: int = 0


class RssSampler(threading.Thread):
    """Samples a process's RSS, and its descendants' summed RSS, until stopped."""

    def __init__(self, pid: int, interval_s: float = SAMPLE_INTERVAL_S) -> None:
        super().__init__(name="rss-sampler", daemon=True)
        self.process = psutil.Process(pid)
        self.interval_s = interval_s
        self.peaks = Peaks()
        self._children: list[psutil.Process] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                self.sample()
            except psutil.NoSuchProcess:
                return
            self._stop_event.wait(self.interval_s)

    def sample(self) -> None:
        """One sample; the list of descendants is refreshed every ``CHILDREN_EVERY`` samples."""
        own = self.process.memory_info().rss
        if self.peaks.samples % CHILDREN_EVERY == 0:
            self._children = self.process.children(recursive=True)
        children = 0
        alive = 0
        for child in self._children:
            try:
                children += child.memory_info().rss
                alive += 1
            except psutil.NoSuchProcess:
                continue
        peaks = self.peaks
        peaks.server_first = peaks.server_first or own
        peaks.server_last = own
        peaks.samples += 1
        peaks.server = max(peaks.server, own)
        peaks.children = max(peaks.children, children)
        peaks.with_children = max(peaks.with_children, own + children)
        peaks.child_processes = max(peaks.child_processes, alive)

    def stop(self) -> Peaks:
        self._stop_event.set()
        self.join()
        return self.peaks


def memory_report(peaks: Peaks) -> dict[str, Any]:
    def mib(value: int) -> float:
        return round(value / MIB, 1)

    return {
        "samples": peaks.samples,
        "interval_s": SAMPLE_INTERVAL_S,
        "server_at_start_mib": mib(peaks.server_first),
        "server_at_end_mib": mib(peaks.server_last),
        "server_peak_mib": mib(peaks.server),
        "server_peak_target_mb": TARGET_SERVER_RSS_MB,
        "children_peak_mib": mib(peaks.children),
        "server_with_children_peak_mib": mib(peaks.with_children),
        "child_processes_peak": peaks.child_processes,
        "note": "children = summed RSS of all descendants (shared pages counted per process)",
    }


# ---------------------------------------------------------------- submission


def build_bodies(count: int, corpus: list[str], seed: int = SEED) -> list[bytes]:
    """``count`` encoded job bodies of 1-3 corpus segments each."""
    rng = random.Random(seed)
    bodies = []
    for index in range(count):
        segments = [rng.choice(corpus) for _ in range(rng.randint(1, 3))]
        body = {
            "source_lang": "en",
            "target_lang": "es",
            "documents": [{"name": f"job-{index:05d}.txt", "segments": segments}],
        }
        bodies.append(json.dumps(body).encode())
    return bodies


@dataclass
class Submission:
    """What submitting measured."""

    seconds: float = 0.0
    accepted: int = 0
    attempted: int = 0
    latencies_s: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)


async def submitter(
    session: aiohttp.ClientSession, bodies: list[bytes], state: Submission, deadline: float
) -> None:
    """Posts the next unsent body until none are left or the deadline passes."""
    while state.attempted < len(bodies) and time.monotonic() < deadline:
        body = bodies[state.attempted]
        state.attempted += 1
        started = time.perf_counter()
        try:
            status, payload = await exchange(session, "POST", "/v1/jobs", body)
        except REQUEST_ERRORS as exc:
            state.errors[describe(exc)] += 1
            continue
        if status == 202:
            state.accepted += 1
            state.latencies_s.append(time.perf_counter() - started)
        else:
            state.errors[error_text(status, payload)[:200]] += 1


async def submit_all(url: str, bodies: list[bytes], args: argparse.Namespace) -> Submission:
    """Submits ``bodies`` with ``args.concurrency`` requests in flight, for at most a while."""
    state = Submission()
    async with client_session(url, args.concurrency, REQUEST_TIMEOUT_S) as session:
        with Stopwatch() as watch:
            deadline = time.monotonic() + args.max_seconds
            await asyncio.gather(
                *(submitter(session, bodies, state, deadline) for _ in range(args.concurrency))
            )
    state.seconds = watch.elapsed
    return state


def cpu_seconds(process: psutil.Process) -> float:
    """User plus system CPU time a process has used so far."""
    times = process.cpu_times()
    return float(times.user + times.system)


def job_counts(url: str) -> dict[str, int]:
    """Jobs by status, from the ``dragoman_jobs`` gauge of ``/metrics``."""
    response = httpx.get(f"{url}/metrics", timeout=REQUEST_TIMEOUT_S)
    response.raise_for_status()
    pattern = re.compile(r'^dragoman_jobs\{status="(\w+)"\} ([0-9.e+]+)$', re.MULTILINE)
    return {status: int(float(value)) for status, value in pattern.findall(response.text)}


def submission_report(state: Submission, jobs: int) -> dict[str, Any]:
    rate = state.accepted / state.seconds if state.seconds else 0.0
    return {
        "jobs_requested": jobs,
        "attempted": state.attempted,
        "accepted": state.accepted,
        "rejected": sum(state.errors.values()),
        "errors": dict(state.errors.most_common(MAX_ERRORS)),
        "seconds": round(state.seconds, 3),
        "accepted_jobs_per_s": round(rate, 1),
        "target_jobs_per_s": TARGET_JOBS_PER_S,
        "submit_latency_ms": {
            "p50": round(percentile(state.latencies_s, 50) * 1000, 1),
            "p99": round(percentile(state.latencies_s, 99) * 1000, 1),
        },
    }


# ---------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs to submit")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight")
    parser.add_argument(
        "--max-seconds", type=float, default=120.0, help="stop submitting after this long"
    )
    return parser.parse_args(argv)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    bodies = build_bodies(args.jobs, load_corpus())
    with dragoman_server() as server:
        sampler = RssSampler(server.pid)
        sampler.start()
        processes = {"server": sampler.process, "client": psutil.Process()}
        cpu_before = {name: cpu_seconds(proc) for name, proc in processes.items()}
        state = asyncio.run(submit_all(server.url, bodies, args))
        cpu = {name: cpu_seconds(proc) - cpu_before[name] for name, proc in processes.items()}
        counts = job_counts(server.url)
        peaks = sampler.stop()
    return {
        "workload": {
            "jobs": args.jobs,
            "concurrency": args.concurrency,
            "client": CLIENT,
            "seed": SEED,
        },
        "submission": submission_report(state, args.jobs),
        "at_submission_end": {
            "finished": sum(counts.get(status, 0) for status in FINISHED),
            "by_status": counts,
        },
        "memory": memory_report(peaks),
        "cpu_during_submission_s": {name: round(value, 2) for name, value in cpu.items()},
        "server": server.info,
    }


def summarize(result: dict[str, Any]) -> str:
    sub, mem = result["submission"], result["memory"]
    return (
        f"{sub['accepted']}/{sub['jobs_requested']} jobs accepted in {sub['seconds']:.2f}s: "
        f"{sub['accepted_jobs_per_s']} jobs/s (target ≥ {TARGET_JOBS_PER_S:.0f}), "
        f"{sub['rejected']} rejected\n"
        f"finished at submission end: {result['at_submission_end']['finished']}; "
        f"peak RSS server {mem['server_peak_mib']} MiB (target ≤ {TARGET_SERVER_RSS_MB:.0f} MB), "
        f"with children {mem['server_with_children_peak_mib']} MiB"
    )


def main() -> None:
    report(NAME, measure(parse_args()), summarize)


if __name__ == "__main__":
    main()
