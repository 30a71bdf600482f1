"""The seed's BatchWorkersManager: one per pool, sizing it from the store's counts."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from dragoman.errors import TransientError
from dragoman.models import JobStatus, Pool
from dragoman.runtime import Runtime
from dragoman.scaling import ReplicaController
from dragoman.scaling.policy import Decision, PoolPolicy, ScalePolicy, choose_victims
from dragoman.tasks import cancel_and_wait

log = logging.getLogger(__name__)
# A burst of dispatches is decided on once in this time, not once per dispatch: each decision
# reads the store's counts and the registry, which small jobs would otherwise pay per job.
NUDGE_GAP_S = 0.25


class Scaler:
    """Every ``scale_interval_s`` (or when nudged): counts the pool's jobs in flight and
    queued and its busy workers, asks the policy, and has the controller apply it, naming
    the idle workers to remove at a scale-down."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        pool: Pool,
        controller: ReplicaController,
        monotonic: Callable[[], float] = time.monotonic,
        nudge_gap_s: float = NUDGE_GAP_S,
    ) -> None:
        self.pool = pool
        self._settings = settings = runtime.settings
        self._store = runtime.store
        self._registry = runtime.registry
        self._metrics = runtime.metrics
        self._clock = runtime.clock
        self.controller = controller
        self.policy = ScalePolicy(PoolPolicy.from_settings(settings, pool), monotonic)
        self._published: tuple[dict[str, float], datetime | None] = ({}, None)
        self._nudged = asyncio.Event()
        self._nudge_gap_s = nudge_gap_s
        self._task: asyncio.Task[None] | None = None

    async def step(self) -> Decision:
        counts = await self._store.counts(self.pool)
        in_flight = counts[JobStatus.SUBMITTED] + counts[JobStatus.RUNNING]
        queued = counts[JobStatus.QUEUED]
        now = self._clock.now()
        ttl = timedelta(seconds=self._settings.worker_ttl_s)
        await self._registry.expire_workers(now - ttl)
        workers = await self._registry.live_workers(self.pool, now - ttl)
        busy = sum(1 for worker in workers if worker.busy)
        current = await self.controller.replicas()
        decision = self.policy.explain(
            in_flight=in_flight, queued=queued, busy=busy, current=current
        )
        if decision.replicas != current:
            remove = choose_victims(workers, current - decision.replicas)
            log.info(
                "pool %s: %d → %d workers (%s; %d in flight, %d queued, %d busy)",
                self.pool,
                current,
                decision.replicas,
                decision.reason,
                in_flight,
                queued,
                busy,
            )
            await self.controller.scale(decision.replicas, remove)
        labels = self.pool.value
        self._metrics.workers_desired.labels(labels).set(decision.replicas)
        self._metrics.workers_current.labels(labels).set(current)
        self._metrics.workers_busy.labels(labels).set(busy)
        self._metrics.in_flight.labels(labels).set(in_flight)
        self._metrics.queue_depth.labels(labels).set(queued)
        # After a change, what the backend now runs or starts (a Kubernetes read, so only then).
        after = current if decision.replicas == current else await self.controller.replicas()
        await self._publish(decision.replicas, after)
        return decision

    async def _publish(self, desired: int, current: int) -> None:
        """Puts the pool's sizes in the store, where every API process reads them for the
        dashboard: at a change, and at least once an interval so that their age tells
        whether the scaler is alive. Nudges in a burst of dispatches write nothing new."""
        now = self._clock.now()
        figures = {"workers_desired": float(desired), "workers_current": float(current)}
        interval = timedelta(seconds=self.policy.policy.scale_interval_s)
        published, at = self._published
        if figures != published or at is None or now - at >= interval:
            await self._registry.publish_figures(self.pool, figures, now)
            self._published = (figures, now)

    def nudge(self) -> None:
        """Decide now rather than at the next interval (new work was dispatched); nudges
        within ``nudge_gap_s`` of the last decision wait for that gap's end, as one."""
        self._nudged.set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"scaler-{self.pool}")

    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _run(self) -> None:
        interval = self.policy.policy.scale_interval_s
        while True:
            try:
                await self.step()
            except TransientError as exc:
                log.warning("pool %s not scaled this round: %s", self.pool, exc)
            except Exception:
                log.exception("pool %s: scaling failed; will retry", self.pool)
            decided = time.monotonic()
            # Not wait_for: before Python 3.12 it loses a cancellation that comes as the
            # event is set, and the scaler would run on after its stop.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(interval):
                    await self._nudged.wait()
            await asyncio.sleep(max(0.0, decided + self._nudge_gap_s - time.monotonic()))
            self._nudged.clear()

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
