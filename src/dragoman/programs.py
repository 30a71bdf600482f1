"""What every program of ``services.py`` is: a ``Program`` over one ``Runtime``, its parts
reachable by name; and how the four programs of the distributed deployment start
(``Distributed``): in the background, so that the process answers its probes while it waits
for PostgreSQL and RabbitMQ, which Kubernetes may start after it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from dragoman.bus import Bus
from dragoman.clock import Clock
from dragoman.errors import TransientError
from dragoman.metrics import Metrics
from dragoman.runtime import Runtime
from dragoman.settings import Settings
from dragoman.store import JobStore

log = logging.getLogger(__name__)


class Program:
    """A program over one runtime; the shared parts are reachable by name."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    @property
    def store(self) -> JobStore:
        return self.runtime.store

    @property
    def bus(self) -> Bus:
        return self.runtime.bus

    @property
    def clock(self) -> Clock:
        return self.runtime.clock

    @property
    def metrics(self) -> Metrics:
        return self.runtime.metrics

    def alive(self) -> bool:
        """False once a part that should run forever has died (liveness fails)."""
        return True

    async def ready(self) -> None:
        """Raises ``TransientError`` unless the store and the bus answer."""
        await self.runtime.database.ping()
        try:
            await self.bus.ping()
        except Exception as exc:
            raise TransientError(f"message bus unavailable: {exc}") from None

    def refresh_gauges(self) -> None:
        """Brings gauges that are read, not counted, up to date before a scrape."""


class Distributed(Program):
    """A program of the distributed deployment. ``start`` returns at once; in the background
    the store and the bus (unless ``uses_bus`` is false) are tried again with backoff until
    they answer, however long that takes, then ``begin`` starts the roles. Until then the
    program is alive but not ready: the probes say so, and ``stop`` ends the wait at once.
    A start-up that fails otherwise (a bad schema, a refused password) is logged, and
    ``on_start_failure`` is called: the command ends the process then."""

    uses_bus = True
    name = "dragoman"

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(runtime)
        self._starting: asyncio.Task[None] | None = None
        self.start_failure: BaseException | None = None
        self.on_start_failure: Callable[[], None] = lambda: None

    def begin(self) -> None:
        """Starts the roles, once the store and the bus answer."""

    def running(self) -> bool:
        """False once a part that should run forever has died (after ``begin``)."""
        return True

    async def end(self) -> None:
        """Stops what ``begin`` started, and releases what the program holds even if it
        never began (engines, controllers); the runtime is closed after."""

    async def start(self) -> None:
        self._starting = asyncio.create_task(self._start(), name=f"{self.name}-start")

    async def _start(self) -> None:
        try:
            await self.runtime.open(bus=self.uses_bus, retry=True)
            self.begin()
        except Exception as exc:
            log.exception("%s could not start", self.name)
            self.start_failure = exc
            self.on_start_failure()
            return
        log.info("%s started", self.name)

    @property
    def started(self) -> bool:
        task = self._starting
        return (
            task is not None and task.done() and not task.cancelled() and self.start_failure is None
        )

    async def wait_started(self) -> None:
        """Returns once the program has begun; ``RuntimeError`` if it could not."""
        if self._starting is None:
            raise RuntimeError(f"{self.name} was not started")
        await asyncio.shield(self._starting)
        if self.start_failure is not None:
            raise RuntimeError(f"{self.name} could not start: {self.start_failure}")

    def alive(self) -> bool:
        if self._starting is None or not self._starting.done():
            return True  # waiting for the store or the bus: nothing to restart for
        return self.started and self.running()

    async def ready(self) -> None:
        if self.start_failure is not None:
            raise TransientError(f"{self.name} could not start: {self.start_failure}")
        if not self.started:
            needs = "the store and the message bus" if self.uses_bus else "the store"
            raise TransientError(f"{self.name} is starting: waiting for {needs}")
        if self.uses_bus:
            await super().ready()
        else:
            await self.runtime.database.ping()

    async def stop(self) -> None:
        starting = self._starting
        if starting is not None and not starting.done():
            starting.cancel()
        if starting is not None:
            await asyncio.wait([starting])  # the wait for the store or the bus is over
        await self.end()
        await self.runtime.close(bus=self.uses_bus)
