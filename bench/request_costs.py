"""Service CPU per request type: what each kind of request costs an embedded ``dragoman serve``.

One server with its defaults (segment cache on, as served), warmed up by one small job. Each
round sends ``--requests`` requests of every type from ``--concurrency`` clients (aiohttp,
which costs the client little on a shared machine) and reads the server process's own CPU
time (user + system, from psutil) before and after: its CPU per request is what the request
costs the service, which the machine's load moves far less than the wall time. The engine's
processes (the Apertium pipelines, children of the server) are counted apart, and so is this
client. The types, in this order within a round:

- ``submit``: ``POST /v1/jobs``, a job of 8 short segments with ``"cache": false``. The jobs
  start while the batch is still being sent, so part of their work lands in this figure;
  what they cost after the last answer, until every one has finished, is reported apart
  (``drain_*``).
- ``status``: ``GET /v1/jobs/{id}`` of those jobs, finished.
- ``result``: ``GET /v1/jobs/{id}/result`` of them.
- ``job``: one small job all in: submit (the same kind of job), poll its status every
  50 ms until it ends, read its result; figures per job, ``polls_per_job`` says how many polls.
- ``translate``: ``POST /v1/translate`` of one short segment never sent before, so that every
  request goes through the engine.

Each figure is the median of its ``--rounds`` rounds.

After each round, the reference (``reference_app.py``): a bare FastAPI route doing one
indexed ``aiosqlite`` read, served by uvicorn as dragoman is, read from the same client in
``REFERENCE_BATCHES`` batches of ``REFERENCE_READS``. Each type's ``over_reference`` is its
service CPU (the median of the rounds) over the reference's (the median of every batch of
the run): a ratio that a faster or slower machine moves far less than it moves the
milliseconds, so that ``make bench-quick`` compares it with a baseline measured elsewhere.
One batch of the reference is a noisy figure (0.15 to 0.25 ms from one batch to the next
on a quiet machine, whether of 1,000 reads or 3,000): the median of many steadies it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from itertools import cycle, islice
from typing import Any

import aiohttp
import psutil
from common import (
    CLIENT,
    REQUEST_ERRORS,
    SEED,
    client_session,
    describe,
    dragoman_server,
    error_text,
    exchange,
    load_corpus,
    median,
    percentile,
    reference_server,
    report,
)
from reference_app import ROWS, job_id
from scale import job_counts
from workload import warm_up

NAME = "requests"
CORPUS = "en_short.txt"
JOB_SEGMENTS = 8
POLL_INTERVAL_S = 0.05
IDLE_S = 1.0
DRAIN_TIMEOUT_S = 120.0
REQUEST_TIMEOUT_S = 60.0
UNFINISHED = ("queued", "submitted", "running")
MAX_ERRORS = 5
# The process's CPU time moves in ticks of 10 ms: 500 reads of a fraction of a millisecond
# each read it to about 5 %; the batches' median goes further.
REFERENCE_READS = 500
REFERENCE_BATCHES = 3
LABELS = {
    "submit": "POST /v1/jobs (8 segments, cache off)",
    "status": "GET /v1/jobs/{id}",
    "result": "GET /v1/jobs/{id}/result",
    "job": "one job all in (submit, poll, result)",
    "translate": "POST /v1/translate (1 segment)",
}


class RequestFailed(Exception):
    """A request answered with something other than what it asked for."""


# ---------------------------------------------------------------- CPU


@dataclass(frozen=True)
class Cpu:
    """CPU seconds so far: the server's own, its engine processes', this client's."""

    service_s: float
    engines_s: float
    client_s: float

    @classmethod
    def now(cls, server_pid: int) -> Cpu:
        server = psutil.Process(server_pid)
        own = server.cpu_times()
        # Children it has reaped (a replaced tagger) count here once gone; live ones below.
        engines = own.children_user + own.children_system
        for child in server.children(recursive=True):
            with suppress(psutil.NoSuchProcess):
                times = child.cpu_times()
                engines += times.user + times.system
        client = psutil.Process().cpu_times()
        return cls(own.user + own.system, engines, client.user + client.system)

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(
            self.service_s - other.service_s,
            self.engines_s - other.engines_s,
            self.client_s - other.client_s,
        )


# ---------------------------------------------------------------- requests


async def call_json(
    session: aiohttp.ClientSession,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    expect: int = 200,
) -> Any:
    """One request; its JSON answer, or ``RequestFailed`` on another status."""
    data = json.dumps(body).encode() if body is not None else None
    status, payload = await exchange(session, method, path, data)
    if status != expect:
        raise RequestFailed(error_text(status, payload))
    return json.loads(payload)


def job_body(segments: list[str]) -> dict[str, Any]:
    return {
        "source_lang": "en",
        "target_lang": "es",
        "cache": False,
        "documents": [{"name": "doc.txt", "segments": segments}],
    }


@dataclass
class Round:
    """What one round sends, and the ids of the jobs it submitted."""

    submits: list[list[str]]
    jobs: list[list[str]]
    sentences: list[str]
    ids: list[str] = field(default_factory=list)
    polls: int = 0

    async def submit(self, session: aiohttp.ClientSession, index: int) -> None:
        job = await call_json(session, "POST", "/v1/jobs", job_body(self.submits[index]), 202)
        self.ids.append(job["id"])

    async def status(self, session: aiohttp.ClientSession, index: int) -> None:
        await call_json(session, "GET", f"/v1/jobs/{self.ids[index % len(self.ids)]}")

    async def result(self, session: aiohttp.ClientSession, index: int) -> None:
        await call_json(session, "GET", f"/v1/jobs/{self.ids[index % len(self.ids)]}/result")

    async def job(self, session: aiohttp.ClientSession, index: int) -> None:
        job = await call_json(session, "POST", "/v1/jobs", job_body(self.jobs[index]), 202)
        while job["status"] in UNFINISHED:
            await asyncio.sleep(POLL_INTERVAL_S)
            job = await call_json(session, "GET", f"/v1/jobs/{job['id']}")
            self.polls += 1
        if job["status"] != "succeeded":
            raise RequestFailed(f"job {job['id']} {job['status']}")
        await call_json(session, "GET", f"/v1/jobs/{job['id']}/result")

    async def translate(self, session: aiohttp.ClientSession, index: int) -> None:
        body = {"source_lang": "en", "target_lang": "es", "segments": [self.sentences[index]]}
        await call_json(session, "POST", "/v1/translate", body)


Call = Callable[[aiohttp.ClientSession, int], Awaitable[None]]


@dataclass
class Batch:
    """What one batch of requests measured."""

    requests: int
    seconds: float = 0.0
    cpu: Cpu = Cpu(0.0, 0.0, 0.0)
    latencies_s: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)

    def figures(self) -> dict[str, Any]:
        ok = len(self.latencies_s)

        def per_request_ms(seconds: float) -> float | None:
            return round(1000 * seconds / ok, 3) if ok else None

        return {
            "service_cpu_ms": per_request_ms(self.cpu.service_s),
            "engine_cpu_ms": per_request_ms(self.cpu.engines_s),
            "client_cpu_ms": per_request_ms(self.cpu.client_s),
            "requests_per_s": round(ok / self.seconds, 1) if self.seconds else None,
            "p50_ms": round(percentile(self.latencies_s, 50) * 1000, 1),
            "p99_ms": round(percentile(self.latencies_s, 99) * 1000, 1),
            "requests": self.requests,
            "failed": sum(self.errors.values()),
            "seconds": round(self.seconds, 3),
        }


async def run_batch(
    session: aiohttp.ClientSession, call: Call, count: int, concurrency: int, server_pid: int
) -> Batch:
    """``count`` calls from ``concurrency`` clients; the CPU used meanwhile."""
    batch = Batch(requests=count)
    indexes: Iterator[int] = iter(range(count))

    async def client() -> None:
        for index in indexes:  # shared: each index goes to one client
            started = time.perf_counter()
            try:
                await call(session, index)
            except (*REQUEST_ERRORS, RequestFailed) as exc:
                batch.errors[describe(exc)] += 1
                continue
            batch.latencies_s.append(time.perf_counter() - started)

    before = Cpu.now(server_pid)
    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    batch.seconds = time.perf_counter() - started
    batch.cpu = Cpu.now(server_pid) - before
    return batch


async def drain(url: str, server_pid: int) -> tuple[float, Cpu]:
    """Waits until no job is unfinished (``/metrics``, every 50 ms): time and CPU taken."""
    before = Cpu.now(server_pid)
    started = time.perf_counter()
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    while True:
        counts = await asyncio.to_thread(job_counts, url)
        if not any(counts.get(status, 0) for status in UNFINISHED):
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"jobs unfinished after {DRAIN_TIMEOUT_S:.0f}s")
        await asyncio.sleep(POLL_INTERVAL_S)
    return time.perf_counter() - started, Cpu.now(server_pid) - before


async def idle(server_pid: int) -> float:
    """The server's CPU per second (ms) while nobody asks it anything: its sweeper,
    heartbeats and usage flush, under every batch."""
    before = Cpu.now(server_pid)
    await asyncio.sleep(IDLE_S)
    return round(1000 * (Cpu.now(server_pid) - before).service_s / IDLE_S, 1)


async def measure_round(url: str, server_pid: int, plan: Round, concurrency: int) -> dict[str, Any]:
    """Every request type once, in order; each type's figures, and the server's CPU while
    idle after the submitted jobs have finished."""
    found: dict[str, Any] = {}
    errors: Counter[str] = Counter()

    async def batch(name: str, call: Call, count: int) -> None:
        measured = await run_batch(session, call, count, concurrency, server_pid)
        found[name] = measured.figures()
        errors.update(measured.errors)

    async with client_session(url, concurrency, REQUEST_TIMEOUT_S) as session:
        await batch("submit", plan.submit, len(plan.submits))
        seconds, cpu = await drain(url, server_pid)
        jobs = len(plan.ids) or 1
        found["submit"] |= {
            "drain_s": round(seconds, 3),
            "drain_service_cpu_ms_per_job": round(1000 * cpu.service_s / jobs, 3),
            "drain_engine_cpu_ms_per_job": round(1000 * cpu.engines_s / jobs, 3),
        }
        found["idle"] = {"service_cpu_ms_per_s": await idle(server_pid)}
        await batch("status", plan.status, len(plan.submits))
        await batch("result", plan.result, len(plan.submits))
        await batch("job", plan.job, len(plan.jobs))
        found["job"]["polls_per_job"] = round(plan.polls / max(len(plan.jobs), 1), 2)
        await batch("translate", plan.translate, len(plan.sentences))
    if errors:
        found["errors"] = dict(errors.most_common(MAX_ERRORS))
    return found


async def reference_round(url: str, server_pid: int, concurrency: int) -> list[float]:
    """The reference's service CPU per request (ms) in each of ``REFERENCE_BATCHES``
    batches of ``REFERENCE_READS`` reads."""

    async def read(session: aiohttp.ClientSession, index: int) -> None:
        await call_json(session, "GET", f"/jobs/{job_id(index % ROWS)}")

    batches = []
    async with client_session(url, concurrency, REQUEST_TIMEOUT_S) as session:
        await run_batch(session, read, 50, concurrency, server_pid)  # warm up
        for _ in range(REFERENCE_BATCHES):
            measured = await run_batch(session, read, REFERENCE_READS, concurrency, server_pid)
            if measured.errors:
                raise RequestFailed(f"the reference failed: {dict(measured.errors)}")
            batches.append(float(measured.figures()["service_cpu_ms"]))
    return batches


def over_reference(types: dict[str, dict[str, Any]], reference_ms: float) -> None:
    """Adds each type's service CPU (the median of its rounds) over ``reference_ms``."""
    for found in types.values():
        ms = found["service_cpu_ms"]
        found["over_reference"] = round(ms / reference_ms, 2) if ms and reference_ms else None


# ---------------------------------------------------------------- runs


def plans(requests: int, rounds: int, seed: int = SEED) -> list[Round]:
    """Each round's segments: jobs of 8 short lines (any, the jobs skip the cache), and
    sentences for ``/v1/translate`` that no earlier request sent."""
    lines = load_corpus(CORPUS)
    if requests * rounds > len(lines):
        raise ValueError(f"--requests x --rounds is over the corpus's {len(lines)} lines")
    rng = random.Random(seed)
    rng.shuffle(lines)
    pool = cycle(lines)

    def jobs() -> list[list[str]]:
        return [list(islice(pool, JOB_SEGMENTS)) for _ in range(requests)]

    return [
        Round(submits=jobs(), jobs=jobs(), sentences=lines[r * requests : (r + 1) * requests])
        for r in range(rounds)
    ]


def median_figures(rounds: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each type's figures as the median of the rounds' (counts summed), and its service
    CPU by round."""
    out: dict[str, dict[str, Any]] = {}
    for name in LABELS:
        per_round = [found[name] for found in rounds]
        out[name] = {
            "what": LABELS[name],
            **{key: median([found[key] for found in per_round]) for key in per_round[0]},
            "requests": sum(found["requests"] for found in per_round),
            "failed": sum(found["failed"] for found in per_round),
            "service_cpu_ms_by_round": [found["service_cpu_ms"] for found in per_round],
        }
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=200, help="requests per type per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of every type")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    args = parser.parse_args(argv)
    if min(args.requests, args.rounds, args.concurrency) < 1:
        parser.error("--requests, --rounds and --concurrency must be at least 1")
    return args


def measure(args: argparse.Namespace) -> dict[str, Any]:
    rounds = plans(args.requests, args.rounds)
    load = os.getloadavg()[0]
    found, reference_ms = [], []
    with dragoman_server() as server, reference_server() as reference:
        warm_up(server.url)
        for index, plan in enumerate(rounds):
            found.append(asyncio.run(measure_round(server.url, server.pid, plan, args.concurrency)))
            reference_ms.append(
                asyncio.run(reference_round(reference.url, reference.pid, args.concurrency))
            )
            figures = found[-1]
            print(
                f"round {index + 1}/{len(rounds)}: "
                + ", ".join(f"{name} {figures[name]['service_cpu_ms']} ms" for name in LABELS)
                + f"; reference {', '.join(map(str, reference_ms[-1]))} ms",
                flush=True,
            )
    types = median_figures(found)
    reference_median = median([ms for batches in reference_ms for ms in batches])
    over_reference(types, reference_median)
    measured_reference = {
        "what": "bare FastAPI route, one aiosqlite read by primary key (reference_app.py)",
        "service_cpu_ms": reference_median,
        "service_cpu_ms_by_round": reference_ms,
        "reads_per_batch": REFERENCE_READS,
    }
    return {
        "workload": {
            "requests_per_type_per_round": args.requests,
            "rounds": args.rounds,
            "concurrency": args.concurrency,
            "job_segments": JOB_SEGMENTS,
            "corpus": f"tests/data/{CORPUS}",
            "poll_interval_s": POLL_INTERVAL_S,
            "client": CLIENT,
            "seed": SEED,
        },
        "load_1m_at_start": load,
        "types": types,
        "reference": measured_reference,
        "idle_service_cpu_ms_per_s": median([f["idle"]["service_cpu_ms_per_s"] for f in found]),
        "errors": [f["errors"] for f in found if "errors" in f],
        "rounds": found,
        "server": server.info,
    }


def summarize(result: dict[str, Any]) -> str:
    lines = [
        f"{'request':<42} {'service CPU ms':>14} {'/ reference':>11} {'engines ms':>10} "
        f"{'req/s':>8} {'p50 ms':>7}"
    ]
    for found in result["types"].values():
        lines.append(
            f"{found['what']:<42} {found['service_cpu_ms']:>14} {found['over_reference']:>11} "
            f"{found['engine_cpu_ms']:>10} {found['requests_per_s']:>8} {found['p50_ms']:>7}"
        )
    lines.append(
        f"reference, {result['reference']['what']}: "
        f"{result['reference']['service_cpu_ms']} ms of service CPU per request"
    )
    submit, job = result["types"]["submit"], result["types"]["job"]
    lines.append(
        f"after the submits: {submit['drain_service_cpu_ms_per_job']} ms service CPU and "
        f"{submit['drain_engine_cpu_ms_per_job']} ms engine CPU per job until all finished; "
        f"{job['polls_per_job']} polls per job all in; idle, the server uses "
        f"{result['idle_service_cpu_ms_per_s']} ms of CPU per second"
    )
    if result["errors"]:
        lines.append(f"errors: {result['errors']}")
    return "\n".join(lines)


def main() -> None:
    report(NAME, measure(parse_args()), summarize)


if __name__ == "__main__":
    main()
