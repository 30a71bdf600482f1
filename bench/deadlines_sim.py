"""Deadlines in the scaling simulation: earliest deadline first within each tenant's turn,
against first in, first out, at the same worker cost; and how honest the ETAs are.

``autoscale_sim``'s model of one CPU pool (its traces, start-ups, pair loads, dispatcher
and scalers), with dragoman's own ``BatchRequestsQueue`` as the queue:

- each job belongs to one of three tenants (50, 30, 20 %) and ``DEADLINE_SHARE`` of the jobs
  carry a deadline: arrival + the job's duration times a factor drawn log-uniform from
  ``SLACK_FACTOR`` (a small job is due soon, a big one later), at least ``MIN_SLACK_S``;
- orders: ``fifo``, the queue as it was (tenants in turn, then the oldest first: the queue
  is given no deadline); ``edf``, the queue as it is (tenants in turn, then the earliest
  deadline, then the oldest); ``edf, one tenant``, every job one tenant's (the earliest
  deadline across tenants: what fairness gives up, for comparison);
- policies: the embedded service's scaler with the defaults (nudged at each dispatch), and
  a fixed pool of ``max_workers``: the same policy for every order;
- figures, per trace and order, pooled over the replays: the jobs with a deadline, those
  that missed it (count and share), p95 and the largest lateness (0 for a job on time), the
  p95 wait of the jobs without a deadline (what the order costs them), worker-seconds;
- ETAs (``edf``, both policies): each job has a size in segments, its duration times
  ``SEGMENTS_PER_S`` times a factor from ``SIZE_NOISE`` (segments are not all alike); a
  running job commits them ``CHUNK_SEGMENTS`` at a time, as workers do. Every sweep
  (``SWEEP_S``) the forecast runs as the watchdog's does: the pool's speed from the
  committed segments over the busy workers' seconds (``watchdog.eta.Speed``), every
  waiting and running job's end (``watchdog.eta.finish_in``: the messages in flight, then
  the queue in order, on ``max_workers`` slots). Figures: the error of the ETA forecast at
  each job's arrival against its actual end; and ``at_risk`` as the webhook sees it: the
  jobs flagged at some sweep before they ended, against those that missed their deadline
  (precision, recall), and how long before its deadline a job that missed it was flagged.
"""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from autoscale_sim import HORIZON_S, PAIR_LOAD_S, T0, Job, PoolSim, Variant, build_jobs, variants
from common import SEED, percentile, ratio, report
from rich.console import Console
from rich.table import Table

from dragoman.models import Pool, Priority
from dragoman.queue import BatchRequestsQueue, Waiting
from dragoman.scaling.policy import PoolPolicy
from dragoman.settings import Settings
from dragoman.watchdog.eta import Speed, Work, finish_in

NAME = "deadlines_sim"
TRACES = ("steady", "bursts", "diurnal")
TENANTS = {"a": 0.5, "b": 0.3, "c": 0.2}
DEADLINE_SHARE = 0.5
SLACK_FACTOR = (2.0, 40.0)  # log-uniform, times the job's duration
MIN_SLACK_S = 15.0
SEGMENTS_PER_S = 500.0  # one worker's speed (Apertium on one core), for the jobs' sizes
SIZE_NOISE = (0.75, 1.25)  # uniform: a job's segments for its duration
CHUNK_SEGMENTS = 1024  # committed at a time (DRAGOMAN_CHUNK_SEGMENTS)
SWEEP_S = 1.0  # the watchdog's sweep, when the forecast runs
ORDERS = ("fifo", "edf", "edf, one tenant")
POLICIES = {"autoscaled": "in_flight+standby, nudged", "fixed": "fixed"}


@dataclass(frozen=True)
class Due(Job):
    key: str = ""
    tenant: str = "a"
    deadline_s: float | None = None
    segments: int = 0


def with_deadlines(jobs: list[Job], trace: str, seed: int) -> list[Due]:
    """The trace's jobs, each given a tenant, a size, and half of them a deadline."""
    rng = random.Random(f"{seed}:{trace}:deadlines")
    tenants, weights = list(TENANTS), list(TENANTS.values())
    out = []
    for n, job in enumerate(jobs):
        tenant = rng.choices(tenants, weights)[0]
        segments = round(job.duration_s * SEGMENTS_PER_S * rng.uniform(*SIZE_NOISE))
        deadline = None
        if rng.random() < DEADLINE_SHARE:
            factor = math.exp(rng.uniform(*map(math.log, SLACK_FACTOR)))
            deadline = job.arrival_s + max(MIN_SLACK_S, job.duration_s * factor)
        out.append(
            Due(**vars(job), key=f"j{n}", tenant=tenant, deadline_s=deadline, segments=segments)
        )
    return out


class Queue:
    """dragoman's queue under the simulation's ``append``/``popleft``/``len``."""

    def __init__(self, order: str) -> None:
        self.order = order
        self._queue = BatchRequestsQueue()
        self._jobs: dict[str, Due] = {}

    def append(self, job: Due) -> None:
        due = job.deadline_s is not None and self.order != "fifo"
        deadline = T0 + timedelta(seconds=job.deadline_s) if due else None  # type: ignore[arg-type]
        tenant = "all" if self.order == "edf, one tenant" else job.tenant
        self._jobs[job.key] = job
        item = Waiting(job.key, Pool.CPU, Priority.NORMAL, tenant, segments=job.segments)
        self._queue.push(replace(item, deadline=deadline))

    def popleft(self) -> Due:
        item = self._queue.pop(Pool.CPU)
        assert item is not None
        return self._jobs.pop(item.job_id)

    def ordered(self) -> list[Due]:
        return [self._jobs[item.job_id] for item in self._queue.ordered(Pool.CPU)]

    def __len__(self) -> int:
        return len(self._jobs)


class DeadlineSim(PoolSim):
    """``PoolSim`` over dragoman's queue, recording each job's end; with ``forecast``, the
    watchdog's forecast at every sweep."""

    def __init__(self, variant: Variant, seed: int, order: str, *, forecast: bool) -> None:
        super().__init__(variant, seed)
        self.queue = Queue(order)  # type: ignore[assignment]
        self.ends: dict[str, float] = {}
        self.forecast = forecast
        self.speed = Speed()
        self.translated = 0  # the segments of the jobs that ended
        self.began: dict[str, tuple[float, float]] = {}  # job → (start, work seconds)
        self.predicted: dict[str, float | None] = {}  # job → its end forecast at arrival
        self.flagged: dict[str, float] = {}  # job → when it was first found at risk

    def run(self, jobs: list[Job]) -> DeadlineSim:
        if self.forecast:
            self._at(0.0, "sweep", None)
        super().run(jobs)
        return self

    def _on_sweep(self, _payload: None) -> None:
        self.speed.sample(self.now, {"pool": self._committed()}, self.running)
        self._at(self.now + SWEEP_S, "sweep", None)
        waiting = self.queue.ordered()
        jobs = [*self._in_flight(), *waiting]
        if not any(job.deadline_s is not None for job in jobs):
            return
        ends = self._ends(waiting)
        for job in jobs:
            end = ends.get(job.key)
            due = job.deadline_s
            late = due is not None and (self.now > due or (end is not None and end > due))
            if late and job.key not in self.flagged:
                self.flagged[job.key] = self.now

    def _on_arrive(self, job: Due) -> None:  # type: ignore[override]
        super()._on_arrive(job)
        if self.forecast:
            self.predicted[job.key] = self._ends(self.queue.ordered()).get(job.key)

    def _on_finish(self, worker: Any) -> None:
        job = worker.job
        self.ends[job.key] = self.now
        self.translated += job.segments
        super()._on_finish(worker)

    def _dispatch(self) -> None:
        super()._dispatch()
        for worker in self.workers.values():
            job = worker.job
            if job is not None and job.key not in self.began:
                work = job.duration_s + (0.0 if job.pair in worker.warm else PAIR_LOAD_S)
                self.began[job.key] = (self.now, work)

    def _in_flight(self) -> list[Due]:
        return [w.job for w in self.workers.values() if w.job] + list(self.broker)

    def _ends(self, waiting: list[Due]) -> dict[str, float]:
        """When each job in flight or ``waiting`` (in order) should end, as the forecast
        says now; none before a speed was measured."""
        rate = self.speed.rate
        if not rate:
            return {}
        running = [[Work(job.key, self._left(job))] for job in self._in_flight()]
        queued = [Work(job.key, job.segments) for job in waiting]
        ends = finish_in(running, queued, slots=self.policy.max_workers, rate=rate)
        return {key: self.now + end for key, end in ends.items()}

    def _left(self, job: Due) -> int:
        """Segments a job in flight has left to commit (the store's ``segments_done``)."""
        if job.key not in self.began:
            return job.segments  # submitted, not started
        start, work = self.began[job.key]
        done = job.segments * min(1.0, max(0.0, (self.now - start) / work))
        return job.segments - int(done // CHUNK_SEGMENTS) * CHUNK_SEGMENTS

    def _committed(self) -> int:
        """The pool's workers' counter: whole jobs, and the chunks of running ones."""
        running = [w.job for w in self.workers.values() if w.job]
        return self.translated + sum(job.segments - self._left(job) for job in running)


# ---------------------------------------------------------------- figures


def lateness(jobs: list[Due], ends: dict[str, float]) -> list[float]:
    return [max(0.0, ends[j.key] - j.deadline_s) for j in jobs if j.deadline_s is not None]


def replay(variant: Variant, trace: str, order: str, seeds: int) -> dict[str, Any]:
    late: list[float] = []
    waits: list[float] = []
    worker_seconds = 0.0
    for seed in range(SEED, SEED + seeds):
        jobs = with_deadlines(build_jobs(trace, seed), trace, seed)
        sim = DeadlineSim(variant, seed, order, forecast=False).run(jobs)  # type: ignore[arg-type]
        late += lateness(jobs, sim.ends)
        waits += [sim.began[j.key][0] - j.arrival_s for j in jobs if j.deadline_s is None]
        worker_seconds += sim.worker_seconds
    missed = sum(1 for value in late if value > 0)
    return {
        "jobs_with_deadline": len(late),
        "missed": missed,
        "missed_share": round(missed / len(late), 4),
        "lateness_s": {"p95": round(percentile(late, 95), 1), "max": round(max(late), 1)},
        "no_deadline_wait_s": {
            "mean": round(sum(waits) / len(waits), 2),
            "p95": round(percentile(waits, 95), 2),
        },
        "worker_seconds": round(worker_seconds / seeds),
    }


def eta_check(variant: Variant, trace: str, seeds: int) -> dict[str, Any]:
    """The forecasts (``edf``) against what happened."""
    errors: list[float] = []
    lead: list[float] = []
    flagged = missed = both = unknown = 0
    for seed in range(SEED, SEED + seeds):
        jobs = with_deadlines(build_jobs(trace, seed), trace, seed)
        sim = DeadlineSim(variant, seed, "edf", forecast=True).run(jobs)  # type: ignore[arg-type]
        for job in jobs:
            predicted, actual = sim.predicted[job.key], sim.ends[job.key]
            if predicted is None:
                unknown += 1
            else:
                errors.append(predicted - actual)
            if job.deadline_s is None:
                continue
            at_risk, late = job.key in sim.flagged, actual > job.deadline_s
            flagged, missed, both = flagged + at_risk, missed + late, both + (at_risk and late)
            if at_risk and late:
                lead.append(job.deadline_s - sim.flagged[job.key])
    absolute = [abs(error) for error in errors]
    return {
        "forecasts_at_arrival": len(errors),
        "before_any_speed": unknown,
        "error_s": {
            "median_signed": round(percentile(errors, 50), 2),
            "abs_p50": round(percentile(absolute, 50), 2),
            "abs_p90": round(percentile(absolute, 90), 2),
        },
        "at_risk": {
            "flagged": flagged,
            "missed": missed,
            "precision": ratio(both, flagged),
            "recall": ratio(both, missed),
            "lead_s_median": round(percentile(lead, 50), 1) if lead else None,
        },
    }


def measure(seeds: int, eta_seeds: int, max_workers: int) -> dict[str, Any]:
    pools = variants(PoolPolicy.from_settings(Settings(cpu_max_workers=max_workers), Pool.CPU))
    results: dict[str, Any] = {}
    for policy, name in POLICIES.items():
        for trace in TRACES:
            per_order = {order: replay(pools[name], trace, order, seeds) for order in ORDERS}
            fifo = per_order["fifo"]
            for figures in per_order.values():
                figures["missed_vs_fifo"] = ratio(figures["missed"], fifo["missed"])
                figures["worker_seconds_vs_fifo"] = ratio(
                    figures["worker_seconds"], fifo["worker_seconds"]
                )
            results.setdefault(policy, {})[trace] = per_order
    return {
        "parameters": {
            "horizon_s": HORIZON_S,
            "seeds": list(range(SEED, SEED + seeds)),
            "eta_seeds": list(range(SEED, SEED + eta_seeds)),
            "max_workers": max_workers,
            "tenants": TENANTS,
            "deadline_share": DEADLINE_SHARE,
            "slack_factor_log_uniform": list(SLACK_FACTOR),
            "min_slack_s": MIN_SLACK_S,
            "segments_per_s": SEGMENTS_PER_S,
            "size_noise_uniform": list(SIZE_NOISE),
            "chunk_segments": CHUNK_SEGMENTS,
            "sweep_s": SWEEP_S,
            "policies": POLICIES,
        },
        "results": results,
        "eta": {
            policy: {trace: eta_check(pools[name], trace, eta_seeds) for trace in TRACES}
            for policy, name in POLICIES.items()
        },
    }


def summarize(result: dict[str, Any]) -> str:
    table = Table(title="Deadlines, simulated: pooled over the replays; worker-s per replay")
    for column in ("policy", "trace", "order"):
        table.add_column(column)
    for column in (
        "due",
        "missed",
        "%",
        "vs fifo",
        "p95 late s",
        "p95 wait, no deadline",
        "worker-s",
    ):
        table.add_column(column, justify="right")
    for policy, traces in result["results"].items():
        for trace, per_order in traces.items():
            for order, f in per_order.items():
                table.add_row(
                    policy,
                    trace,
                    order,
                    str(f["jobs_with_deadline"]),
                    str(f["missed"]),
                    f"{100 * f['missed_share']:.1f}",
                    str(f["missed_vs_fifo"]),
                    f"{f['lateness_s']['p95']:.1f}",
                    f"{f['no_deadline_wait_s']['p95']:.1f}",
                    f"{f['worker_seconds']:,}",
                )
    etas = Table(title="Forecasts (edf): ETA at arrival vs the actual end; at_risk vs missed")
    for column in ("policy", "trace", "ETA error s: median / |p50| / |p90|"):
        etas.add_column(column)
    for column in ("flagged", "missed", "precision", "recall", "lead s"):
        etas.add_column(column, justify="right")
    for policy, traces in result["eta"].items():
        for trace, e in traces.items():
            error, risk = e["error_s"], e["at_risk"]
            etas.add_row(
                policy,
                trace,
                f"{error['median_signed']} / {error['abs_p50']} / {error['abs_p90']}",
                str(risk["flagged"]),
                str(risk["missed"]),
                str(risk["precision"]),
                str(risk["recall"]),
                str(risk["lead_s_median"]),
            )
    console = Console(width=140)
    with console.capture() as capture:
        console.print(table)
        console.print(etas)
    return capture.get()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="replays of each trace")
    parser.add_argument("--eta-seeds", type=int, default=5, help="replays with forecasts")
    parser.add_argument("--max-workers", type=int, default=8)
    args = parser.parse_args()
    report(NAME, measure(args.seeds, args.eta_seeds, args.max_workers), summarize)


if __name__ == "__main__":
    main()
