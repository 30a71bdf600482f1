"""The embedded deployment: API, manager, queue, watchdog and workers in one process."""

from __future__ import annotations

import functools
import logging

from dragoman.bus import Bus
from dragoman.clock import Clock
from dragoman.engines.registry import Engines
from dragoman.models import IN_FLIGHT, Pool
from dragoman.scaling.inprocess import InProcessController
from dragoman.scaling.registry import Registration
from dragoman.scaling.scaler import Scaler
from dragoman.service.manager import Intake, LocalIntake
from dragoman.service.queue import BatchRequestsQueue
from dragoman.services import ApiService, default_engines
from dragoman.settings import Settings
from dragoman.store import JobStore
from dragoman.watchdog import Watchdog
from dragoman.worker import BatchWorker

__all__ = ["EmbeddedService", "default_engines"]

log = logging.getLogger(__name__)


class EmbeddedService(ApiService):
    """Everything one ``dragoman serve`` runs, with start and stop in a written-down order."""

    def __init__(
        self,
        settings: Settings,
        *,
        engines: Engines | None = None,
        store: JobStore | None = None,
        bus: Bus | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(settings, engines=engines, store=store, bus=bus, clock=clock)
        # In-process GPU workers get engines of their own on the GPU; engines given by the
        # caller serve both pools.
        self._gpu_engines: Engines | None = (
            None
            if engines is not None or settings.gpu_max_workers == 0
            else default_engines(settings, Pool.GPU)
        )
        self.controllers = {
            pool: InProcessController(
                functools.partial(self._make_worker, pool=pool),
                self._registration,
                prefix=f"{pool}",
            )
            for pool in Pool
        }
        self.scalers = {
            pool: Scaler(
                pool=pool,
                settings=settings,
                store=self.store,
                controller=self.controllers[pool],
                metrics=self.metrics,
                clock=self.clock,
            )
            for pool in Pool
            if settings.max_workers(pool) > 0
        }

    @property
    def workers(self) -> list[BatchWorker]:
        return [worker for controller in self.controllers.values() for worker in controller.workers]

    def _pool_engines(self, pool: Pool) -> Engines:
        if pool is Pool.GPU and self._gpu_engines is not None:
            return self._gpu_engines
        return self.engines

    def _make_worker(self, name: str, pool: Pool) -> BatchWorker:
        return BatchWorker(
            name=name,
            pool=pool,
            settings=self.settings,
            store=self.store,
            bus=self.bus,
            engines=self._pool_engines(pool),
            clock=self.clock,
            metrics=self.metrics,
        )

    def _registration(self, worker: BatchWorker) -> Registration:
        return Registration(
            worker,
            store=self.store,
            engines=self._pool_engines(worker.pool),
            clock=self.clock,
            host=self.settings.worker_host,
            interval_s=self.settings.heartbeat_interval_s,
        )

    def _nudge_scalers(self) -> None:
        for scaler in self.scalers.values():
            scaler.nudge()

    def make_intake(self) -> Intake:
        # The queue and the watchdog live in this process: jobs go straight to them.
        self.queue = BatchRequestsQueue()
        self.watchdog = Watchdog(
            settings=self.settings,
            store=self.store,
            bus=self.bus,
            queue=self.queue,
            clock=self.clock,
            on_dispatch=self._nudge_scalers,
            reload_each_sweep=False,
            metrics=self.metrics,
        )
        return LocalIntake(self.queue, self.watchdog.wake)

    async def start(self) -> None:
        # Store first (migrations), then recovery, then the watchdog that dispatches what
        # was recovered (it reloads the queued jobs), then the workers that consume it.
        await self._open()
        await self._requeue_orphans()
        await self.watchdog.start()
        # Each pool's autoscaler starts its in-process workers (standby ones at once) and
        # grows the pool as the watchdog dispatches.
        for scaler in self.scalers.values():
            await scaler.step()
            scaler.start()
        self.manager.start()
        log.info(
            "dragoman embedded service started: up to %d cpu and %d gpu workers",
            self.settings.cpu_max_workers,
            self.settings.gpu_max_workers,
        )

    async def _requeue_orphans(self) -> None:
        """In one process, jobs in flight at start-up lost their worker with the last run."""
        for job in await self.store.in_status(sorted(IN_FLIGHT)):
            await self.store.requeue(job.id, job.attempts, self.clock.now())
            log.info("job %s requeued after a restart (attempt %d lost)", job.id, job.attempts)

    async def stop(self) -> None:
        # Workers stop first: what they committed stays, what they held is requeued at the
        # next start. Then the watchdog, the engines' processes, the bus and the store.
        for scaler in self.scalers.values():
            await scaler.stop()
        for controller in self.controllers.values():
            await controller.close()
        await self.manager.stop()
        await self.watchdog.stop()
        await self.batcher.close()
        await self.engines.close()
        if self._gpu_engines is not None:
            await self._gpu_engines.close()
        await self._close()

    def refresh_gauges(self) -> None:
        for pool in Pool:
            self.metrics.queue_depth.labels(pool.value).set(self.queue.depth(pool))
            self.metrics.in_flight.labels(pool.value).set(self.watchdog.in_flight(pool))
            self.metrics.workers_current.labels(pool.value).set(len(self.controllers[pool].workers))
