"""The LibreTranslate facade's cost: ``POST /translate`` against ``POST /v1/translate``.

One embedded ``dragoman serve``, the same load on both routes: ``--concurrency`` client
threads, one sentence per request (``tests/data/en_licenses.txt``), until ``--requests`` are
done. The facade is driven by the real ``libretranslatepy`` client (a form post through
``urllib.request``, a fresh connection per request); ``/v1/translate`` by the same
``urllib.request`` call with a JSON body, so both clients cost alike. After a warm-up of every
load, ``--rounds`` rounds run the loads one after another, the order reversed every other
round, so the machine's noise falls on each; every load of a round sends the same sentences.

Reported per load: segments/s over all rounds, latency p50/p95, CPU per request of the
server's Python process, of its Apertium pipelines and of the clients. Then the facade/v1
ratio of each round, their median (the target: ``≥ 0.90``) and the ratio the CPU figures
predict when the cores are the limit, which other work on the machine disturbs far less than
wall time; and parity, how many of the facade's translations equal v1's. The facade with
``source=auto`` (language detection first) is an extra line, outside the target.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any

import psutil
from common import (
    SEED,
    describe,
    dragoman_server,
    error_text,
    load_corpus,
    percentile,
    ratio,
    report,
)
from libretranslatepy import LibreTranslateAPI

NAME = "compat"
REQUEST_TIMEOUT_S = 30
RATIO_TARGET_MIN = 0.90
MAX_EXAMPLES = 5
CPU_KEYS = ("server", "pipelines", "clients")
REQUEST_ERRORS = (OSError, ValueError, KeyError, TypeError)  # urllib's errors are OSErrors
CLIENT = (
    f"libretranslatepy {version('libretranslatepy')} / urllib.request "
    f"(Python {platform.python_version()}), one thread per client"
)

Call = Callable[[str], str]  # one sentence in, its translation out
MakeCall = Callable[[str], Call]  # a client thread's call, given the server's URL


class RequestFailed(Exception):
    """A request answered with something other than a translation."""


# ---------------------------------------------------------------- the clients


def v1_client(url: str) -> Call:
    """``POST /v1/translate`` with one segment, sent the way ``libretranslatepy`` sends its
    form: one ``urllib.request.urlopen`` each, a fresh connection."""
    endpoint = f"{url}/v1/translate"
    headers = {"Content-Type": "application/json"}

    def call(sentence: str) -> str:
        body = {"source_lang": "en", "target_lang": "es", "segments": [sentence]}
        request = urllib.request.Request(endpoint, json.dumps(body).encode(), headers)
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            raise RequestFailed(error_text(exc.code, exc.read())) from None
        translation: str = json.loads(payload)["translations"][0]
        return translation

    return call


def lt_client(source: str) -> MakeCall:
    """The real ``LibreTranslateAPI(url).translate(q, source, "es")``."""

    def make(url: str) -> Call:
        api = LibreTranslateAPI(url)

        def call(sentence: str) -> str:
            try:
                translation: str = api.translate(sentence, source, "es", REQUEST_TIMEOUT_S)
            except urllib.error.HTTPError as exc:
                raise RequestFailed(f"{exc.code} {exc.read()[:200]!r}") from None
            return translation

        return call

    return make


# The target compares the first two; source=auto is reported beside them.
LOADS: list[tuple[str, MakeCall]] = [
    ("v1", v1_client),
    ("libretranslate", lt_client("en")),
    ("libretranslate_auto", lt_client("auto")),
]


# ---------------------------------------------------------------- load


@dataclass
class Outcome:
    """What one load measured: its wall time, each request's latency and answer."""

    seconds: float = 0.0
    latencies_s: list[float] = field(default_factory=list)
    translations: list[str | None] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    cpu_s: dict[str, float] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return len(self.latencies_s) / self.seconds if self.seconds else 0.0


def client_thread(
    call: Call, sentences: list[str], indexes: list[int], lock: threading.Lock, out: Outcome
) -> None:
    """Takes indexes off the shared list until it is empty; records each answer."""
    while True:
        with lock:
            if not indexes:
                return
            index = indexes.pop()
        started = time.perf_counter()
        try:
            text = call(sentences[index])
        except (*REQUEST_ERRORS, RequestFailed) as exc:
            with lock:
                out.errors[describe(exc)] += 1
            continue
        elapsed = time.perf_counter() - started
        with lock:
            out.translations[index] = text
            out.latencies_s.append(elapsed)


def cpu_s(server: psutil.Process) -> dict[str, float]:
    """CPU seconds so far (user and system): the server's Python process, its live engine
    pipelines, and this process, the clients."""

    def used(process: psutil.Process) -> float:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:  # a pipeline restarted meanwhile
            return 0.0
        return float(times.user + times.system)

    pipelines = sum(used(child) for child in server.children(recursive=True))
    return {"server": used(server), "pipelines": pipelines, "clients": time.process_time()}


def drive(
    url: str, make: MakeCall, sentences: list[str], concurrency: int, server: psutil.Process
) -> Outcome:
    """``sentences`` sent by ``concurrency`` client threads, each with its own client."""
    out = Outcome(translations=[None] * len(sentences))
    indexes = list(range(len(sentences)))[::-1]
    lock = threading.Lock()
    threads = [
        threading.Thread(target=client_thread, args=(make(url), sentences, indexes, lock, out))
        for _ in range(concurrency)
    ]
    before = cpu_s(server)
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.seconds = time.perf_counter() - started
    out.cpu_s = {key: value - before[key] for key, value in cpu_s(server).items()}
    return out


# ---------------------------------------------------------------- rounds


def round_order(index: int) -> list[tuple[str, MakeCall]]:
    """Every other round reversed, so neither route always goes first."""
    return LOADS if index % 2 == 0 else LOADS[::-1]


def parity(sentences: list[str], left: list[str | None], right: list[str | None]) -> dict[str, Any]:
    """How many of the requests both answered got the very same text; the first few that
    did not."""
    both = [
        (sentence, a, b)
        for sentence, a, b in zip(sentences, left, right, strict=True)
        if a is not None and b is not None
    ]
    differ = [sentence for sentence, a, b in both if a != b]
    examples = list(dict.fromkeys(differ))[:MAX_EXAMPLES]
    return {"compared": len(both), "same": len(both) - len(differ), "differ": examples}


def run_round(
    index: int, url: str, sentences: list[str], concurrency: int, server: psutil.Process
) -> dict[str, Any]:
    record: dict[str, Any] = {"load_1m_at_start": round(os.getloadavg()[0], 2), "order": []}
    outcomes: dict[str, Outcome] = {}
    for name, make in round_order(index):
        record["order"].append(name)
        outcomes[name] = drive(url, make, sentences, concurrency, server)
        print(f"  {name}: {outcomes[name].rate:.1f} seg/s", flush=True)
    for name, outcome in outcomes.items():
        record[name] = {
            "seconds": round(outcome.seconds, 3),
            "segments_per_s": round(outcome.rate, 1),
            "failed": outcome.errors.total(),
        }
    for name in ("libretranslate", "libretranslate_auto"):
        record[f"ratio_{name}_over_v1"] = ratio(outcomes[name].rate, outcomes["v1"].rate)
    v1 = outcomes["v1"].translations
    record["parity_with_v1"] = {
        name: parity(sentences, outcomes[name].translations, v1)
        for name in ("libretranslate", "libretranslate_auto")
    }
    record["outcomes"] = outcomes  # taken out before the record is written
    return record


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    """One load over every round."""
    latencies = [s for o in outcomes for s in o.latencies_s]
    errors: Counter[str] = sum((o.errors for o in outcomes), Counter())
    seconds = sum(o.seconds for o in outcomes)
    ok = len(latencies)
    return {
        "requests": sum(len(o.translations) for o in outcomes),
        "succeeded": ok,
        "failed": errors.total(),
        "errors": dict(errors.most_common(MAX_EXAMPLES)),
        "seconds": round(seconds, 3),
        "segments_per_s": round(ok / seconds, 1) if seconds else None,
        "segments_per_s_by_round": [round(o.rate, 1) for o in outcomes],
        "latency_ms": {
            "p50": round(percentile(latencies, 50) * 1000, 1),
            "p95": round(percentile(latencies, 95) * 1000, 1),
            "max": round(max(latencies, default=0.0) * 1000, 1),
        },
        "cpu_ms_per_request": {
            key: round(1000 * sum(o.cpu_s[key] for o in outcomes) / ok, 2) if ok else None
            for key in CPU_KEYS
        },
    }


def totals(records: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """Parity over every round; the sentences that differed (each once, a few)."""
    found = [r["parity_with_v1"][name] for r in records]
    differ = list(dict.fromkeys(s for f in found for s in f["differ"]))
    return {
        "compared": sum(f["compared"] for f in found),
        "same": sum(f["same"] for f in found),
        "differing_sentences": differ[:MAX_EXAMPLES],
    }


def run_rounds(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One server: a warm-up of every load, then the rounds; their records, its info."""
    corpus = load_corpus()
    rng = random.Random(SEED)
    warmup = [rng.choice(corpus) for _ in range(args.warmup)]
    batches = [[rng.choice(corpus) for _ in range(args.requests)] for _ in range(args.rounds)]
    records = []
    with dragoman_server() as server:
        process = psutil.Process(server.pid)
        for _, make in LOADS:  # every route's code paths and the detector's model loaded
            drive(server.url, make, warmup, args.concurrency, process)
        for index, sentences in enumerate(batches):
            print(f"round {index + 1}/{args.rounds}", flush=True)
            records.append(run_round(index, server.url, sentences, args.concurrency, process))
    return records, server.info


def cpu_bound_ratio(loads: dict[str, Any], name: str) -> float | None:
    """v1's CPU per request (server, pipelines and clients) over ``name``'s: the ratio of
    their segments/s if the two cores were the only limit, less exposed to noise."""
    total = {key: sum(loads[key]["cpu_ms_per_request"].values()) for key in ("v1", name)}
    return ratio(total["v1"], total[name])


def ratios(records: list[dict[str, Any]], loads: dict[str, Any], name: str) -> dict[str, Any]:
    by_round = [r[f"ratio_{name}_over_v1"] for r in records]
    return {
        "median_of_rounds": round(statistics.median(by_round), 3),
        "by_round": by_round,
        "overall": ratio(loads[name]["segments_per_s"], loads["v1"]["segments_per_s"]),
        "cpu_bound": cpu_bound_ratio(loads, name),
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    records, server = run_rounds(args)
    outcomes = [r.pop("outcomes") for r in records]
    loads = {name: summary([o[name] for o in outcomes]) for name, _ in LOADS}
    facade = ratios(records, loads, "libretranslate")
    facade["target_min"] = RATIO_TARGET_MIN
    facade["met"] = facade["median_of_rounds"] >= RATIO_TARGET_MIN
    return {
        "workload": {
            "requests_per_load_per_round": args.requests,
            "rounds": args.rounds,
            "concurrency": args.concurrency,
            "warmup_per_load": args.warmup,
            "client": CLIENT,
            "corpus": "tests/data/en_licenses.txt",
            "seed": SEED,
        },
        "loads": loads,
        "server": server,
        "ratio_libretranslate_over_v1": facade,
        "ratio_libretranslate_auto_over_v1": ratios(records, loads, "libretranslate_auto"),
        "parity_with_v1": {
            "libretranslate": totals(records, "libretranslate"),
            "libretranslate_auto": totals(records, "libretranslate_auto"),
        },
        "rounds": records,
    }


# ---------------------------------------------------------------- report


def summarize(result: dict[str, Any]) -> str:
    work = result["workload"]
    lines = [
        f"{work['rounds']} rounds x {work['requests_per_load_per_round']} requests per load, "
        f"{work['concurrency']} client threads"
    ]
    for name, _ in LOADS:
        part = result["loads"][name]
        lat = part["latency_ms"]
        lines.append(
            f"{name:20} {part['segments_per_s']} seg/s {part['segments_per_s_by_round']}, "
            f"p50 {lat['p50']} ms, p95 {lat['p95']} ms, {part['failed']} failed; CPU ms/request "
            + ", ".join(f"{k} {v}" for k, v in part["cpu_ms_per_request"].items())
        )
    over = result["ratio_libretranslate_over_v1"]
    lines.append(
        f"facade/v1 {over['median_of_rounds']} (median of rounds {over['by_round']}, overall "
        f"{over['overall']}, CPU-bound {over['cpu_bound']}; target ≥ {over['target_min']}: "
        f"{'met' if over['met'] else 'NOT met'})"
    )
    auto = result["ratio_libretranslate_auto_over_v1"]
    lines.append(
        f"facade source=auto/v1 {auto['median_of_rounds']} {auto['by_round']}, "
        f"CPU-bound {auto['cpu_bound']} (not in the target)"
    )
    same = result["parity_with_v1"]
    lines.append(
        "same translations as v1: "
        + ", ".join(f"{k} {v['same']}/{v['compared']}" for k, v in same.items())
        + f"; server log errors: {result['server'].get('log_errors', 0)}"
    )
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=200, help="per load and round")
    parser.add_argument("--rounds", type=int, default=8, help="each load once per round")
    parser.add_argument("--concurrency", type=int, default=8, help="client threads")
    parser.add_argument("--warmup", type=int, default=32, help="uncounted requests per load")
    args = parser.parse_args()
    if min(args.requests, args.rounds, args.concurrency) < 1 or args.warmup < 0:
        parser.error("--requests, --rounds and --concurrency must be at least 1")
    return args


def main() -> None:
    report(NAME, measure(parse_args()), summarize)


if __name__ == "__main__":
    main()
