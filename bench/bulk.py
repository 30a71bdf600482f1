"""100 small documents as 100 jobs: dragoman end to end vs the raw engine vs the old design.

``--mode embedded`` measures one ``dragoman serve``; ``--mode distributed`` one ``dragoman
api``, one ``dragoman watchdog`` and ``--workers`` ``dragoman worker --pool cpu`` processes
over PostgreSQL and RabbitMQ; ``--mode both`` measures both in each run and compares them.

Both deployments get the same engine parallelism, ``--workers`` (default 2, the embedded
defaults on a 2-core machine). Every job here (at most 40 segments, under one chunk) is one
engine call, and a worker holds one job at a time, so:

- embedded: ``DRAGOMAN_CPU_MAX_WORKERS=N`` in-process workers share one engine with
  ``DRAGOMAN_APERTIUM_PIPELINES_PER_PAIR=N`` warm pipelines: N pipelines busy at once;
- distributed: N worker processes, each with its own engine and one pipeline (a second one
  would never be used), and ``DRAGOMAN_CPU_MAX_WORKERS=N`` for the watchdog's dispatch
  capacity: N pipelines busy at once.

Also checks parity: every segment dragoman returns must equal ``apertium eng-spa`` run on that
segment alone (whitespace runs aside).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from common import (
    SEED,
    Stopwatch,
    distributed_deployment,
    dragoman_server,
    error_text,
    load_corpus,
    normalize,
    ratio,
    report,
    run_apertium,
    timed,
)

NAMES = {"embedded": "bulk", "distributed": "bulk_distributed", "both": "bulk_compare"}
DEPLOYMENTS = ("embedded", "distributed")
WORKERS = 2
DISTRIBUTED_OVER_EMBEDDED_TARGET_MAX = 1.25
DOCUMENTS = 100
MIN_SEGMENTS, MAX_SEGMENTS = 5, 40
CLIENT_THREADS = 8
PARITY_THREADS = 2
POLL_INTERVAL_S = 0.25  # a client polling its batch; faster polls only load the server
E2E_TIMEOUT_S = 120.0
FINISHED = {"succeeded", "failed", "cancelled"}
MAX_EXAMPLES = 5

Documents = list[list[str]]


def build_documents(corpus: list[str], seed: int = SEED) -> Documents:
    """``DOCUMENTS`` documents of 5-40 corpus lines, drawn with replacement."""
    rng = random.Random(seed)
    return [
        [rng.choice(corpus) for _ in range(rng.randint(MIN_SEGMENTS, MAX_SEGMENTS))]
        for _ in range(DOCUMENTS)
    ]


# ---------------------------------------------------------------- dragoman end to end


def submit(client: httpx.Client, index: int, segments: list[str]) -> str:
    """Submits one document as one en→es job; returns its id."""
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [{"name": f"doc-{index:03d}.txt", "segments": segments}],
    }
    response = client.post("/v1/jobs", json=body)
    if response.status_code != 202:
        reason = error_text(response.status_code, response.content)
        raise RuntimeError(f"job {index} refused: {reason}")
    job_id: str = response.json()["id"]
    return job_id


def statuses(client: httpx.Client) -> dict[str, str]:
    """Every job's status on the (fresh) server, by id, following pagination."""
    found: dict[str, str] = {}
    params: dict[str, Any] = {"limit": 1000}
    while True:
        response = client.get("/v1/jobs", params=params)
        response.raise_for_status()
        page = response.json()
        found.update({job["id"]: job["status"] for job in page["jobs"]})
        if not page["next_cursor"]:
            return found
        params["cursor"] = page["next_cursor"]


def wait_finished(client: httpx.Client, ids: list[str]) -> dict[str, str]:
    """Polls until every job in ``ids`` has finished; returns their final statuses."""
    deadline = time.monotonic() + E2E_TIMEOUT_S
    while True:
        current = statuses(client)
        mine = {job_id: current.get(job_id, "missing") for job_id in ids}
        if all(status in FINISHED for status in mine.values()):
            return mine
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"jobs unfinished after {E2E_TIMEOUT_S:.0f}s: {Counter(mine.values())}"
            )
        time.sleep(POLL_INTERVAL_S)


def fetch_result(client: httpx.Client, job_id: str) -> list[str | None]:
    """The translated segments of a one-document job."""
    response = client.get(f"/v1/jobs/{job_id}/result")
    response.raise_for_status()
    segments: list[str | None] = response.json()["documents"][0]["segments"]
    return segments


def run_e2e(url: str, documents: Documents) -> tuple[list[list[str | None]], dict[str, Any]]:
    """Submit all jobs concurrently, wait for all, fetch all: results and timings."""
    limits = httpx.Limits(max_connections=CLIENT_THREADS, max_keepalive_connections=CLIENT_THREADS)
    with (
        httpx.Client(base_url=url, timeout=60.0, limits=limits) as client,
        ThreadPoolExecutor(CLIENT_THREADS) as pool,
        Stopwatch() as total,
    ):
        ids = list(pool.map(lambda item: submit(client, *item), enumerate(documents)))
        submitted_s = time.perf_counter() - total.started
        final = wait_finished(client, ids)
        finished_s = time.perf_counter() - total.started
        results = list(pool.map(lambda job_id: fetch_result(client, job_id), ids))
    timings = {
        "submit_s": round(submitted_s, 3),
        "all_finished_s": round(finished_s, 3),
        "e2e_s": round(total.elapsed, 3),
        "job_statuses": dict(Counter(final.values())),
    }
    return results, timings


# ---------------------------------------------------------------- baselines


def run_raw(documents: Documents) -> tuple[list[str], float]:
    """One ``apertium`` process over every segment, newline-joined: output lines and time."""
    text = "\n".join(segment for doc in documents for segment in doc) + "\n"
    output, seconds = timed(lambda: run_apertium(text))
    return output.splitlines(), seconds


def run_old_design(documents: Documents) -> float:
    """A fresh ``apertium`` process per document, one after another: total time."""
    with Stopwatch() as watch:
        for doc in documents:
            run_apertium("\n".join(doc) + "\n")
    return watch.elapsed


def references(segments: set[str]) -> dict[str, str]:
    """Each distinct segment translated alone by a fresh ``apertium`` process, normalized."""
    ordered = sorted(segments)
    with ThreadPoolExecutor(PARITY_THREADS) as pool:
        outputs = pool.map(run_apertium, ordered)
        return {segment: normalize(out) for segment, out in zip(ordered, outputs, strict=True)}


# ---------------------------------------------------------------- comparison


def parity(
    documents: Documents, translated: list[list[str | None]], reference: dict[str, str]
) -> dict[str, Any]:
    """How many of dragoman's translations equal the per-segment reference."""
    total = matches = 0
    examples: list[dict[str, str | None]] = []
    for doc, out in zip(documents, translated, strict=True):
        padded = out + [None] * (len(doc) - len(out))
        for source, got in zip(doc, padded, strict=False):
            total += 1
            expected = reference[source]
            if got is not None and normalize(got) == expected:
                matches += 1
            elif len(examples) < MAX_EXAMPLES:
                examples.append({"source": source, "dragoman": got, "apertium_alone": expected})
    return {
        "segments": total,
        "matches": matches,
        "mismatches": total - matches,
        "fraction": round(matches / total, 4) if total else None,
        "examples": examples,
    }


def concat_parity(documents: Documents, raw_lines: list[str], reference: dict[str, str]) -> Any:
    """Share of segments the plain concatenated run translates as if alone (context leaks)."""
    sources = [segment for doc in documents for segment in doc]
    if len(raw_lines) != len(sources):
        return {"comparable": False, "lines_in": len(sources), "lines_out": len(raw_lines)}
    same = sum(
        normalize(out) == reference[src] for src, out in zip(sources, raw_lines, strict=True)
    )
    return {"comparable": True, "fraction": round(same / len(sources), 4)}


# ---------------------------------------------------------------- deployments


def deployment_settings(deployment: str, workers: int) -> dict[str, str]:
    """The ``DRAGOMAN_*`` settings that give ``deployment`` ``workers`` busy pipelines."""
    per_worker = workers if deployment == "embedded" else 1
    return {
        "DRAGOMAN_CPU_MAX_WORKERS": str(workers),
        "DRAGOMAN_APERTIUM_PIPELINES_PER_PAIR": str(per_worker),
    }


def run_deployment(
    deployment: str, documents: Documents, workers: int
) -> tuple[list[list[str | None]], dict[str, Any]]:
    """Starts ``deployment``, runs the workload through it end to end, stops it."""
    settings = deployment_settings(deployment, workers)
    if deployment == "embedded":
        with dragoman_server(settings) as server:
            translated, e2e = run_e2e(server.url, documents)
        return translated, {**e2e, "processes": {"serve": server.info}}
    with distributed_deployment(workers, settings) as cluster:
        translated, e2e = run_e2e(cluster.url, documents)
    return translated, {**e2e, "processes": cluster.info()}


# ---------------------------------------------------------------- main


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--mode",
        choices=[*DEPLOYMENTS, "both"],
        default="embedded",
        help="deployment to measure; both: each in every run, compared",
    )
    parser.add_argument(
        "--runs", type=int, default=1, help="repetitions, reported as min/median/max"
    )
    parser.add_argument(
        "--workers", type=int, default=WORKERS, help="engine pipelines busy at once"
    )
    args = parser.parse_args()
    if args.runs < 1 or args.workers < 1:
        parser.error("--runs and --workers must be at least 1")
    return args


def spread(values: list[float]) -> dict[str, float]:
    """Min, median and max of per-run figures."""
    return {
        "min": round(min(values), 3),
        "median": round(statistics.median(values), 3),
        "max": round(max(values), 3),
    }


def measure_runs(
    deployments: list[str], documents: Documents, runs: int, workers: int
) -> tuple[list[dict[str, Any]], dict[str, list[list[str | None]]], list[str]]:
    """Every run: each deployment (in alternating order), then the two baselines."""
    records: list[dict[str, Any]] = []
    translated: dict[str, list[list[str | None]]] = {name: [] for name in deployments}
    raw_lines: list[str] = []
    for index in range(runs):
        # Alternating which deployment goes first evens out a machine that drifts.
        order = deployments if index % 2 == 0 else deployments[::-1]
        # Other work on the machine shows up in every figure; the load says how much.
        record: dict[str, Any] = {"order": order, "load_1m_at_start": os.getloadavg()[0]}
        for name in order:
            out, record[name] = run_deployment(name, documents, workers)
            translated[name] += out
        raw_lines, raw_s = run_raw(documents)
        record["raw_engine_s"] = round(raw_s, 3)
        record["old_design_s"] = round(run_old_design(documents), 3)
        if len(deployments) == 2:
            record["distributed_over_embedded"] = ratio(
                record["distributed"]["e2e_s"], record["embedded"]["e2e_s"]
            )
        print(f"run {index + 1}/{runs}: {brief(record, deployments)}", flush=True)
        records.append(record)
    return records, translated, raw_lines


def brief(record: dict[str, Any], deployments: list[str]) -> str:
    """One run's figures on one line."""
    figures = [f"{name} e2e {record[name]['e2e_s']:.2f}s" for name in deployments]
    figures += [f"raw {record['raw_engine_s']:.2f}s", f"old {record['old_design_s']:.2f}s"]
    if "distributed_over_embedded" in record:
        figures.append(f"distributed/embedded {record['distributed_over_embedded']}")
    return ", ".join(figures)


def summarize_deployment(
    name: str, records: list[dict[str, Any]], parity_found: dict[str, Any], workers: int
) -> dict[str, Any]:
    """One deployment over all runs: its settings, e2e spread, ratios to the baselines."""
    e2e = [record[name]["e2e_s"] for record in records]
    raw = statistics.median(record["raw_engine_s"] for record in records)
    old = statistics.median(record["old_design_s"] for record in records)
    return {
        "settings": deployment_settings(name, workers),
        "e2e_s": spread(e2e),
        "all_finished_s": spread([record[name]["all_finished_s"] for record in records]),
        "ratios": {
            "e2e_over_raw": ratio(statistics.median(e2e), raw),
            "e2e_over_raw_target_max": 2.0,
            "old_over_e2e": ratio(old, statistics.median(e2e)),
            "old_over_e2e_target_min": 30.0,
        },
        "parity": {**parity_found, "target": 1.0},
    }


def comparison(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-run distributed/embedded e2e ratios against the target."""
    per_run = [record["distributed_over_embedded"] for record in records]
    median = statistics.median(per_run)
    return {
        **spread(per_run),
        "target_max": DISTRIBUTED_OVER_EMBEDDED_TARGET_MAX,
        "met_by_median": median <= DISTRIBUTED_OVER_EMBEDDED_TARGET_MAX,
        "met_in_every_run": max(per_run) <= DISTRIBUTED_OVER_EMBEDDED_TARGET_MAX,
    }


def measure(mode: str, runs: int, workers: int) -> dict[str, Any]:
    """Runs every measurement and returns the result document."""
    deployments = list(DEPLOYMENTS) if mode == "both" else [mode]
    documents = build_documents(load_corpus())
    records, translated, raw_lines = measure_runs(deployments, documents, runs, workers)
    reference, reference_s = timed(lambda: references({s for doc in documents for s in doc}))
    segments = sum(len(doc) for doc in documents)
    result: dict[str, Any] = {
        "workload": {"documents": len(documents), "segments": segments, "seed": SEED},
        "parameters": {
            "runs": runs,
            "workers": workers,
            "client_threads": CLIENT_THREADS,
            "poll_interval_s": POLL_INTERVAL_S,
        },
    }
    for name in deployments:
        found = parity(documents * runs, translated[name], reference)
        result[name] = summarize_deployment(name, records, found, workers)
    if mode == "both":
        result["distributed_over_embedded"] = comparison(records)
    raw = [record["raw_engine_s"] for record in records]
    old = [record["old_design_s"] for record in records]
    result |= {
        "raw_engine_s": spread(raw),
        "old_design_s": spread(old),
        # The old_over_e2e of a service as fast as one engine process over the whole corpus:
        # about the most any service reaches here (only engines in parallel could beat it).
        "old_over_raw": ratio(statistics.median(old), statistics.median(raw)),
        "raw_concat_parity": concat_parity(documents, raw_lines, reference),
        "reference": {"distinct_segments": len(reference), "seconds": round(reference_s, 3)},
        "runs": records,
    }
    return result


def summarize(result: dict[str, Any]) -> str:
    work, params = result["workload"], result["parameters"]
    lines = [
        f"{work['documents']} docs / {work['segments']} segments, {params['runs']} run(s), "
        f"{params['workers']} workers: raw {span(result['raw_engine_s'])}, "
        f"old {span(result['old_design_s'])} (old/raw {result['old_over_raw']})"
    ]
    for name in DEPLOYMENTS:
        if name in result:
            found, ratios, par = result[name], result[name]["ratios"], result[name]["parity"]
            lines.append(
                f"{name}: e2e {span(found['e2e_s'])}, e2e/raw {ratios['e2e_over_raw']} "
                f"(target ≤ 2), old/e2e {ratios['old_over_e2e']} (target ≥ 30), "
                f"parity {par['fraction']} ({par['mismatches']} mismatches)"
            )
    if "distributed_over_embedded" in result:
        cmp = result["distributed_over_embedded"]
        lines.append(
            f"distributed/embedded: {cmp['median']} (runs {cmp['min']}-{cmp['max']}), "
            f"target ≤ {cmp['target_max']}: {'met' if cmp['met_by_median'] else 'NOT met'}"
        )
    return "\n".join(lines)


def span(figures: dict[str, float]) -> str:
    """``median s (min-max)``."""
    return f"{figures['median']:.2f}s ({figures['min']:.2f}-{figures['max']:.2f})"


def main() -> None:
    args = parse_args()
    result = {"mode": args.mode, **measure(args.mode, args.runs, args.workers)}
    report(NAMES[args.mode], result, summarize)


if __name__ == "__main__":
    main()
