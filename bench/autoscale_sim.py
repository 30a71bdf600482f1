"""Autoscaling policies replayed on bursty arrival traces in simulated time: cost and waits.

The real ``ScalePolicy`` and ``choose_victims`` drive a discrete-event model of one CPU pool:

- jobs arrive into dragoman's queue; the dispatcher submits queued jobs while the pool's jobs
  in flight (submitted or running) are fewer than ``max_workers``; a submitted job waits in the
  broker until a ready worker is free, and a worker takes one job at a time;
- every ``scale_interval_s`` the scaler asks the policy for a replica count (in flight, queued,
  busy workers, workers running or starting); the embedded service's scaler also asks as soon
  as a job is dispatched ("nudged"); a started worker is ready after a start-up delay;
  at a scale-down, workers still starting go first (as Kubernetes deletes not-ready pods first),
  then the idle workers ``choose_victims`` names from the registry; busy ones never;
- a worker's first job of a language pair also loads that pair (``PAIR_LOAD_S``);
- queue wait: from arrival until a worker starts the job; worker-seconds: from each worker's
  start request until it is removed, or the end of the trace.

Policies: (a) the seed's, jobs in flight + standby, on the interval alone (``dragoman scaler``)
and nudged (``dragoman serve``); (b) the same plus queued jobs (capped); (c) a fixed pool of
``max_workers``, all ready from the start. The autoscaled pools start idle, with their
``min_workers + standby_workers`` ready. Each trace is replayed with several seeds; waits are
pooled, worker-seconds averaged. Target: at least 40 % fewer worker-seconds than the fixed
pool with at most 15 % more p95 wait, on every trace.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import math
import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from common import SEED, percentile, ratio, report
from rich.console import Console
from rich.table import Table

from dragoman.models import Pool, WorkerInfo
from dragoman.scaling.policy import PoolPolicy, ScalePolicy, choose_victims
from dragoman.settings import Settings

NAME = "autoscale_sim"
HORIZON_S = 4 * 3600.0
QUIET_END_S = 600.0  # no arrivals in the last 10 minutes, so every job finishes in the trace
MAX_WORKERS = 8
STARTUP_S = (5.0, 20.0)  # uniform: a warm image on a ready node, to Apertium or a model loaded
PAIR_LOAD_S = 2.0
# Job durations: log-normal, median 5 s (a few hundred segments), mean ~8 s, p95 ~26 s.
DURATION_MEDIAN_S, DURATION_SIGMA, DURATION_MAX_S = 5.0, 1.0, 300.0
PAIRS = {"eng-spa": 0.5, "spa-eng": 0.2, "fra-spa": 0.15, "eng-cat": 0.15}
SAVING_TARGET = 0.40
WAIT_SLACK = 0.15
T0 = datetime(2026, 1, 1, tzinfo=UTC)


# ---------------------------------------------------------------- traces


@dataclass(frozen=True)
class Job:
    arrival_s: float
    duration_s: float
    pair: str


def poisson(rng: random.Random, rate: Callable[[float], float], peak: float) -> Iterator[float]:
    """Arrival times of a Poisson process of rate ``rate(t) <= peak`` (by thinning)."""
    t = 0.0
    while True:
        t += rng.expovariate(peak)
        if t >= HORIZON_S - QUIET_END_S:
            return
        if rng.random() * peak <= rate(t):
            yield t


def steady(rng: random.Random) -> list[float]:
    """A trickle: 0.16 jobs/s all along (about 1.3 busy workers on average)."""
    return list(poisson(rng, lambda _: 0.16, 0.16))


def bursts(rng: random.Random) -> list[float]:
    """A client submitting folders: 20-80 jobs within 30 s, every 5-35 minutes, and a
    background of one job every 100 s."""
    times = list(poisson(rng, lambda _: 0.01, 0.01))
    start = rng.uniform(60, 600)
    while start < HORIZON_S - QUIET_END_S - 30:
        times += [start + rng.uniform(0, 30) for _ in range(rng.randint(20, 80))]
        start += rng.uniform(300, 2100)
    return sorted(times)


def diurnal(rng: random.Random) -> list[float]:
    """A working day compressed into the trace: 0.02 jobs/s at night, ramping to 0.72 at
    noon (about 6 busy workers) and back."""
    span = HORIZON_S - QUIET_END_S

    def rate(t: float) -> float:
        return 0.02 + 0.70 * math.sin(math.pi * t / span) ** 2

    return list(poisson(rng, rate, 0.72))


TRACES = {"steady": steady, "bursts": bursts, "diurnal": diurnal}


def build_jobs(trace: str, seed: int) -> list[Job]:
    rng = random.Random(f"{seed}:{trace}")
    pairs, weights = list(PAIRS), list(PAIRS.values())
    jobs = []
    for arrival in TRACES[trace](rng):
        duration = rng.lognormvariate(math.log(DURATION_MEDIAN_S), DURATION_SIGMA)
        pair = rng.choices(pairs, weights)[0]
        jobs.append(Job(arrival, min(duration, DURATION_MAX_S), pair))
    return jobs


# ---------------------------------------------------------------- the pool


@dataclass(frozen=True)
class Variant:
    """A policy and how its scaler is woken: on the interval, or also at each dispatch."""

    policy: PoolPolicy
    nudged: bool = False


@dataclass(eq=False)
class Worker:
    id: str
    requested_s: float
    ready: bool = False
    job: Job | None = None
    warm: set[str] = field(default_factory=set)

    def info(self, now: float) -> WorkerInfo:
        return WorkerInfo(
            id=self.id,
            pool=Pool.CPU,
            host=self.id,
            busy=self.job is not None,
            warm_pairs=frozenset(self.warm),
            last_seen=T0 + timedelta(seconds=now),  # heartbeats keep every live worker fresh
        )


class PoolSim:
    """One pool under one policy, replaying one trace."""

    def __init__(self, variant: Variant, seed: int) -> None:
        self.now = 0.0
        self.policy = policy = variant.policy
        self.nudged = variant.nudged
        self.scaler = ScalePolicy(policy, lambda: self.now)
        self.rng = random.Random(f"{seed}:startup")
        self.events: list[tuple[float, int, str, Any]] = []
        self.order = itertools.count()  # first scheduled, first served at equal times
        self.queue: deque[Job] = deque()
        self.broker: deque[Job] = deque()
        self.workers: dict[str, Worker] = {}
        self.idle: deque[Worker] = deque()  # ready and free, longest idle first
        self.running = 0
        self.started = 0
        self.waits: list[float] = []
        self.worker_seconds = 0.0
        self.busy_seconds = 0.0
        for _ in range(policy.target(in_flight=0, queued=0)):  # idle, as before the trace
            self._mark_ready(self._new_worker())

    def run(self, jobs: list[Job]) -> PoolSim:
        """Replays ``jobs``; the figures are then in ``waits``, ``worker_seconds``, ..."""
        for job in jobs:
            self._at(job.arrival_s, "arrive", job)
        self._at(0.0, "tick", None)
        while self.events:
            self.now, _, kind, payload = heapq.heappop(self.events)
            if self.now > HORIZON_S:
                break
            getattr(self, f"_on_{kind}")(payload)
        self.worker_seconds += sum(HORIZON_S - w.requested_s for w in self.workers.values())
        assert len(self.waits) == len(jobs), "jobs left unstarted at the end of the trace"
        return self

    def _at(self, when: float, kind: str, payload: Any) -> None:
        heapq.heappush(self.events, (when, next(self.order), kind, payload))

    # -- events -------------------------------------------------------------------------

    def _on_arrive(self, job: Job) -> None:
        self.queue.append(job)
        self._dispatch()

    def _on_ready(self, worker: Worker) -> None:
        if worker.id in self.workers:  # not removed while it started
            self._mark_ready(worker)
            self._dispatch()

    def _on_finish(self, worker: Worker) -> None:
        assert worker.job is not None
        worker.warm.add(worker.job.pair)
        worker.job = None
        self.running -= 1
        self.idle.append(worker)
        self._dispatch()

    def _on_tick(self, _payload: None) -> None:
        self._scale()
        self._at(self.now + self.policy.scale_interval_s, "tick", None)

    def _on_nudge(self, _payload: None) -> None:
        self._scale()

    # -- mechanics ----------------------------------------------------------------------

    def _scale(self) -> None:
        current = len(self.workers)
        desired = self.scaler.decide(
            in_flight=len(self.broker) + self.running,
            queued=len(self.queue),
            busy=self.running,
            current=current,
        )
        for _ in range(desired - current):
            worker = self._new_worker()
            self._at(self.now + self.rng.uniform(*STARTUP_S), "ready", worker)
        if desired < current:
            self._remove(current - desired)

    def _dispatch(self) -> None:
        submitted = False
        while self.queue and len(self.broker) + self.running < self.policy.max_workers:
            self.broker.append(self.queue.popleft())
            submitted = True
        if submitted and self.nudged:  # one nudge per dispatch round, as the event coalesces
            self._at(self.now, "nudge", None)
        while self.broker and self.idle:
            job, worker = self.broker.popleft(), self.idle.popleft()
            worker.job = job
            self.running += 1
            self.waits.append(self.now - job.arrival_s)
            work = job.duration_s + (0.0 if job.pair in worker.warm else PAIR_LOAD_S)
            self.busy_seconds += work
            self._at(self.now + work, "finish", worker)

    def _new_worker(self) -> Worker:
        self.started += 1
        worker = Worker(id=f"w{self.started:05d}", requested_s=self.now)
        self.workers[worker.id] = worker
        return worker

    def _mark_ready(self, worker: Worker) -> None:
        worker.ready = True
        self.idle.append(worker)

    def _remove(self, count: int) -> None:
        starting = [w for w in self.workers.values() if not w.ready]
        doomed = starting[::-1][:count]
        registry = [w.info(self.now) for w in self.workers.values() if w.ready]
        doomed += [self.workers[v.id] for v in choose_victims(registry, count - len(doomed))]
        assert len(doomed) == count, "the policy asked for more removals than idle workers"
        for worker in doomed:
            assert worker.job is None, "a busy worker was removed"
            del self.workers[worker.id]
            if worker in self.idle:
                self.idle.remove(worker)
            self.worker_seconds += self.now - worker.requested_s


# ---------------------------------------------------------------- policies and figures


def variants(base: PoolPolicy) -> dict[str, Variant]:
    """The policies compared, from one pool's settings."""
    seed = replace(base, scale_with_queued=False)
    fixed = replace(seed, min_workers=base.max_workers, standby_workers=0)
    return {
        "in_flight+standby": Variant(seed),
        "in_flight+standby, nudged": Variant(seed, nudged=True),
        "in_flight+standby+queued": Variant(replace(base, scale_with_queued=True)),
        "fixed": Variant(fixed),
    }


def replay(variant: Variant, trace: str, seeds: int) -> dict[str, Any]:
    """The variant over ``seeds`` replays of the trace: pooled waits, means per replay."""
    runs = [
        PoolSim(variant, seed).run(build_jobs(trace, seed)) for seed in range(SEED, SEED + seeds)
    ]
    waits = [wait for run in runs for wait in run.waits]

    def mean(name: str) -> float:
        return float(sum(getattr(run, name) for run in runs)) / seeds

    return {
        "jobs_per_replay": round(len(waits) / seeds, 1),
        "worker_seconds": round(mean("worker_seconds")),
        "mean_workers": round(mean("worker_seconds") / HORIZON_S, 2),
        "mean_busy_workers": round(mean("busy_seconds") / HORIZON_S, 2),
        "workers_started": round(mean("started"), 1),
        "wait_s": {
            "mean": round(sum(waits) / len(waits), 2),
            **{f"p{q}": round(percentile(waits, q), 2) for q in (50, 95, 99)},
            "max": round(max(waits), 2),
        },
    }


def compare(figures: dict[str, Any], fixed: dict[str, Any]) -> dict[str, Any]:
    """The ratios to the fixed pool's figures, and whether they meet the target."""
    cost = figures["worker_seconds"] / fixed["worker_seconds"]
    ours, theirs = figures["wait_s"]["p95"], fixed["wait_s"]["p95"]
    return {
        "worker_seconds_vs_fixed": round(cost, 3),
        "p95_wait_vs_fixed": ratio(ours, theirs),  # None where the fixed pool's is 0
        "meets_target": cost <= 1 - SAVING_TARGET and ours <= theirs * (1 + WAIT_SLACK),
    }


def measure_variants(pools: dict[str, Variant], seeds: int) -> dict[str, dict[str, Any]]:
    """Every trace under every variant, the autoscaled ones compared with the fixed pool."""
    results: dict[str, dict[str, Any]] = {}
    for trace in TRACES:
        per_policy = {name: replay(variant, trace, seeds) for name, variant in pools.items()}
        for name, figures in per_policy.items():
            if name != "fixed":
                figures.update(compare(figures, per_policy["fixed"]))
        results[trace] = per_policy
    return results


SWEEP_STANDBY = (0, 1, 2, 3)
SWEEP_DELAYS_S = (30.0, 60.0, 120.0, 300.0)
SWEEP_SCALERS = ((2.0, False), (5.0, False), (5.0, True))  # (interval s, nudged)


def sweep(base: PoolPolicy, fixed: dict[str, dict[str, Any]], seeds: int) -> list[dict[str, Any]]:
    """The seed's policy (no queued jobs) over a grid of its settings and scalers."""
    rows = []
    for standby, delay, (interval, nudged) in itertools.product(
        SWEEP_STANDBY, SWEEP_DELAYS_S, SWEEP_SCALERS
    ):
        policy = replace(base, standby_workers=standby, scale_down_delay_s=delay)
        policy = replace(policy, scale_interval_s=interval, scale_with_queued=False)
        traces = {}
        for trace in TRACES:
            figures = replay(Variant(policy, nudged), trace, seeds)
            p95 = {"p95_wait_s": figures["wait_s"]["p95"]}
            traces[trace] = compare(figures, fixed[trace]) | p95
        met = all(t["meets_target"] for t in traces.values())
        knobs = {"standby_workers": standby, "scale_down_delay_s": delay}
        knobs |= {"scale_interval_s": interval, "nudged": nudged}
        rows.append({**knobs, "traces": traces, "meets_target": met})
    return rows


# ---------------------------------------------------------------- command line


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="replays of each trace")
    parser.add_argument("--max-workers", type=int, default=MAX_WORKERS)
    parser.add_argument("--no-sweep", action="store_true", help="skip the grid of settings")
    parser.add_argument(
        "--startup",
        type=float,
        nargs=2,
        default=STARTUP_S,
        metavar=("MIN", "MAX"),
        help="worker start-up, uniform (default: a Kubernetes pod)",
    )
    parser.add_argument("--pair-load", type=float, default=PAIR_LOAD_S)
    parser.add_argument("--name", default=NAME, help="result file name in bench/results/")
    return parser.parse_args()


def parameters(pools: dict[str, Variant], seeds: int) -> dict[str, Any]:
    return {
        "horizon_s": HORIZON_S,
        "quiet_end_s": QUIET_END_S,
        "seeds": list(range(SEED, SEED + seeds)),
        "startup_s_uniform": list(STARTUP_S),
        "pair_load_s": PAIR_LOAD_S,
        "job_duration_s_lognormal": {
            "median": DURATION_MEDIAN_S,
            "sigma": DURATION_SIGMA,
            "max": DURATION_MAX_S,
        },
        "pairs": PAIRS,
        "traces": {name: " ".join((make.__doc__ or "").split()) for name, make in TRACES.items()},
        "policies": {name: asdict(variant) for name, variant in pools.items()},
    }


def measure(args: argparse.Namespace) -> dict[str, Any]:
    # The CPU pool's settings: their defaults, or what DRAGOMAN_CPU_* variables say.
    pools = variants(PoolPolicy.from_settings(Settings(cpu_max_workers=args.max_workers), Pool.CPU))
    results = measure_variants(pools, args.seeds)
    fixed = {trace: per_policy["fixed"] for trace, per_policy in results.items()}
    autoscaled = [name for name in pools if name != "fixed"]
    met = {name: all(results[t][name]["meets_target"] for t in TRACES) for name in autoscaled}
    seed = pools["in_flight+standby"].policy
    return {
        "parameters": parameters(pools, args.seeds),
        "target": {"worker_seconds_saving_min": SAVING_TARGET, "p95_wait_slack_max": WAIT_SLACK},
        "results": results,
        "target_met": met,
        "sweep": [] if args.no_sweep else sweep(seed, fixed, args.seeds),
    }


def results_table(result: dict[str, Any]) -> Table:
    table = Table(title="Autoscaling, simulated: means per replay, waits pooled over the replays")
    for column in ("trace", "policy"):
        table.add_column(column)
    for column in ("worker-s", "vs fixed", "p95 wait s", "vs fixed", "busy", "starts", "target"):
        table.add_column(column, justify="right")
    for trace, per_policy in result["results"].items():
        for name, figures in per_policy.items():
            table.add_row(
                trace,
                name,
                f"{figures['worker_seconds']:,}",
                str(figures.get("worker_seconds_vs_fixed", "")),
                f"{figures['wait_s']['p95']:.1f}",
                str(figures.get("p95_wait_vs_fixed", "")),
                f"{figures['mean_busy_workers']:.2f}",
                str(figures["workers_started"]),
                {True: "met", False: "missed", None: ""}[figures.get("meets_target")],
            )
    return table


def sweep_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="Sweep of the seed's policy: worker-s / p95 wait, each vs the fixed pool")
    for column in ("standby", "delay s", "interval s", "nudged", *TRACES, "target"):
        table.add_column(column, justify="right")
    for row in rows:
        cells = [f"{t['worker_seconds_vs_fixed']:.2f} / {wait(t)}" for t in row["traces"].values()]
        knobs = [str(row[name]) for name in ("standby_workers", "scale_down_delay_s")]
        knobs += [str(row["scale_interval_s"]), "yes" if row["nudged"] else ""]
        table.add_row(*knobs, *cells, "met" if row["meets_target"] else "missed")
    return table


def wait(figures: dict[str, Any]) -> str:
    """The p95 wait against the fixed pool's, or in seconds where the fixed pool's is 0."""
    versus = figures["p95_wait_vs_fixed"]
    return f"{figures['p95_wait_s']:.1f}s" if versus is None else f"x{versus:.2f}"


def summarize(result: dict[str, Any]) -> str:
    console = Console(width=120)
    with console.capture() as capture:
        console.print(results_table(result))
        console.print(f"target met: {result['target_met']}")
        if result["sweep"]:
            console.print(sweep_table(result["sweep"]))
    return capture.get()


def main() -> None:
    global STARTUP_S, PAIR_LOAD_S
    args = parse_args()
    STARTUP_S, PAIR_LOAD_S = (args.startup[0], args.startup[1]), args.pair_load
    report(args.name, measure(args), summarize)


if __name__ == "__main__":
    main()
