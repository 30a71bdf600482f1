"""The processes of the distributed deployment, each over the store and the bus.

- ``ApiService`` (``dragoman api``): the HTTP API; stores jobs and tells the watchdog.
- ``WatchdogService`` (``dragoman watchdog``): dispatches, relays and sweeps while it holds
  the ``watchdog`` lease in the store; a second one waits as a hot standby.
- ``WorkerService`` (``dragoman worker --pool``): one worker; SIGTERM drains it.

``EmbeddedService`` (``dragoman serve``) is the API with the watchdog and workers in-process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta

from dragoman.bus import Bus, open_bus
from dragoman.clock import Clock, SystemClock
from dragoman.engines import Engine
from dragoman.engines.apertium import ApertiumEngine
from dragoman.engines.ct2 import CTranslate2Engine
from dragoman.engines.hf import TransformersEngine
from dragoman.engines.models import ModelCache
from dragoman.engines.registry import Engines
from dragoman.errors import TransientError
from dragoman.metrics import Metrics
from dragoman.models import Pool
from dragoman.scaling import ReplicaController, WorkerInfo
from dragoman.scaling.registry import Registration
from dragoman.scaling.scaler import Scaler
from dragoman.service.batcher import DynamicBatcher
from dragoman.service.manager import BatchRequestsManager, BusIntake, Intake
from dragoman.service.queue import BatchRequestsQueue
from dragoman.settings import Settings
from dragoman.store import JobStore, open_store
from dragoman.watchdog import Watchdog
from dragoman.worker import BatchWorker

log = logging.getLogger(__name__)

WATCHDOG_LEASE = "watchdog"

WorkerSource = Callable[[], Awaitable[list[WorkerInfo]]]


def default_engines(settings: Settings, pool: Pool = Pool.CPU) -> Engines:
    """The engines of one process, the pair's default first (``engine_order``). Neural
    models load on first use, on the CPU for the CPU pool and on ``gpu_device`` for the GPU
    pool, into one cache per process under ``model_memory_mb``."""
    on_cpu = pool is Pool.CPU
    device = "cpu" if on_cpu else settings.gpu_device
    cache = ModelCache(settings.model_memory_mb * 2**20)
    built: dict[str, Engine] = {
        "ctranslate2": CTranslate2Engine(
            settings.models_dir,
            cache=cache,
            device=device,
            compute_type=settings.ct2_compute_type if on_cpu else settings.ct2_gpu_compute_type,
            threads=settings.neural_threads,
            batch_tokens=settings.neural_batch_tokens if on_cpu else settings.gpu_batch_tokens,
            max_output_tokens=settings.neural_max_output_tokens,
        ),
        "transformers": TransformersEngine(
            settings.models_dir,
            cache=cache,
            device=device,
            dtype="float32" if on_cpu else settings.transformers_gpu_dtype,
            batch_tokens=settings.neural_batch_tokens if on_cpu else settings.gpu_batch_tokens,
            max_output_tokens=settings.neural_max_output_tokens,
        ),
        "apertium": ApertiumEngine(
            settings.apertium_modes_dir,
            pipelines_per_pair=settings.apertium_pipelines_per_pair,
            max_uses=settings.apertium_max_uses,
            read_timeout_s=settings.apertium_read_timeout_s,
            idle_shutdown_s=settings.apertium_idle_shutdown_s,
        ),
    }
    order = [name for name in settings.engine_preference if name in built]
    order += [name for name in built if name not in order]
    return Engines(built[name] for name in order)


class _Base:
    """Store, bus, clock and metrics, opened and closed in one order."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: JobStore | None = None,
        bus: Bus | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock or SystemClock()
        self.metrics = Metrics()
        self.store = store or open_store(settings.resolved_database_url)
        self.bus = bus or open_bus(settings.broker_url, prefix=settings.queue_prefix)

    async def _open(self) -> None:
        await self.store.open()
        await self.bus.open()

    async def _close(self) -> None:
        await self.bus.close()
        await self.store.close()

    def alive(self) -> bool:
        """False once a part that should run forever has died (liveness fails)."""
        return True

    def refresh_gauges(self) -> None:
        """Brings gauges that are read, not counted, up to date before a scrape."""


class ApiService(_Base):
    def __init__(
        self,
        settings: Settings,
        *,
        engines: Engines | None = None,
        store: JobStore | None = None,
        bus: Bus | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(settings, store=store, bus=bus, clock=clock)
        self.engines = engines or default_engines(settings)
        self.manager = BatchRequestsManager(
            settings=settings,
            store=self.store,
            engines=self.engines,
            intake=self.make_intake(),
            clock=self.clock,
        )
        self.batcher = DynamicBatcher(
            self.engines,
            self.metrics,
            delay_s=settings.sync_batch_delay_s,
            max_segments=settings.sync_batch_max_segments,
        )

    def make_intake(self) -> Intake:
        return BusIntake(self.bus)

    async def start(self) -> None:
        await self._open()
        self.manager.start()
        log.info("dragoman api started")

    async def stop(self) -> None:
        await self.manager.stop()
        await self.batcher.close()
        await self.engines.close()
        await self._close()


class WatchdogService(_Base):
    """Runs the watchdog while it holds the lease; renews it every third of its TTL."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: JobStore | None = None,
        bus: Bus | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(settings, store=store, bus=bus, clock=clock)
        self.holder = f"{settings.worker_host}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.queue = BatchRequestsQueue()
        self.watchdog = Watchdog(
            settings=settings,
            store=self.store,
            bus=self.bus,
            queue=self.queue,
            clock=self.clock,
            metrics=self.metrics,
        )
        self.active = False
        self._leasing: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self._open()
        self._leasing = asyncio.create_task(self._hold_lease(), name="watchdog-lease")
        log.info("dragoman watchdog %s started", self.holder)

    async def _hold_lease(self) -> None:
        ttl = self.settings.lease_ttl_s
        renewed = time.monotonic()
        while True:
            try:
                held = await self.store.acquire_lease(
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

    def alive(self) -> bool:
        return self._leasing is not None and not self._leasing.done()

    def refresh_gauges(self) -> None:
        for pool in Pool:
            self.metrics.queue_depth.labels(pool.value).set(self.queue.depth(pool))
            self.metrics.in_flight.labels(pool.value).set(self.watchdog.in_flight(pool))

    async def stop(self) -> None:
        if self._leasing is not None:
            self._leasing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._leasing
        if self.active:
            await self.watchdog.stop()
            self.active = False
        await self._close()


class WorkerService(_Base):
    """One worker of one pool; ``stop`` drains it (the job in hand is finished first)."""

    def __init__(
        self,
        settings: Settings,
        pool: Pool,
        *,
        engines: Engines | None = None,
        store: JobStore | None = None,
        bus: Bus | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(settings, store=store, bus=bus, clock=clock)
        self.pool = pool
        self.engines = engines or default_engines(settings, pool)
        self.worker = BatchWorker(
            name=f"{pool}-{settings.worker_host}-{os.getpid()}",
            pool=pool,
            settings=settings,
            store=self.store,
            bus=self.bus,
            engines=self.engines,
            clock=self.clock,
            metrics=self.metrics,
        )
        self.registration = Registration(
            self.worker,
            store=self.store,
            engines=self.engines,
            clock=self.clock,
            host=settings.worker_host,
            interval_s=settings.heartbeat_interval_s,
        )
        self._running: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self._open()
        self._running = asyncio.create_task(self.worker.run(), name=f"worker-{self.worker.name}")
        await self.registration.start()
        log.info("dragoman worker %s started", self.worker.name)

    def alive(self) -> bool:
        return self._running is not None and not self._running.done()

    async def stop(self) -> None:
        if self._running is not None:
            log.info("worker %s draining", self.worker.name)
            await self.worker.drain(self._running)
        await self.registration.stop()
        await self.engines.close()
        await self._close()
        log.info("worker %s stopped", self.worker.name)


class ScalerService(_Base):
    """``dragoman scaler``: one pool's autoscaler over a process or Kubernetes backend."""

    def __init__(
        self,
        settings: Settings,
        pool: Pool,
        make_controller: Callable[[WorkerSource], ReplicaController],
        *,
        store: JobStore | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(settings, store=store, bus=None, clock=clock)
        self.pool = pool
        self.scaler = Scaler(
            pool=pool,
            settings=settings,
            store=self.store,
            controller=make_controller(self.live_workers),
            metrics=self.metrics,
            clock=self.clock,
        )

    async def live_workers(self) -> list[WorkerInfo]:
        ttl = timedelta(seconds=self.settings.worker_ttl_s)
        return await self.store.live_workers(self.pool, self.clock.now() - ttl)

    async def start(self) -> None:
        await self._open()
        self.scaler.start()
        log.info("dragoman scaler of pool %s started", self.scaler.pool)

    def alive(self) -> bool:
        return self.scaler.alive()

    async def stop(self) -> None:
        await self.scaler.stop()
        close = getattr(self.scaler.controller, "close", None)
        if close is not None:
            await close()  # local worker processes drain and exit
        await self._close()
