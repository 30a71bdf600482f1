"""Single-segment synchronous requests: dragoman ``POST /v1/translate`` vs Apertium APY."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp
from common import (
    CLIENT,
    REQUEST_ERRORS,
    SEED,
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

    def summary(self) -> dict[str, Any]:
        ok = len(self.latencies_s)
        return {
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
    """One segment through APY's ``GET /translate``."""
    query = urlencode({"langpair": "eng|spa", "q": segment})
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


async def drive(url: str, call: Call, segments: list[str], options: Options) -> Outcome:
    """Warm up (not counted), then send ``segments`` with ``concurrency`` clients."""
    async with client_session(url, options.concurrency, REQUEST_TIMEOUT_S) as session:
        warm = (call(session, segment) for segment in options.warmup)
        await asyncio.gather(*warm, return_exceptions=True)
        queue: asyncio.Queue[int] = asyncio.Queue()
        for index in range(len(segments)):
            queue.put_nowait(index)
        workers = (worker(session, call, segments, queue) for _ in range(options.concurrency))
        started = time.perf_counter()
        parts = await asyncio.gather(*workers)
        return merge(list(parts), len(segments), time.perf_counter() - started)


def measure_dragoman(segments: list[str], options: Options) -> tuple[Outcome, dict[str, Any]]:
    """dragoman's outcome and how its server ran."""
    with dragoman_server() as server:
        outcome = asyncio.run(drive(server.url, dragoman_call, segments, options))
    return outcome, server.info


def measure_apy(segments: list[str], options: Options) -> tuple[Outcome | None, dict[str, Any]]:
    """APY's outcome and how it was run, or ``None`` and the reason it could not be."""
    info: dict[str, Any] = {"version": package_version("apertium-apy")}
    try:
        with apy_server() as server:
            outcome = asyncio.run(drive(server.url, apy_call, segments, options))
        info.update(server.info)
    except Exception as exc:
        info["error"] = describe(exc)
        return None, info
    return outcome, info


# ---------------------------------------------------------------- report


def agreement(left: list[str | None], right: list[str | None]) -> float | None:
    """Share of requests both answered with the same text (whitespace runs aside)."""
    both = [(a, b) for a, b in zip(left, right, strict=True) if a is not None and b is not None]
    if not both:
        return None
    return round(sum(normalize(a) == normalize(b) for a, b in both) / len(both), 4)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=500, help="measured requests per server")
    parser.add_argument("--concurrency", type=int, default=8, help="clients in flight at once")
    parser.add_argument("--warmup", type=int, default=8, help="uncounted requests first")
    return parser.parse_args()


def measure(args: argparse.Namespace) -> dict[str, Any]:
    corpus = load_corpus()
    rng = random.Random(SEED)
    segments = [rng.choice(corpus) for _ in range(args.requests)]
    warmup = [rng.choice(corpus) for _ in range(args.warmup)]
    options = Options(concurrency=args.concurrency, warmup=warmup)
    ours, ours_info = measure_dragoman(segments, options)
    theirs, apy_info = measure_apy(segments, options)
    ours_rate = ours.summary()["segments_per_s"] or 0.0
    theirs_rate = theirs.summary()["segments_per_s"] if theirs else None
    return {
        "workload": {
            "requests": args.requests,
            "concurrency": args.concurrency,
            "warmup": args.warmup,
            "client": CLIENT,
            "seed": SEED,
        },
        "dragoman": {**ours.summary(), "server": ours_info},
        "apy": {**(theirs.summary() if theirs else {}), "server": apy_info},
        "ratio_dragoman_over_apy": ratio(ours_rate, theirs_rate) if theirs_rate else None,
        "ratio_target_min": 3.0,
        "agreement_with_apy": agreement(ours.translations, theirs.translations) if theirs else None,
    }


def summarize(result: dict[str, Any]) -> str:
    lines = []
    for name in ("dragoman", "apy"):
        part = result[name]
        if "segments_per_s" not in part:
            lines.append(f"{name}: unavailable ({part['server'].get('error')})")
            continue
        lat = part["latency_ms"]
        lines.append(
            f"{name}: {part['segments_per_s']} seg/s, p50 {lat['p50']} ms, p99 {lat['p99']} ms, "
            f"{part['failed']} failed"
        )
    lines.append(f"dragoman/APY {result['ratio_dragoman_over_apy']} (target ≥ 3)")
    return "\n".join(lines)


def main() -> None:
    report(NAME, measure(parse_args()), summarize)


if __name__ == "__main__":
    main()
