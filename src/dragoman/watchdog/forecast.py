"""The forecast, made at each of the watchdog's sweeps: every waiting and running job's
predicted end (``eta``), written to its row where it moved, so that a status read anywhere
finds it without asking anything more; and the jobs at risk of missing their deadline,
counted per pool (a gauge, and a figure the dashboard reads from the store).

A prediction is kept as the moment the job should end (``jobs.eta_at``), not a number of
seconds: it stays true as time passes while the pool keeps its pace, so most sweeps write
nothing. It is written again once it moves by more than ``TOLERANCE`` of the time left
(``MIN_MOVE_S`` at least), or to the other side of the job's deadline: a status read says
what the forecast says.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from dragoman.metrics import Metrics
from dragoman.models import Job, Pool
from dragoman.queue import BatchRequestsQueue
from dragoman.settings import Settings
from dragoman.store import JobStore, WorkerRegistry
from dragoman.watchdog.eta import Speed, Work, finish_in
from dragoman.watchdog.routing import Router

TOLERANCE = 0.1
MIN_MOVE_S = 1.0
AT_RISK = "jobs_at_risk"  # the published figure


def moved(
    before: datetime | None, after: datetime | None, now: datetime, deadline: datetime | None
) -> bool:
    """Whether a prediction changed enough to be written again."""
    if before is None or after is None:
        return before is not after
    if deadline is not None and (before > deadline) != (after > deadline):
        return True
    left = max(0.0, (after - now).total_seconds())
    return abs((after - before).total_seconds()) > max(MIN_MOVE_S, TOLERANCE * left)


class Forecast:
    def __init__(
        self,
        *,
        store: JobStore,
        registry: WorkerRegistry,
        metrics: Metrics,
        settings: Settings,
        queue: BatchRequestsQueue,
        router: Router,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._registry = registry
        self._metrics = metrics
        self._settings = settings
        self._queue = queue
        self._router = router
        self._monotonic = monotonic
        self.speeds = {pool: Speed() for pool in Pool}
        # What the store holds of each job this forecast follows (absent: not written yet).
        self._written: dict[str, datetime | None] = {}
        self._published: dict[Pool, int] = {}

    async def update(self, now: datetime, running: Sequence[Sequence[Job]]) -> None:
        """``running``: the messages in flight, each the jobs of one worker slot."""
        etas: dict[str, datetime | None] = {}
        deadlines: dict[str, datetime | None] = {}
        for pool in Pool:
            messages = [message for message in running if message[0].pool is pool]
            at_risk = self._pool(pool, now, messages, etas, deadlines)
            self._metrics.jobs_at_risk.labels(pool.value).set(at_risk)
            if self._published.get(pool) != at_risk:
                await self._registry.publish_figures(pool, {AT_RISK: float(at_risk)}, now)
                self._published[pool] = at_risk
        await self._write(now, etas, deadlines)

    def _pool(
        self,
        pool: Pool,
        now: datetime,
        messages: Sequence[Sequence[Job]],
        etas: dict[str, datetime | None],
        deadlines: dict[str, datetime | None],
    ) -> int:
        """Fills in the ``etas`` and ``deadlines`` of the pool's jobs; returns how many are
        at risk."""
        speed = self.speeds[pool]
        workers = self._router.workers(pool)
        counters = {worker.id: worker.segments_translated for worker in workers}
        speed.sample(self._monotonic(), counters, sum(worker.busy for worker in workers))
        waiting = self._queue.ordered(pool)
        ours = {item.job_id: item.deadline for item in waiting}
        ours |= {job.id: job.options.deadline for m in messages for job in m}
        deadlines |= ours
        ends: dict[str, float] = {}
        if speed.rate:
            left = [
                [Work(job.id, job.segments_total - job.segments_done) for job in m]
                for m in messages
            ]
            ends = finish_in(
                left,
                [Work(item.job_id, item.segments) for item in waiting],
                slots=self._settings.max_workers(pool),
                rate=speed.rate,
            )
        at_risk = 0
        for job_id, deadline in ours.items():
            end = ends.get(job_id)
            eta = etas[job_id] = None if end is None else now + timedelta(seconds=end)
            late = deadline is not None and (now > deadline or (eta is not None and eta > deadline))
            at_risk += late
        return at_risk

    async def _write(
        self,
        now: datetime,
        etas: dict[str, datetime | None],
        deadlines: dict[str, datetime | None],
    ) -> None:
        changed: dict[str, datetime | None] = {}
        for job_id, eta in etas.items():
            if job_id in self._written:
                if moved(self._written[job_id], eta, now, deadlines[job_id]):
                    changed[job_id] = eta
            elif eta is not None:
                # New to this forecast. None (no speed measured since a restart) leaves in
                # place what the watchdog before predicted.
                changed[job_id] = eta
        written = await self._store.set_etas(changed) if changed else set()
        # The jobs that left are forgotten; a row another transaction held, tried again.
        kept = {job_id: self._written[job_id] for job_id in etas if job_id in self._written}
        self._written = kept | {job_id: etas[job_id] for job_id in written}
