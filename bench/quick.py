"""``make bench-quick``: every main benchmark, small, in about 90 s on 2 cores, compared with a
baseline.

Each compared figure is a ratio against a baseline measured in the same run (the raw engine,
APY, the first pass, a bare FastAPI route's CPU per request), so that a slower or busier
machine moves it less than it moves wall times and milliseconds; those milliseconds and jobs/s
are printed beside, not compared. Short measurements are repeated and their median taken:

- bulk: the short corpus's 100 documents as 100 jobs (``"cache": false``), embedded, on a
  fresh server per round, against raw ``apertium -u eng-spa`` over their concatenation
  (``workload.py``); then, on the same server, the repeat pass: the same 100 documents with
  the cache on, twice (``reuse.py``'s pass), the second over the first;
- sync: ``sync.py`` with 3 rounds of 100 requests, dragoman (as served, and with the cache
  off) over APY;
- requests: ``request_costs.py`` with 3 rounds of 150 requests per type, service CPU per
  request, over the reference's (``reference_app.py``: one ``aiosqlite`` read behind FastAPI);
- scale: ``scale.py`` with 2,000 jobs, accepted jobs/s and the server's CPU per job (over the
  same reference).

Writes ``bench/results/latest.json`` and prints each figure beside
``bench/results/baseline.json``'s, flagging those worse by more than 15 %. Timings never
fail it: it exits 0 unless a benchmark itself breaks. ``--save-baseline`` makes this run the
baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psutil
import request_costs
import scale
import sync
from bulk import WORKERS, deployment_settings
from common import RESULTS_DIR, dragoman_server, median, ratio, write_result
from reuse import run_pass
from workload import WORKLOADS, Workload, run_jobs, run_raw, warm_up

NAME = "latest"
BASELINE = "baseline"
WORSE_THRESHOLD = 0.15
BULK_ROUNDS = 3
SYNC_ARGS = ["--requests", "100", "--rounds", "3"]
REQUESTS_ARGS = ["--requests", "300", "--rounds", "3"]
SCALE_ARGS = ["--jobs", "2000"]


# ---------------------------------------------------------------- measurements


def bulk_round(workload: Workload) -> dict[str, Any]:
    """One fresh server: 100 short jobs, then the same documents twice with the cache on;
    then the raw engine over them."""
    with dragoman_server(deployment_settings("embedded", WORKERS)) as server:
        warm_up(server.url)
        _, e2e = run_jobs(server.url, workload.documents, one_job=False, pids=[server.pid])
        first = run_pass(server.url, workload.documents, cache=True)
        again = run_pass(server.url, workload.documents, cache=True)
    _, raw_s, raw_cpu_s = run_raw(workload.documents)
    return {
        "e2e_s": e2e["e2e_s"],
        "server_cpu_s": e2e["server_cpu_s"],
        "raw_s": round(raw_s, 3),
        "raw_cpu_s": round(raw_cpu_s, 3),
        "e2e_over_raw": ratio(e2e["e2e_s"], raw_s),
        "cpu_over_raw": ratio(e2e["server_cpu_s"], raw_cpu_s),
        "first_pass_s": first["e2e_s"],
        "again_s": again["e2e_s"],
        "again_over_first": ratio(again["e2e_s"], first["e2e_s"]),
        "again_equals_first": again["segments"] == first["segments"],
        "again_origins": again["origins"],
        "job_statuses": e2e["job_statuses"],
    }


def bulk(rounds: int) -> dict[str, Any]:
    workload = WORKLOADS["short"]()
    found = []
    for index in range(rounds):
        found.append(bulk_round(workload))
        print(f"bulk round {index + 1}/{rounds}: {brief(found[-1])}", flush=True)
    keys = ("e2e_over_raw", "cpu_over_raw", "again_over_first")
    return {
        "workload": workload.describe(),
        **{key: median([r[key] for r in found]) for key in keys},
        "rounds": found,
    }


def brief(found: dict[str, Any]) -> str:
    return (
        f"100 jobs {found['e2e_s']:.2f}s, raw {found['raw_s']:.2f}s "
        f"({found['e2e_over_raw']}), again {found['again_s']:.2f}s "
        f"of first {found['first_pass_s']:.2f}s ({found['again_over_first']})"
    )


def timed_section(name: str, measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    print(f"--- {name}", flush=True)
    started = time.perf_counter()
    found = measure()
    return {**found, "wall_s": round(time.perf_counter() - started, 1)}


def measure_all(rounds: int) -> dict[str, Any]:
    """Every section, in order, with the machine's load around them."""
    load = os.getloadavg()[0]
    busy_before = busy_cpu_s()
    started = time.perf_counter()
    sections = {
        "bulk": timed_section("bulk and repeat", lambda: bulk(rounds)),
        "sync": timed_section("sync", lambda: sync.measure(sync.parse_args(SYNC_ARGS))),
        "requests": timed_section(
            "requests",
            lambda: request_costs.measure(request_costs.parse_args(REQUESTS_ARGS)),
        ),
        "scale": timed_section("scale", lambda: scale.measure(scale.parse_args(SCALE_ARGS))),
    }
    wall_s = time.perf_counter() - started
    return {
        "wall_s": round(wall_s, 1),
        # What else the machine did shows in every figure: its load, and how many cores were
        # busy on average (this run's processes included).
        "load_1m": {"start": round(load, 2), "end": round(os.getloadavg()[0], 2)},
        "busy_cores": round((busy_cpu_s() - busy_before) / wall_s, 2),
        "figures": figures(sections),
        "problems": problems(sections),
        "sections": sections,
    }


def busy_cpu_s() -> float:
    """CPU seconds the whole machine has spent on anything but idling."""
    times = psutil.cpu_times()
    return float(times.user + times.nice + times.system + times.irq + times.softirq)


def problems(sections: dict[str, Any]) -> list[str]:
    """What went wrong besides the timings: failed jobs or requests, a repeat that differs."""
    found = []
    for index, run in enumerate(sections["bulk"]["rounds"], 1):
        if set(run["job_statuses"]) != {"succeeded"}:
            found.append(f"bulk round {index}: jobs {run['job_statuses']}")
        if not run["again_equals_first"]:
            found.append(f"bulk round {index}: the repeat pass's translations differ")
    for name in ("dragoman", "dragoman_no_cache", "apy"):
        server = sections["sync"][name]
        if "failed" not in server:
            found.append(f"sync: {name} unavailable ({server['server'].get('error')})")
        elif server["failed"]:
            found.append(f"sync: {server['failed']} {name} requests failed: {server['errors']}")
    found += [f"requests: {errors}" for errors in sections["requests"]["errors"]]
    submission = sections["scale"]["submission"]
    if submission["rejected"]:
        found.append(f"scale: {submission['rejected']} rejected: {submission['errors']}")
    return found


# ---------------------------------------------------------------- figures


@dataclass(frozen=True)
class Figure:
    label: str
    better: str  # "lower" or "higher"
    get: Callable[[dict[str, Any]], float | None]
    # Ratios to something measured in the same run are compared with the baseline's; an
    # absolute figure (milliseconds, jobs/s) moves with the machine, and is shown only.
    compared: bool = True


FIGURES = {
    "bulk_e2e_over_raw": Figure(
        "bulk: 100 short jobs e2e / raw", "lower", lambda s: s["bulk"]["e2e_over_raw"]
    ),
    "bulk_cpu_over_raw": Figure(
        "bulk: 100 short jobs CPU / raw CPU", "lower", lambda s: s["bulk"]["cpu_over_raw"]
    ),
    "repeat_again_over_first": Figure(
        "repeat: again / first pass (cache)", "lower", lambda s: s["bulk"]["again_over_first"]
    ),
    "sync_over_apy": Figure(
        "sync: dragoman / APY seg/s", "higher", lambda s: s["sync"]["ratio_median_of_rounds"]
    ),
    "sync_no_cache_over_apy": Figure(
        "sync: cache off / APY seg/s",
        "higher",
        lambda s: s["sync"]["ratio_median_of_rounds_no_cache"],
    ),
    "sync_no_cache_cpu_over_apy": Figure(
        "sync: cache off, CPU/request / APY's (with engines)",
        "lower",
        lambda s: sync_cpu_over_apy(s["sync"]),
    ),
    **{
        f"request_{name}_over_reference": Figure(
            f"service CPU / reference: {label}",
            "lower",
            lambda s, name=name: s["requests"]["types"][name]["over_reference"],
        )
        for name, label in request_costs.LABELS.items()
    },
    "scale_cpu_over_reference": Figure(
        "scale: server CPU per job / reference",
        "lower",
        lambda s: divided(scale_cpu_ms_per_job(s["scale"]), reference_ms(s)),
    ),
    # Shown beside, not compared: milliseconds and jobs/s of this machine.
    "sync_no_cache_cpu_ms": Figure(
        "ms: sync, cache off, CPU/request (with engines)",
        "lower",
        lambda s: s["sync"]["dragoman_no_cache"]["cpu_ms_per_request"],
        compared=False,
    ),
    "reference_cpu_ms": Figure(
        "ms: reference (bare FastAPI + aiosqlite read)",
        "lower",
        lambda s: reference_ms(s),
        compared=False,
    ),
    **{
        f"request_{name}_cpu_ms": Figure(
            f"ms: service CPU, {label}",
            "lower",
            lambda s, name=name: s["requests"]["types"][name]["service_cpu_ms"],
            compared=False,
        )
        for name, label in request_costs.LABELS.items()
    },
    "scale_jobs_per_s": Figure(
        "jobs/s: scale, accepted",
        "higher",
        lambda s: s["scale"]["submission"]["accepted_jobs_per_s"],
        compared=False,
    ),
    "scale_cpu_ms_per_job": Figure(
        "ms: scale, server CPU per job",
        "lower",
        lambda s: scale_cpu_ms_per_job(s["scale"]),
        compared=False,
    ),
}


def reference_ms(sections: dict[str, Any]) -> float | None:
    found = sections["requests"].get("reference", {}).get("service_cpu_ms")
    return float(found) if found else None


def sync_cpu_over_apy(found: dict[str, Any]) -> float | None:
    return divided(
        found["dragoman_no_cache"].get("cpu_ms_per_request"),
        found.get("apy", {}).get("cpu_ms_per_request"),
    )


def divided(value: float | None, by: float | None) -> float | None:
    return round(value / by, 2) if value is not None and by else None


def scale_cpu_ms_per_job(found: dict[str, Any]) -> float | None:
    accepted = found["submission"]["accepted"]
    server_s = found["cpu_during_submission_s"]["server"]
    return round(1000 * server_s / accepted, 3) if accepted else None


def figures(sections: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        key: {
            "label": figure.label,
            "better": figure.better,
            "compared": figure.compared,
            "value": figure.get(sections),
        }
        for key, figure in FIGURES.items()
    }


# ---------------------------------------------------------------- comparison


def change(baseline: float | None, latest: float | None) -> float | None:
    """``latest`` over ``baseline``, less one: +0.10 is 10 % higher."""
    if baseline is None or latest is None or baseline == 0:
        return None
    return latest / baseline - 1


def got_worse(better: str, moved: float | None) -> bool:
    if moved is None:
        return False
    return moved > WORSE_THRESHOLD if better == "lower" else moved < -WORSE_THRESHOLD


def comparison(latest: dict[str, Any], baseline: dict[str, Any] | None) -> str:
    """A table of every figure: baseline, latest, change, and a flag where it got worse."""
    known = (baseline or {}).get("figures", {})
    lines = [f"{'figure':<64} {'better':>6} {'baseline':>9} {'latest':>9} {'change':>8}"]
    worse = []
    for key, found in latest["figures"].items():
        before = known.get(key, {}).get("value")
        moved = change(before, found["value"])
        flag = found.get("compared", True) and got_worse(found["better"], moved)
        worse += [found["label"]] if flag else []
        lines.append(
            f"{found['label']:<64} {found['better']:>6} {show(before):>9} "
            f"{show(found['value']):>9} {show_change(moved):>8}{'  << worse' if flag else ''}"
        )
    if baseline is None:
        lines.append(f"no baseline at {RESULTS_DIR / (BASELINE + '.json')}: nothing to compare")
    else:
        lines.append(
            f"baseline measured {baseline.get('measured_at')}; this run took {latest['wall_s']} s"
        )
        lines.append(
            f"worse by more than {WORSE_THRESHOLD:.0%}: {', '.join(worse) if worse else 'none'}"
        )
    lines.append(f"problems besides timings: {'; '.join(latest['problems']) or 'none'}")
    lines.append(
        f"machine: load {latest['load_1m']['start']} at start, {latest['load_1m']['end']} at "
        f"end; {latest['busy_cores']} cores busy on average; timings never fail this"
    )
    return "\n".join(lines)


def show(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def show_change(moved: float | None) -> str:
    return "-" if moved is None else f"{moved:+.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=BULK_ROUNDS, help="bulk rounds (median)")
    parser.add_argument(
        "--save-baseline", action="store_true", help="also write this run as the baseline"
    )
    args = parser.parse_args()
    latest = measure_all(args.rounds)
    path = write_result(NAME, latest)
    baseline_path = RESULTS_DIR / f"{BASELINE}.json"
    baseline = json.loads(baseline_path.read_text("utf-8")) if baseline_path.is_file() else None
    print(comparison(latest, baseline))
    print(f"written to {path}")
    if args.save_baseline:
        shutil.copyfile(path, baseline_path)
        print(f"and to {baseline_path}")


if __name__ == "__main__":
    main()
