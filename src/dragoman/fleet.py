"""What the dashboard shows of the fleet, read from the store so that every API process of a
distributed deployment shows the same figures (each process's ``/metrics`` has only its own).

Per pool: the workers the scaler wants and has (it publishes them), the live and busy ones
(the worker registry), the jobs queued and in flight, those at risk of missing their
deadline (the watchdog publishes them), what the live workers have translated
and in how many engine calls (each worker's counters, in its registry row), the watchdog's
warm routing (it publishes it); and the newest failed jobs with their reasons.

Segments per second are taken the way Prometheus takes a rate: every ``SAMPLE_INTERVAL_S``
the workers' counters are read; the increase since the previous sample is summed over the
pool's workers, a counter lower than before (the worker restarted) or one new since the
previous sample counting from zero; a point is the increase over the last ``RATE_WINDOW_S``
divided by the time it took. The samples are this process's own, kept for ``HISTORY_S``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timedelta

from dragoman.clock import Clock
from dragoman.models import Job, JobStatus, Pool, WorkerInfo
from dragoman.settings import Settings
from dragoman.store import JobStore, WorkerRegistry
from dragoman.store.worker_registry import SqlWorkerRegistry
from dragoman.tasks import cancel_and_wait

log = logging.getLogger(__name__)

SAMPLE_INTERVAL_S = 2.0
RATE_WINDOW_S = 10.0
HISTORY_S = 300.0
FAILURES = 10


@dataclass(frozen=True, slots=True)
class RatePoint:
    at: datetime
    segments_per_second: float


@dataclass(frozen=True, slots=True)
class PoolView:
    pool: Pool
    max_workers: int
    # None until the pool's scaler has published them (there is no scaler for a pool
    # that may have no workers).
    workers_desired: int | None
    workers_current: int | None
    scaled_at: datetime | None
    workers: list[WorkerInfo]
    queued: int
    in_flight: int
    at_risk: int
    routed_warm: int
    routed_total: int
    rate: list[RatePoint]

    @property
    def busy(self) -> int:
        return sum(worker.busy for worker in self.workers)

    @property
    def segments_translated(self) -> int:
        return sum(worker.segments_translated for worker in self.workers)

    @property
    def batches(self) -> int:
        return sum(worker.batches for worker in self.workers)

    @property
    def batch_segments(self) -> int:
        return sum(worker.batch_segments for worker in self.workers)


@dataclass(frozen=True, slots=True)
class FleetView:
    at: datetime
    pools: list[PoolView]
    failures: list[Job]


class Fleet:
    """The dashboard's use case: ``view`` now, and the sampler of segment rates."""

    def __init__(self, store: JobStore, settings: Settings, clock: Clock) -> None:
        self._store = store
        self._registry: WorkerRegistry = SqlWorkerRegistry(store.database)
        self._settings = settings
        self._clock = clock
        self._ttl = timedelta(seconds=settings.worker_ttl_s)
        # Per pool: (when, segments translated since the sample before) of each sample.
        self._increases: dict[Pool, deque[tuple[datetime, int]]] = {
            pool: deque(maxlen=int(HISTORY_S / SAMPLE_INTERVAL_S) + 1) for pool in Pool
        }
        self._counters: dict[str, int] | None = None  # worker id → its last sampled counter
        self._task: asyncio.Task[None] | None = None

    async def view(self) -> FleetView:
        """Every pool's figures as the store has them now, and the newest failures."""
        now = self._clock.now()
        pools = [await self._pool(pool, now) for pool in Pool]
        failures, _ = await self._store.list_jobs(
            tenant=None, status=JobStatus.FAILED, limit=FAILURES, cursor=None
        )
        return FleetView(at=now, pools=pools, failures=failures)

    async def _pool(self, pool: Pool, now: datetime) -> PoolView:
        workers = await self._registry.live_workers(pool, now - self._ttl)
        counts = await self._store.counts(pool)
        figures = await self._registry.pool_figures(pool)

        def figure(name: str) -> int | None:
            return int(figures[name][0]) if name in figures else None

        scaled = figures.get("workers_desired")
        return PoolView(
            pool=pool,
            max_workers=self._settings.max_workers(pool),
            workers_desired=figure("workers_desired"),
            workers_current=figure("workers_current"),
            scaled_at=scaled[1] if scaled else None,
            workers=workers,
            queued=counts[JobStatus.QUEUED],
            in_flight=counts[JobStatus.SUBMITTED] + counts[JobStatus.RUNNING],
            at_risk=figure("jobs_at_risk") or 0,
            routed_warm=figure("routed_warm") or 0,
            routed_total=figure("routed_total") or 0,
            rate=self.rate(pool),
        )

    def rate(self, pool: Pool) -> list[RatePoint]:
        """Segments per second over the sampled history, one point per sample."""
        increases = list(self._increases[pool])
        steps = max(1, round(RATE_WINDOW_S / SAMPLE_INTERVAL_S))
        points = []
        for i in range(1, len(increases)):
            first = max(0, i - steps)
            seconds = (increases[i][0] - increases[first][0]).total_seconds()
            added = sum(increase for _, increase in increases[first + 1 : i + 1])
            if seconds > 0:
                points.append(RatePoint(increases[i][0], added / seconds))
        return points

    async def sample(self) -> None:
        """Reads every live worker's counter and records each pool's increase."""
        now = self._clock.now()
        counters: dict[str, int] = {}
        for pool in Pool:
            increase = 0
            for worker in await self._registry.live_workers(pool, now - self._ttl):
                value = counters[worker.id] = worker.segments_translated
                before = None if self._counters is None else self._counters.get(worker.id, 0)
                if before is not None:
                    increase += value - before if value >= before else value
            self._increases[pool].append((now, increase))
        self._counters = counters

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="fleet-sampler")

    async def _run(self) -> None:
        while True:
            try:
                await self.sample()
            except Exception as exc:  # a store that does not answer: a gap in the chart
                log.debug("fleet not sampled: %r", exc)
            await asyncio.sleep(SAMPLE_INTERVAL_S)

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
