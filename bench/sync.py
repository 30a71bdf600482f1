"""Single-segment synchronous requests: dragoman ``POST /v1/translate`` vs Apertium APY.

dragoman runs twice, as served (with the segment cache) and with ``DRAGOMAN_CACHE=false``
(every request through the engine). The servers run side by side; ``--rounds`` rounds send
each ``--requests`` licence sentences from ``--concurrency`` clients, one server after the
other, the order reversed every other round, so that a machine whose load drifts weighs on
all alike. Reported: segments/s and
latencies over all rounds, the ratio per round and its median, and CPU per request (the
server's process and its engine processes), which the machine's load moves least.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp
import psutil
from common import (
    CLIENT,
    REQUEST_ERRORS,
    SEED,
    Service,
    apy_server,
    client_session,
    describe,
    dragoman_server,
    error_text,
    exchange,
    load_corpus,
    normalize,
    package_version,
    percentile,
    ratio,
    report,
)

NAME = "sync"
# The same server with DRAGOMAN_CACHE=false: every request through the engine. The rounds
# draw from the licence corpus's distinct sentences, so the default server soon answers
# most of them from the segment cache.
NO_CACHE = "dragoman_no_cache"
RATIO_TARGET_MIN = 5.0
REQUEST_TIMEOUT_S = 30.0
MAX_EXAMPLES = 5

Call = Callable[[aiohttp.ClientSession, str], Awaitable[str]]


@dataclass(frozen=True)
class Options:
    """How to load a server."""

    concurrency: int
    warmup: list[str]


class RequestFailed(Exception):
    """A request answered with something other than a translation."""


@dataclass
class Outcome:
    """What one load run measured."""

    seconds: float = 0.0
    latencies_s: list[float] = field(default_factory=list)
    translations: list[str | None] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    cpu_s: float = 0.0

    def summary(self) -> dict[str, Any]:
        ok = len(self.latencies_s)
        return {
            "cpu_ms_per_request": round(1000 * self.cpu_s / ok, 2) if ok else None,
            "requests": len(self.translations),
            "succeeded": ok,
            "failed": sum(self.errors.values()),
            "errors": dict(self.errors.most_common(MAX_EXAMPLES)),
            "seconds": round(self.seconds, 3),
            "segments_per_s": round(ok / self.seconds, 1) if self.seconds else None,
            "latency_ms": {
                "p50": round(percentile(self.latencies_s, 50) * 1000, 1),
                "p99": round(percentile(self.latencies_s, 99) * 1000, 1),
                "max": round(max(self.latencies_s, default=0.0) * 1000, 1),
            },
        }


# ---------------------------------------------------------------- the two servers' calls


async def dragoman_call(session: aiohttp.ClientSession, segment: str) -> str:
    """One segment through dragoman's ``POST /v1/translate``."""
    body = {"source_lang": "en", "target_lang": "es", "segments": [segment]}
    status, payload = await exchange(session, "POST", "/v1/translate", json.dumps(body).encode())
    if status != 200:
        raise RequestFailed(error_text(status, payload))
    translation: str = json.loads(payload)["translations"][0]
    return translation


async def apy_call(session: aiohttp.ClientSession, segment: str) -> str:
    """One segment through APY's ``GET /translate``, unknown words unmarked as dragoman's."""
    query = urlencode({"langpair": "eng|spa", "q": segment, "markUnknown": "no"})
    status, payload = await exchange(session, "GET", f"/translate?{query}")
    if status != 200:
        raise RequestFailed(f"{status} {payload[:200].decode(errors='replace')}")
    body = json.loads(payload)
    if body.get("responseStatus") != 200:
        raise RequestFailed(f"responseStatus {body.get('responseStatus')}: {body}")
    translation: str = body["responseData"]["translatedText"]
    return translation


# ---------------------------------------------------------------- load


async def worker(
    session: aiohttp.ClientSession, call: Call, segments: list[str], queue: asyncio.Queue[int]
) -> Outcome:
    """Takes request indexes off ``queue`` until it is empty; records each outcome."""
    outcome = Outcome(translations=[None] * len(segments))
    while not queue.empty():
        index = queue.get_nowait()
        started = time.perf_counter()
        try:
            outcome.translations[index] = await call(session, segments[index])
        except (*REQUEST_ERRORS, RequestFailed) as exc:
            outcome.errors[describe(exc)] += 1
            continue
        outcome.latencies_s.append(time.perf_counter() - started)
    return outcome


def merge(parts: list[Outcome], size: int, seconds: float) -> Outcome:
    """One outcome from the workers' partial ones."""
    merged = Outcome(seconds=seconds, translations=[None] * size)
    for part in parts:
        merged.latencies_s += part.latencies_s
        merged.errors.update(part.errors)
        for index, text in enumerate(part.translations):
            if text is not None:
                merged.translations[index] = text
    return merged


async def drive(service: Service, call: Call, segments: list[str], options: Options) -> Outcome:
    """Warm up (not counted), then send ``segments`` with ``concurrency`` clients; the
    server's CPU (with its engine processes) is counted over the measured part."""
    async with client_session(service.url, options.concurrency, REQUEST_TIMEOUT_S) as session:
        warm = (call(session, segment) for segment in options.warmup)
        await asyncio.gather(*warm, return_exceptions=True)
        queue: asyncio.Queue[int] = asyncio.Queue()
        for index in range(len(segments)):
            queue.put_nowait(index)
        workers = (worker(session, call, segments, queue) for _ in range(options.concurrency))
        cpu_before = cpu_s(service.pid)
        started = time.perf_counter()
        parts = await asyncio.gather(*workers)
        outcome = merge(list(parts), len(segments), time.perf_counter() - started)
        outcome.cpu_s = cpu_s(service.pid) - cpu_before
        return outcome


def cpu_s(pid: int) -> float:
    """CPU seconds so far of a process and its live descendants (engine pipelines)."""
    total = 0.0
    server = psutil.Process(pid)
    for process in [server, *server.children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:  # a pipeline replaced meanwhile
            continue
        total += times.user + times.system
    return total


def run_rounds(
    servers: dict[str, tuple[Service, Call]], rounds: list[list[str]], options: Options
) -> dict[str, list[Outcome]]:
    """Every round: each server in turn (the order reversed every other round)."""
    outcomes: dict[str, list[Outcome]] = {name: [] for name in servers}
    names = list(servers)
    for index, segments in enumerate(rounds):
        for name in names if index % 2 == 0 else names[::-1]:
            service, call = servers[name]
            outcomes[name].append(asyncio.run(drive(service, call, segments, options)))
        print(
            f"round {index + 1}/{len(rounds)}: "
            + ", ".join(
                f"{name} {outcomes[name][-1].summary()['segments_per_s']} seg/s" for name in names
            ),
            flush=True,
        )
    return outcomes


def measure_both(rounds: list[list[str]], options: Options) -> dict[str, Any]:
    """Every server's outcomes by round, and how each was run (APY may be missing)."""
    info: dict[str, Any] = {"apy": {"version": package_version("apertium-apy")}}
    with dragoman_server() as ours, dragoman_server({"DRAGOMAN_CACHE": "false"}) as uncached:
        servers: dict[str, tuple[Service, Call]] = {
            "dragoman": (ours, dragoman_call),
            NO_CACHE: (uncached, dragoman_call),
        }
        try:
            with apy_server() as theirs:
                servers["apy"] = (theirs, apy_call)
                outcomes = run_rounds(servers, rounds, options)
            info["apy"].update(theirs.info)
        except Exception as exc:  # APY missing or broken: dragoman alone
            info["apy"]["error"] = describe(exc)
            servers.pop("apy", None)
            outcomes = run_rounds(servers, rounds, options)
    info["dragoman"], info[NO_CACHE] = ours.info, uncached.info
    return {"outcomes": outcomes, "info": info}


# ---------------------------------------------------------------- report


def agreement(left: list[str | None], right: list[str | None]) -> float | None:
    """Share of requests both answered with the same text (whitespace runs aside)."""
    both = [(a, b) for a, b in zip(left, right, strict=True) if a is not None and b is not None]
    if not both:
        return None
    return round(sum(normalize(a) == normalize(b) for a, b in both) / len(both), 4)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=250, help="requests per server per round")
    parser.add_argument("--rounds", type=int, default=4, help="rounds, each server once per round")
    parser.add_argument("--concurrency", type=int, default=8, help="clients in flight at once")
    parser.add_argument("--warmup", type=int, default=8, help="uncounted requests first")
    return parser.parse_args(argv)


def combined(outcomes: list[Outcome]) -> Outcome:
    """One outcome of every round's requests."""
    merged = Outcome(seconds=sum(o.seconds for o in outcomes), cpu_s=sum(o.cpu_s for o in outcomes))
    for outcome in outcomes:
        merged.latencies_s += outcome.latencies_s
        merged.translations += outcome.translations
        merged.errors.update(outcome.errors)
    return merged


def measure(args: argparse.Namespace) -> dict[str, Any]:
    corpus = load_corpus()
    rng = random.Random(SEED)
    rounds = [[rng.choice(corpus) for _ in range(args.requests)] for _ in range(args.rounds)]
    warmup = [rng.choice(corpus) for _ in range(args.warmup)]
    options = Options(concurrency=args.concurrency, warmup=warmup)
    found = measure_both(rounds, options)
    outcomes, info = found["outcomes"], found["info"]
    theirs = combined(outcomes["apy"]) if "apy" in outcomes else None
    result: dict[str, Any] = {
        "workload": {
            "requests_per_round": args.requests,
            "rounds": args.rounds,
            "concurrency": args.concurrency,
            "warmup": args.warmup,
            "distinct_segments": len({s for r in rounds for s in r}),
            "client": CLIENT,
            "seed": SEED,
        },
        "apy": {**(theirs.summary() if theirs else {}), "server": info["apy"]},
        "ratio_target_min": RATIO_TARGET_MIN,
    }
    for name, suffix in (("dragoman", ""), (NO_CACHE, "_no_cache")):
        ours = combined(outcomes[name])
        result[name] = {**ours.summary(), "server": info[name]}
        result.update(versus_apy(ours, theirs, outcomes[name], outcomes.get("apy", []), suffix))
    return result


def versus_apy(
    ours: Outcome, theirs: Outcome | None, rounds: list[Outcome], apy: list[Outcome], suffix: str
) -> dict[str, Any]:
    """One dragoman server against APY: overall, by round, and whether they agree."""
    ours_rate = ours.summary()["segments_per_s"] or 0.0
    theirs_rate = theirs.summary()["segments_per_s"] if theirs else None
    by_round = [
        ratio(a.summary()["segments_per_s"] or 0.0, b.summary()["segments_per_s"] or 0.0)
        for a, b in zip(rounds, apy, strict=False)
    ]
    return {
        f"ratio_dragoman{suffix}_over_apy": ratio(ours_rate, theirs_rate) if theirs_rate else None,
        f"ratio_by_round{suffix}": by_round,
        f"ratio_median_of_rounds{suffix}": statistics.median(r for r in by_round if r)
        if any(by_round)
        else None,
        f"agreement_with_apy{suffix}": agreement(ours.translations, theirs.translations)
        if theirs
        else None,
    }


def summarize(result: dict[str, Any]) -> str:
    lines = []
    for name in ("dragoman", NO_CACHE, "apy"):
        part = result[name]
        if "segments_per_s" not in part:
            lines.append(f"{name}: unavailable ({part['server'].get('error')})")
            continue
        lat = part["latency_ms"]
        lines.append(
            f"{name}: {part['segments_per_s']} seg/s, p50 {lat['p50']} ms, p99 {lat['p99']} ms, "
            f"{part['cpu_ms_per_request']} ms CPU per request, {part['failed']} failed"
        )
    for label, suffix in (("dragoman", ""), ("dragoman, cache off", "_no_cache")):
        lines.append(
            f"{label} / APY {result[f'ratio_dragoman{suffix}_over_apy']} overall, "
            f"{result[f'ratio_median_of_rounds{suffix}']} median of rounds "
            f"{result[f'ratio_by_round{suffix}']} (target ≥ {RATIO_TARGET_MIN:g})"
        )
    return "\n".join(lines)


def main() -> None:
    report(NAME, measure(parse_args()), summarize)


if __name__ == "__main__":
    main()
