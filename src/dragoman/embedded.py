"""The embedded deployment: API, manager, queue, watchdog and workers in one process."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from dragoman.bus import Bus
from dragoman.clock import Clock
from dragoman.engines.registry import Engines
from dragoman.models import IN_FLIGHT, Pool
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
        self.workers = [
            BatchWorker(
                name=f"{pool}-{i}",
                pool=pool,
                settings=settings,
                store=self.store,
                bus=self.bus,
                engines=self.engines,
                clock=self.clock,
                metrics=self.metrics,
            )
            for pool in Pool
            for i in range(settings.max_workers(pool))
        ]
        self._worker_tasks: list[asyncio.Task[None]] = []

    def make_intake(self) -> Intake:
        # The queue and the watchdog live in this process: jobs go straight to them.
        self.queue = BatchRequestsQueue()
        self.watchdog = Watchdog(
            settings=self.settings,
            store=self.store,
            bus=self.bus,
            queue=self.queue,
            clock=self.clock,
        )
        return LocalIntake(self.queue, self.watchdog.wake)

    async def start(self) -> None:
        # Store first (migrations), then recovery, then the watchdog that dispatches what
        # was recovered (it reloads the queued jobs), then the workers that consume it.
        await self._open()
        await self._requeue_orphans()
        await self.watchdog.start()
        self._worker_tasks = [
            asyncio.create_task(worker.run(), name=f"worker-{worker.name}")
            for worker in self.workers
        ]
        self.manager.start()
        log.info(
            "dragoman embedded service started: %d cpu and %d gpu workers",
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
        for task in self._worker_tasks:
            task.cancel()
        for task in self._worker_tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.manager.stop()
        await self.watchdog.stop()
        await self.batcher.close()
        await self.engines.close()
        await self._close()

    def refresh_gauges(self) -> None:
        for pool in Pool:
            self.metrics.queue_depth.labels(pool.value).set(self.queue.depth(pool))
            self.metrics.in_flight.labels(pool.value).set(self.watchdog.in_flight(pool))
