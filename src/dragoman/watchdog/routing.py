"""Warm routing: work goes to an idle worker that has its model loaded, when the worker
registry knows one, else to the pool's queue where any worker of the pool may take it."""

from __future__ import annotations

from datetime import datetime, timedelta

from dragoman.bus import Bus
from dragoman.clock import Clock
from dragoman.messages import Work, model_key, work_queue, worker_queue
from dragoman.metrics import Metrics
from dragoman.models import Job, Pool, WorkerInfo
from dragoman.store import WorkerRegistry


class Router:
    def __init__(
        self, *, registry: WorkerRegistry, bus: Bus, clock: Clock, metrics: Metrics, ttl_s: float
    ) -> None:
        self._registry = registry
        self._bus = bus
        self._clock = clock
        self._metrics = metrics
        self._ttl_s = ttl_s
        # The worker registry as of the last refresh, and when each worker was last sent
        # work directly (it counts as busy until its next registration says otherwise).
        self._workers: dict[Pool, list[WorkerInfo]] = {pool: [] for pool in Pool}
        self._routed_at: dict[str, datetime] = {}
        # When each pool's queue was last given work: any idle worker may be taking it, so
        # until a worker registers again it is not known to be idle.
        self._queued_at: dict[Pool, datetime] = {}
        self._counts: dict[Pool, list[int]] = {pool: [0, 0] for pool in Pool}  # warm, all
        self._published: dict[Pool, tuple[int, int]] = {}

    def workers(self, pool: Pool) -> list[WorkerInfo]:
        """The pool's live workers as of the last refresh."""
        return self._workers[pool]

    async def refresh(self, now: datetime) -> None:
        seen_after = now - timedelta(seconds=self._ttl_s)
        for pool in Pool:
            self._workers[pool] = await self._registry.live_workers(pool, seen_after)
        live = {worker.id for workers in self._workers.values() for worker in workers}
        self._routed_at = {k: v for k, v in self._routed_at.items() if k in live}
        await self._publish(now)

    async def _publish(self, now: datetime) -> None:
        """Puts the routing counts in the store for the dashboard, when they changed."""
        for pool, (warm, total) in self._counts.items():
            if self._published.get(pool) != (warm, total):
                figures = {"routed_warm": float(warm), "routed_total": float(total)}
                await self._registry.publish_figures(pool, figures, now)
                self._published[pool] = (warm, total)

    async def send(self, job: Job, work: Work) -> str | None:
        """Sends ``work`` (whose first job is ``job``) to an idle worker with the model
        warm, else to the pool's queue; returns the worker's name when routed."""
        key = model_key(job)
        body = work.to_body()
        queued = self._queued_at.get(job.pool)
        for worker in self._workers[job.pool]:
            routed = self._routed_at.get(worker.id)
            if worker.busy or key not in worker.warm_pairs:
                continue
            if self._sent_since(routed, worker) or self._sent_since(queued, worker):
                continue
            if await self._bus.publish_private(worker_queue(worker.id), body):
                self._routed_at[worker.id] = self._clock.now()
                self._count(job.pool, warm=True)
                return worker.id
        await self._bus.publish(work_queue(job.pool), body)
        self._queued_at[job.pool] = self._clock.now()
        self._count(job.pool, warm=False)
        return None

    @staticmethod
    def _sent_since(sent: datetime | None, worker: WorkerInfo) -> bool:
        """Whether work that ``worker`` may have taken was sent after its registration said
        what it was doing."""
        return sent is not None and (worker.last_seen is None or sent >= worker.last_seen)

    def _count(self, pool: Pool, warm: bool) -> None:
        counts = self._counts[pool]
        counts[0] += warm
        counts[1] += 1
        self._metrics.routed.labels(pool, "warm" if warm else "cold").inc()
        self._metrics.routing_hit_ratio.labels(pool).set(counts[0] / counts[1])

    def hit_ratio(self, pool: Pool) -> float | None:
        """Share of this pool's messages that went to a worker with the model warm."""
        warm, total = self._counts[pool]
        return warm / total if total else None
