"""100 small documents as 100 jobs, and as one job: dragoman end to end vs the raw engine vs
the old design, on two corpora in one run (``workload.py``): long licence sentences and short
lines of about a dozen words.

``--mode embedded`` measures one ``dragoman serve``; ``--mode distributed`` one ``dragoman
api``, one ``dragoman watchdog`` and ``--workers`` ``dragoman worker --pool cpu`` processes
over PostgreSQL and RabbitMQ; ``--mode both`` measures both in each run and compares them.

Both deployments get the same engine parallelism, ``--workers`` (default 2, the embedded
defaults on a 2-core machine):

- embedded: ``DRAGOMAN_CPU_MAX_WORKERS=N`` in-process workers share one engine with
  ``DRAGOMAN_APERTIUM_PIPELINES_PER_PAIR=N`` warm pipelines;
- distributed: N worker processes, each with its own engine and one pipeline, and
  ``DRAGOMAN_CPU_MAX_WORKERS=N`` for the watchdog's dispatch capacity.

Each measurement gets a fresh deployment, warmed up by one small job of other text, so that
no measurement finds the text of another one stored. The baselines, per corpus: ``apertium
eng-spa`` once over the concatenation of every segment (raw), a fresh ``apertium`` per
document (the old design), and dragoman's Apertium engine alone in this process, every
segment in one call (what the service adds to the engine is e2e minus that). Parity: every
segment dragoman returns must equal ``apertium eng-spa`` run on that segment alone
(whitespace runs aside).
"""

from __future__ import annotations

import argparse
import os
import statistics
from typing import Any

from common import distributed_deployment, dragoman_server, ratio, report, timed
from workload import (
    CLIENT_THREADS,
    POLL_INTERVAL_S,
    WORKLOADS,
    Translated,
    Workload,
    concat_parity,
    parity,
    references,
    run_engine,
    run_jobs,
    run_old_design,
    run_raw,
    warm_up,
)

NAMES = {"embedded": "bulk", "distributed": "bulk_distributed", "both": "bulk_compare"}
DEPLOYMENTS = ("embedded", "distributed")
SHAPES = ("hundred_jobs", "one_job")
WORKERS = 2
DISTRIBUTED_OVER_EMBEDDED_TARGET_MAX = 1.25
# e2e/raw targets by corpus and shape (issue 14 for the short corpus; goal 1.2 for 100 jobs).
TARGETS = {
    "licence": {"hundred_jobs": 2.0},
    "short": {"hundred_jobs": 1.5, "one_job": 1.3},
}


def deployment_settings(deployment: str, workers: int) -> dict[str, str]:
    """The ``DRAGOMAN_*`` settings that give ``deployment`` ``workers`` busy pipelines."""
    per_worker = workers if deployment == "embedded" else 1
    return {
        "DRAGOMAN_CPU_MAX_WORKERS": str(workers),
        "DRAGOMAN_APERTIUM_PIPELINES_PER_PAIR": str(per_worker),
    }


def run_deployment(
    deployment: str, workload: Workload, workers: int, *, one_job: bool
) -> tuple[Translated, dict[str, Any]]:
    """Starts ``deployment``, warms it up, runs the workload through it, stops it."""
    settings = deployment_settings(deployment, workers)
    if deployment == "embedded":
        with dragoman_server(settings) as server:
            warm_up(server.url)
            translated, e2e = run_jobs(
                server.url, workload.documents, one_job=one_job, pids=[server.pid]
            )
        return translated, {**e2e, "processes": {"serve": server.info}}
    with distributed_deployment(workers, settings) as cluster:
        warm_up(cluster.url)
        translated, e2e = run_jobs(
            cluster.url, workload.documents, one_job=one_job, pids=cluster.pids
        )
    return translated, {**e2e, "processes": cluster.info()}


# ---------------------------------------------------------------- runs


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
        "--corpus",
        choices=[*WORKLOADS, "both"],
        default="both",
        help="workload to measure (default: both corpora in one run)",
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


class Runs:
    """Every run's figures and translations, by workload, deployment and shape."""

    def __init__(self, workloads: list[Workload], deployments: list[str], workers: int) -> None:
        self.workloads = workloads
        self.deployments = deployments
        self.workers = workers
        self.records: list[dict[str, Any]] = []
        self.translated: dict[tuple[str, str, str], Translated] = {}
        self.raw_lines: dict[str, list[str]] = {}

    def run(self, index: int) -> None:
        # Alternating which deployment goes first evens out a machine that drifts.
        order = self.deployments if index % 2 == 0 else self.deployments[::-1]
        # Other work on the machine shows up in every figure; the load says how much.
        record: dict[str, Any] = {"order": order, "load_1m_at_start": os.getloadavg()[0]}
        for workload in self.workloads:
            record[workload.name] = figures = {}
            for name in order:
                figures[name] = {}
                for shape in SHAPES:
                    out, figures[name][shape] = run_deployment(
                        name, workload, self.workers, one_job=shape == "one_job"
                    )
                    self.translated.setdefault((workload.name, name, shape), []).extend(out)
            self.raw_lines[workload.name], raw_s, raw_cpu_s = run_raw(workload.documents)
            figures["raw_engine_s"] = round(raw_s, 3)
            figures["raw_engine_cpu_s"] = round(raw_cpu_s, 3)
            figures["engine_alone_s"] = round(run_engine(workload.documents, self.workers), 3)
            figures["engine_alone_over_raw"] = ratio(figures["engine_alone_s"], raw_s)
            figures["old_design_s"] = round(run_old_design(workload.documents), 3)
            for name in order:
                for shape in SHAPES:
                    found = figures[name][shape]
                    found["e2e_over_raw"] = ratio(found["e2e_s"], raw_s)
                    found["cpu_over_raw"] = ratio(found["server_cpu_s"], raw_cpu_s)
            if len(self.deployments) == 2:
                figures["distributed_over_embedded"] = ratio(
                    figures["distributed"]["hundred_jobs"]["e2e_s"],
                    figures["embedded"]["hundred_jobs"]["e2e_s"],
                )
        print(f"run {index + 1}: {self.brief(record)}", flush=True)
        self.records.append(record)

    def brief(self, record: dict[str, Any]) -> str:
        """One run's figures on one line."""
        parts = []
        for workload in self.workloads:
            found = record[workload.name]
            shapes = [
                f"{name} {shape} {found[name][shape]['e2e_s']:.2f}s"
                for name in self.deployments
                for shape in SHAPES
            ]
            parts.append(
                f"{workload.name}: {', '.join(shapes)}, raw {found['raw_engine_s']:.2f}s, "
                f"engine alone {found['engine_alone_s']:.2f}s, old {found['old_design_s']:.2f}s"
            )
        return "; ".join(parts)


def summarize_shape(
    runs: Runs, workload: Workload, name: str, shape: str, reference: dict[str, str]
) -> dict[str, Any]:
    """One deployment and shape over all runs: e2e spread, ratio to raw, parity."""
    per_run = [record[workload.name] for record in runs.records]
    e2e = [found[name][shape]["e2e_s"] for found in per_run]
    raw = statistics.median(found["raw_engine_s"] for found in per_run)
    old = statistics.median(found["old_design_s"] for found in per_run)
    target = TARGETS[workload.name].get(shape)
    over_raw = ratio(statistics.median(e2e), raw)
    translated = runs.translated[(workload.name, name, shape)]
    return {
        "e2e_s": spread(e2e),
        "all_finished_s": spread([found[name][shape]["all_finished_s"] for found in per_run]),
        "submit_s": spread([found[name][shape]["submit_s"] for found in per_run]),
        "e2e_over_raw": over_raw,
        "e2e_over_raw_per_run": [found[name][shape]["e2e_over_raw"] for found in per_run],
        "e2e_over_raw_target_max": target,
        "met": None if target is None or over_raw is None else over_raw <= target,
        "old_over_e2e": ratio(old, statistics.median(e2e)),
        # The deployment's CPU (with its engine processes) over the raw engine's: what the
        # machine's load moves least.
        "server_cpu_s": spread([found[name][shape]["server_cpu_s"] for found in per_run]),
        "cpu_over_raw": ratio(
            statistics.median(found[name][shape]["server_cpu_s"] for found in per_run),
            statistics.median(found["raw_engine_cpu_s"] for found in per_run),
        ),
        "parity": {
            **parity(workload.documents * len(runs.records), translated, reference),
            "target": 1.0,
        },
    }


def summarize_workload(runs: Runs, workload: Workload) -> dict[str, Any]:
    """One workload over all runs: baselines, each deployment's shapes, parity."""
    distinct = {s for doc in workload.documents for s in doc}
    reference, reference_s = timed(lambda: references(distinct))
    per_run = [record[workload.name] for record in runs.records]
    raw = [found["raw_engine_s"] for found in per_run]
    old = [found["old_design_s"] for found in per_run]
    result: dict[str, Any] = {"workload": workload.describe()}
    for name in runs.deployments:
        result[name] = {
            "settings": deployment_settings(name, runs.workers),
            **{shape: summarize_shape(runs, workload, name, shape, reference) for shape in SHAPES},
        }
    if len(runs.deployments) == 2:
        per = [found["distributed_over_embedded"] for found in per_run]
        result["distributed_over_embedded"] = {
            **spread(per),
            "target_max": DISTRIBUTED_OVER_EMBEDDED_TARGET_MAX,
            "met_by_median": statistics.median(per) <= DISTRIBUTED_OVER_EMBEDDED_TARGET_MAX,
        }
    return result | {
        "raw_engine_s": spread(raw),
        "raw_engine_cpu_s": spread([found["raw_engine_cpu_s"] for found in per_run]),
        # dragoman's engine in process over every segment in one call, without the service.
        "engine_alone_s": spread([found["engine_alone_s"] for found in per_run]),
        "engine_alone_over_raw": ratio(
            statistics.median(found["engine_alone_s"] for found in per_run), statistics.median(raw)
        ),
        "old_design_s": spread(old),
        # The old_over_e2e of a service as fast as one engine process over the whole corpus.
        "old_over_raw": ratio(statistics.median(old), statistics.median(raw)),
        "raw_concat_parity": concat_parity(
            workload.documents, runs.raw_lines[workload.name], reference
        ),
        "reference": {"distinct_segments": len(reference), "seconds": round(reference_s, 3)},
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Runs every measurement and returns the result document."""
    deployments = list(DEPLOYMENTS) if args.mode == "both" else [args.mode]
    names = list(WORKLOADS) if args.corpus == "both" else [args.corpus]
    runs = Runs([WORKLOADS[name]() for name in names], deployments, args.workers)
    for index in range(args.runs):
        runs.run(index)
    return {
        "mode": args.mode,
        "parameters": {
            "runs": args.runs,
            "workers": args.workers,
            "client_threads": CLIENT_THREADS,
            "poll_interval_s": POLL_INTERVAL_S,
        },
        "corpora": {w.name: summarize_workload(runs, w) for w in runs.workloads},
        "runs": runs.records,
    }


def summarize(result: dict[str, Any]) -> str:
    lines = []
    for name, found in result["corpora"].items():
        work = found["workload"]
        lines.append(
            f"{name}: {work['documents']} docs / {work['segments']} segments "
            f"({work['words_per_segment']} words each): raw {span(found['raw_engine_s'])}, "
            f"engine alone {span(found['engine_alone_s'])} "
            f"({found['engine_alone_over_raw']} of raw), "
            f"old {span(found['old_design_s'])}"
        )
        for deployment in DEPLOYMENTS:
            for shape in SHAPES if deployment in found else ():
                got = found[deployment][shape]
                target = got["e2e_over_raw_target_max"]
                goal = (
                    f" (target ≤ {target}: {'met' if got['met'] else 'NOT met'})" if target else ""
                )
                par = got["parity"]
                lines.append(
                    f"  {deployment} {shape}: e2e {span(got['e2e_s'])}, "
                    f"e2e/raw {got['e2e_over_raw']}{goal}, CPU/raw CPU {got['cpu_over_raw']}, "
                    f"parity {par['fraction']} ({par['mismatches']} mismatches)"
                )
        if "distributed_over_embedded" in found:
            cmp = found["distributed_over_embedded"]
            lines.append(f"  distributed/embedded: {cmp['median']} ({cmp['min']}-{cmp['max']})")
    return "\n".join(lines)


def span(figures: dict[str, float]) -> str:
    """``median s (min-max)``."""
    return f"{figures['median']:.2f}s ({figures['min']:.2f}-{figures['max']:.2f})"


def main() -> None:
    args = parse_args()
    report(NAMES[args.mode], measure(args), summarize)


if __name__ == "__main__":
    main()
