"""How a stored job reaches the dispatcher (the watchdog): straight into its queue when it
runs in this process, over the bus when it runs in another."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from dragoman.bus import Bus
from dragoman.errors import TransientError
from dragoman.messages import WATCHDOG_QUEUE, Queued
from dragoman.models import Job
from dragoman.queue import BatchRequestsQueue, Waiting

log = logging.getLogger(__name__)


class Intake(Protocol):
    """How a stored job reaches the dispatcher (the watchdog)."""

    async def queued(self, job: Job) -> None: ...

    def withdrawn(self, job_id: str) -> None:
        """The job was cancelled while it waited."""
        ...


class LocalIntake:
    """Same process as the watchdog: straight into its queue."""

    def __init__(self, queue: BatchRequestsQueue, wake: Callable[[], None]) -> None:
        self._queue = queue
        self._wake = wake

    async def queued(self, job: Job) -> None:
        self._queue.push(Waiting.of(job))
        self._wake()

    def withdrawn(self, job_id: str) -> None:
        self._queue.remove(job_id)


class BusIntake:
    """Another process runs the watchdog: tell it over the bus. The job is stored already,
    so a lost notice only delays it until the watchdog's next sweep reloads the queue."""

    def __init__(self, bus: Bus) -> None:
        self._bus = bus

    async def queued(self, job: Job) -> None:
        try:
            await self._bus.publish(WATCHDOG_QUEUE, Queued.of(job).to_body())
        except TransientError as exc:
            log.warning("job %s stored; its notice to the watchdog was lost: %s", job.id, exc)

    def withdrawn(self, job_id: str) -> None:
        """The watchdog skips a cancelled job when its turn comes."""
