"""The programs: each builds its roles over one ``Runtime`` and starts and stops them in a
written-down order.
- ``EmbeddedService`` (``dragoman serve``): the API, the queue, the watchdog and autoscaled
  workers in one process, over SQLite and an in-process bus by default.
- ``ApiService`` (``dragoman api``): the HTTP API; stores jobs and tells the watchdog.
- ``WatchdogService`` (``dragoman watchdog``): dispatches, records reports and sweeps while it
  holds the ``watchdog`` lease in the store; a second one waits as a hot standby.
- ``WorkerService`` (``dragoman worker --pool``): one worker; SIGTERM drains it.
- ``ScalerService`` (``dragoman scaler``): one pool's autoscaler.
The API side (``Front``: the features, the manager, file jobs, text translation, the fleet
view) and the dispatch side (``_Dispatch``: the queue, the watchdog, the notifier) are built
by one helper each. The features (usage, glossaries, memories, reuse) are peers built once
per process: the manager, the routes and the in-process workers share them.

The four programs of the distributed deployment start in the background (``programs.py``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any, Unpack

from dragoman.api.v1.job_out import JobOut
from dragoman.engines import Engines, open_engines
from dragoman.errors import TransientError
from dragoman.front import Front, Serving
from dragoman.glossaries import Terminology
from dragoman.jobs import BusIntake, LocalIntake
from dragoman.models import IN_FLIGHT, Job, Pool, WorkerInfo
from dragoman.programs import Distributed
from dragoman.queue import BatchRequestsQueue
from dragoman.reuse import Reuse
from dragoman.runtime import Adapters, Runtime
from dragoman.scaling import ReplicaController, WorkerSource
from dragoman.scaling.inprocess import InProcessController
from dragoman.scaling.scaler import Scaler
from dragoman.settings import Settings
from dragoman.tasks import cancel_and_wait
from dragoman.watchdog import Watchdog
from dragoman.webhooks.notifier import Notifier
from dragoman.worker import BatchWorker

log = logging.getLogger(__name__)

WATCHDOG_LEASE = "watchdog"


def _rendered(job: Job, runtime: Runtime) -> dict[str, Any]:
    """A job as ``GET /v1/jobs/{id}`` shows it now: a notification's ``data``."""
    return JobOut.of(job, now=runtime.clock.now()).model_dump(mode="json")


class _Dispatch:
    """The queue and the watchdog that pops it (and runs the notifier of jobs' ends)."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        on_dispatch: Callable[[], None] = lambda: None,
        on_ended: Callable[[], None] = lambda: None,
        reload_each_sweep: bool = True,
    ) -> None:
        self.queue = BatchRequestsQueue()
        self.watchdog = Watchdog(
            runtime,
            queue=self.queue,
            on_dispatch=on_dispatch,
            on_ended=on_ended,
            reload_each_sweep=reload_each_sweep,
            notifier=Notifier(runtime, render=lambda job: _rendered(job, runtime)),
        )
        self._metrics = runtime.metrics

    def refresh_gauges(self) -> None:
        for pool in Pool:
            self._metrics.queue_depth.labels(pool.value).set(self.queue.depth(pool))
            self._metrics.in_flight.labels(pool.value).set(self.watchdog.in_flight(pool))


class ApiService(Distributed, Serving):
    name = "dragoman api"

    def __init__(
        self,
        settings: Settings,
        *,
        engines: Engines | None = None,
        **adapters: Unpack[Adapters],
    ) -> None:
        super().__init__(Runtime.from_settings(settings, **adapters))
        self.front = Front(self.runtime, engines or open_engines(settings), BusIntake(self.bus))

    def begin(self) -> None:
        self.front.start()

    async def end(self) -> None:
        await self.front.stop()


class EmbeddedService(Serving):
    """Everything one ``dragoman serve`` runs, with start and stop in a written-down order."""

    def __init__(
        self,
        settings: Settings,
        *,
        engines: Engines | None = None,
        **adapters: Unpack[Adapters],
    ) -> None:
        super().__init__(Runtime.from_settings(settings, **adapters))
        rt = self.runtime
        # In-process GPU workers get engines of their own on the GPU; engines given by the
        # caller serve both pools.
        cpu_engines = engines or open_engines(settings)
        self._engines = {Pool.CPU: cpu_engines, Pool.GPU: cpu_engines}
        if engines is None and settings.gpu_max_workers > 0:
            self._engines[Pool.GPU] = open_engines(settings, Pool.GPU)
        # The queue and the watchdog live in this process: jobs go straight to them.
        # Jobs end in this process: its long polls and event streams learn it at once.
        self.dispatch = _Dispatch(
            rt,
            on_dispatch=self._nudge_scalers,
            on_ended=lambda: self.front.manager.waits.poke(),
            reload_each_sweep=False,
        )
        self.queue, self.watchdog = self.dispatch.queue, self.dispatch.watchdog
        intake = LocalIntake(self.queue, self.watchdog.wake)
        self.front = Front(rt, cpu_engines, intake)
        # Workers share the front's reuse and glossaries; GPU workers with engines of
        # their own get one pair of them for those engines.
        self._peers = {Pool.CPU: (self.front.reuse, self.front.terminology)}
        gpu_engines = self._engines[Pool.GPU]
        self._peers[Pool.GPU] = (
            self._peers[Pool.CPU]
            if gpu_engines is cpu_engines
            else (Reuse(rt, engines=gpu_engines), Terminology(rt, engines=gpu_engines))
        )
        self.controllers = {
            pool: InProcessController(self._worker_maker(pool), prefix=f"{pool}") for pool in Pool
        }
        self.scalers = {
            pool: Scaler(rt, pool=pool, controller=self.controllers[pool])
            for pool in Pool
            if settings.max_workers(pool) > 0
        }

    @property
    def workers(self) -> list[BatchWorker]:
        return [worker for controller in self.controllers.values() for worker in controller.workers]

    def _worker_maker(self, pool: Pool) -> Callable[[str], BatchWorker]:
        reuse, terminology = self._peers[pool]

        def make(name: str) -> BatchWorker:
            return BatchWorker(
                self.runtime,
                name=name,
                pool=pool,
                engines=self._engines[pool],
                reuse=reuse,
                terminology=terminology,
            )

        return make

    def _nudge_scalers(self) -> None:
        for scaler in self.scalers.values():
            scaler.nudge()

    async def start(self) -> None:
        # Store first (migrations), then recovery, then the watchdog that dispatches what
        # was recovered (it reloads the queued jobs), then the workers that consume it.
        await self.runtime.open()
        await self._requeue_orphans()
        await self.watchdog.start()
        # Each pool's autoscaler starts its in-process workers (standby ones at once) and
        # grows the pool as the watchdog dispatches.
        for scaler in self.scalers.values():
            await scaler.step()
            scaler.start()
        self.front.start()
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
        await self.watchdog.stop()
        await self.front.stop()
        if self._engines[Pool.GPU] is not self._engines[Pool.CPU]:
            await self._engines[Pool.GPU].close()
        await self.runtime.close()

    def refresh_gauges(self) -> None:
        self.dispatch.refresh_gauges()
        for pool in Pool:
            self.metrics.workers_current.labels(pool.value).set(len(self.controllers[pool].workers))


class WatchdogService(Distributed):
    """Runs the watchdog while it holds the lease; renews it every third of its TTL."""

    def __init__(self, settings: Settings, **adapters: Unpack[Adapters]) -> None:
        super().__init__(Runtime.from_settings(settings, **adapters))
        self.holder = f"{settings.worker_host}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.name = f"dragoman watchdog {self.holder}"
        self.dispatch = _Dispatch(self.runtime)
        self.queue, self.watchdog = self.dispatch.queue, self.dispatch.watchdog
        self.active = False
        self._leasing: asyncio.Task[None] | None = None

    def begin(self) -> None:
        self._leasing = asyncio.create_task(self._hold_lease(), name="watchdog-lease")

    async def _hold_lease(self) -> None:
        ttl = self.settings.lease_ttl_s
        renewed = time.monotonic()
        while True:
            try:
                held = await self.runtime.leases.acquire_lease(
                    WATCHDOG_LEASE, self.holder, ttl, self.clock.now()
                )
                if held:
                    renewed = time.monotonic()
            except TransientError as exc:
                # Unreachable store: keep the role until the lease would have expired.
                held = self.active and time.monotonic() - renewed < ttl
                log.warning("watchdog lease not renewed: %s", exc)
            if held and not self.active:
                log.info("watchdog %s holds the lease: dispatching", self.holder)
                await self.watchdog.start()
                self.active = True
            elif not held and self.active:
                log.warning("watchdog %s lost the lease: standing by", self.holder)
                await self.watchdog.stop()
                self.active = False
            await asyncio.sleep(ttl / 3)

    def running(self) -> bool:
        return self._leasing is not None and not self._leasing.done()

    def refresh_gauges(self) -> None:
        self.dispatch.refresh_gauges()

    async def end(self) -> None:
        if self._leasing is not None:
            await cancel_and_wait(self._leasing)
        if self.active:
            await self.watchdog.stop()
            self.active = False


class WorkerService(Distributed):
    """One worker of one pool; ``stop`` drains it (the job in hand is finished first)."""

    def __init__(
        self,
        settings: Settings,
        pool: Pool,
        *,
        engines: Engines | None = None,
        **adapters: Unpack[Adapters],
    ) -> None:
        super().__init__(Runtime.from_settings(settings, **adapters))
        self.pool = pool
        self.engines = engines or open_engines(settings, pool)
        name = f"{pool}-{settings.worker_host}-{os.getpid()}"
        self.name = f"dragoman worker {name}"
        self.worker = BatchWorker(
            self.runtime,
            name=name,
            pool=pool,
            engines=self.engines,
            reuse=Reuse(self.runtime, engines=self.engines),
            terminology=Terminology(self.runtime, engines=self.engines),
        )
        self._running: asyncio.Task[None] | None = None

    def begin(self) -> None:
        self._running = asyncio.create_task(self.worker.run(), name=f"worker-{self.worker.name}")

    def running(self) -> bool:
        return self._running is not None and not self._running.done()

    async def end(self) -> None:
        if self._running is not None:
            log.info("worker %s draining", self.worker.name)
            await self.worker.drain(self._running)
        await self.engines.close()
        log.info("worker %s stopped", self.worker.name)


class ScalerService(Distributed):
    """``dragoman scaler``: one pool's autoscaler over a process or Kubernetes backend. It
    needs the store only: the bus is never opened."""

    uses_bus = False

    def __init__(
        self,
        settings: Settings,
        pool: Pool,
        make_controller: Callable[[WorkerSource], ReplicaController],
        **adapters: Unpack[Adapters],
    ) -> None:
        super().__init__(Runtime.from_settings(settings, **adapters))
        self.pool = pool
        controller = make_controller(self.live_workers)
        self.scaler = Scaler(self.runtime, pool=pool, controller=controller)
        self.name = f"dragoman scaler of pool {pool}"

    async def live_workers(self) -> list[WorkerInfo]:
        ttl = timedelta(seconds=self.settings.worker_ttl_s)
        return await self.runtime.registry.live_workers(self.pool, self.clock.now() - ttl)

    def begin(self) -> None:
        self.scaler.start()

    def running(self) -> bool:
        return self.scaler.alive()

    async def end(self) -> None:
        await self.scaler.stop()
        await self.scaler.controller.close()  # local worker processes drain and exit
