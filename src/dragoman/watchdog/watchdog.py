"""Watchdog: hands queued jobs to their pool's workers while capacity allows, relays the
workers' completions, and retries (or fails) jobs whose heartbeats stop. It also relays
requests between services (``dragoman.relay``).

Its state is the store's: in-flight jobs are rows with a heartbeat deadline, so a restarted
watchdog adopts every open job. The in-memory ``_in_flight`` map only mirrors the store for
capacity accounting and the queue only orders the store's queued jobs; both are rebuilt from
the store on every sweep, so a lost notification delays a job by one sweep at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from dragoman.bus import WATCHDOG_QUEUE, Bus, Message, work_queue
from dragoman.clock import Clock
from dragoman.errors import TransientError
from dragoman.models import IN_FLIGHT, Job, JobError, JobStatus, Pool, Priority
from dragoman.service.queue import BatchRequestsQueue, Waiting
from dragoman.settings import Settings
from dragoman.store import JobStore
from dragoman.watchdog.relay import Relay

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Flight:
    pool: Pool
    attempt: int
    since: float = field(default_factory=time.monotonic)


class Watchdog:
    def __init__(
        self,
        *,
        settings: Settings,
        store: JobStore,
        bus: Bus,
        queue: BatchRequestsQueue,
        clock: Clock,
        on_dispatch: Callable[[], None] = lambda: None,
        reload_each_sweep: bool = True,
    ) -> None:
        # Jobs reach the queue by notices over the bus, which can be lost; an in-process
        # intake cannot lose them, so the store's queued jobs are read once, at start.
        self._reload_each_sweep = reload_each_sweep
        self._settings = settings
        self._on_dispatch = on_dispatch
        self._store = store
        self._bus = bus
        self._queue = queue
        self._clock = clock
        self._in_flight: dict[str, _Flight] = {}
        self._wakeup = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.relay = Relay(
            store=store, bus=bus, clock=clock, timeout_s=settings.heartbeat_timeout_s
        )

    # -- capacity -------------------------------------------------------------------------

    def in_flight(self, pool: Pool) -> int:
        return sum(1 for flight in self._in_flight.values() if flight.pool is pool)

    def _has_room(self, pool: Pool) -> bool:
        return self.in_flight(pool) < self._settings.max_workers(pool)

    def wake(self) -> None:
        self._wakeup.set()

    async def dispatch(self) -> int:
        """Submits queued jobs while each pool has room; returns how many."""
        sent = 0
        for pool in Pool:
            while self._has_room(pool):
                waiting = self._queue.pop(pool)
                if waiting is None:
                    break
                if await self._submit(waiting):
                    sent += 1
        if sent:
            self._on_dispatch()
        return sent

    async def _submit(self, waiting: Waiting) -> bool:
        job = await self._store.mark_submitted(waiting.job_id, self._clock.now())
        if job is None:  # cancelled while it waited
            return False
        self._in_flight[job.id] = _Flight(job.pool, job.attempts)
        # Committed first, published second: if the publish is lost (a crash, the broker
        # down), the job stays submitted and unclaimed, and the sweep publishes it again.
        await self._publish_work(job)
        log.info("job %s submitted to pool %s (attempt %d)", job.id, job.pool, job.attempts)
        return True

    async def _publish_work(self, job: Job) -> None:
        await self._bus.publish(work_queue(job.pool), {"job_id": job.id, "attempt": job.attempts})

    async def republish(self, jobs: list[Job]) -> int:
        """Publishes submitted jobs again: the broker may have lost their messages. A worker
        drops a second delivery of an attempt that is claimed already."""
        sent = 0
        now = self._clock.now()
        for job in jobs:
            if await self._store.resubmit(job.id, job.attempts, now):
                await self._publish_work(job)
                sent += 1
        if sent:
            log.info("%d submitted jobs published again", sent)
        return sent

    async def reload(self) -> int:
        """Puts the store's queued jobs in the queue (those already there are kept)."""
        added = 0
        for job in await self._store.in_status([JobStatus.QUEUED]):
            if job.id not in self._queue:
                self._queue.push(Waiting(job.id, job.pool, job.priority, job.tenant))
                added += 1
        return added

    # -- completions ----------------------------------------------------------------------

    async def handle(self, message: Message) -> None:
        """A message on the watchdog's queue: a worker's report ``{"type": "done", "job_id",
        "attempt", "status", "error"}``, an API's ``{"type": "queued", "job_id", "pool",
        "priority", "tenant"}``, or a relayed request's traffic (``relay.*``)."""
        kind = str(message.get("type", ""))
        if kind == "done":
            await self._done(message)
        elif kind == "queued":
            self._queue.push(
                Waiting(
                    str(message["job_id"]),
                    Pool(message["pool"]),
                    Priority(message["priority"]),
                    message.get("tenant"),
                )
            )
            self.wake()
        elif kind.startswith("relay."):
            await self.relay.handle(message)
        else:
            log.error("unknown message on the watchdog's queue dropped: %r", message)

    async def _done(self, message: Message) -> None:
        job_id, attempt = str(message["job_id"]), int(message["attempt"])
        # The store fences every write below by attempt: a stale report changes nothing.
        flight = self._in_flight.get(job_id)
        if flight is not None and flight.attempt == attempt:
            del self._in_flight[job_id]
        status = JobStatus(message["status"])
        error = message.get("error")
        job_error = JobError(error["code"], error["message"]) if error else None
        now = self._clock.now()
        if status is JobStatus.SUCCEEDED:
            if await self._store.finish(job_id, attempt, status, None, now):
                log.info("job %s succeeded", job_id)
        elif status is JobStatus.FAILED and message.get("retryable") and job_error:
            await self._retry_or_fail(job_id, attempt, job_error)
        elif status is JobStatus.FAILED and await self._store.finish(
            job_id, attempt, status, job_error, now
        ):
            log.info("job %s failed: %s", job_id, job_error.message if job_error else "")
        self.wake()

    async def _retry_or_fail(self, job_id: str, attempt: int, error: JobError) -> None:
        now = self._clock.now()
        if attempt < self._settings.max_attempts:
            if await self._store.requeue(job_id, attempt, now):
                job = await self._store.get(job_id)
                if job is not None:
                    self._queue.push(Waiting(job.id, job.pool, job.priority, job.tenant))
                log.info(
                    "job %s will be retried after attempt %d: %s", job_id, attempt, error.message
                )
            return
        reason = JobError(error.code, f"{error.message} (gave up after {attempt} attempts)")
        if await self._store.finish(job_id, attempt, JobStatus.FAILED, reason, now):
            log.info("job %s failed: %s", job_id, reason.message)

    # -- heartbeats -----------------------------------------------------------------------

    async def sweep(self) -> None:
        """Retries or fails jobs whose heartbeats stopped; re-syncs capacity with the store."""
        now = self._clock.now()
        deadline = now - timedelta(seconds=self._settings.heartbeat_timeout_s)
        for job in await self._store.stale(deadline):
            self._in_flight.pop(job.id, None)
            silence = JobError(
                "heartbeat_timeout",
                f"no heartbeat for {self._settings.heartbeat_timeout_s:g}s",
            )
            await self._retry_or_fail(job.id, job.attempts, silence)
        await self.republish(await self._store.unclaimed(deadline))
        await self.relay.sweep()
        if self._reload_each_sweep:
            await self.reload()
        began = time.monotonic()
        flying = await self._store.in_status(sorted(IN_FLIGHT))
        # Keep what was dispatched while the query ran: the snapshot cannot know it yet.
        recent = {k: v for k, v in self._in_flight.items() if v.since >= began}
        self._in_flight = {job.id: _Flight(job.pool, job.attempts) for job in flying}
        self._in_flight.update(recent)
        self.wake()

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        # Recovery: a previous watchdog may have died between committing a submission and
        # publishing it, so every submitted job is published again.
        await self.republish(await self._store.in_status([JobStatus.SUBMITTED]))
        await self.reload()
        await self.sweep()
        self._tasks = [
            asyncio.create_task(self._dispatch_forever(), name="watchdog-dispatch"),
            asyncio.create_task(self._listen_forever(), name="watchdog-listen"),
            asyncio.create_task(self._sweep_forever(), name="watchdog-sweep"),
        ]

    async def _dispatch_forever(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            try:
                await self.dispatch()
            except Exception:
                log.exception("dispatch failed; will retry")
                await asyncio.sleep(self._settings.sweep_interval_s)
                self.wake()

    async def _listen_forever(self) -> None:
        while True:
            try:
                async for delivery in self._bus.consume(WATCHDOG_QUEUE):
                    try:
                        await self.handle(delivery.body)
                    except TransientError:
                        # The store or the broker is away: leave the message unacked and
                        # consume again, which hands it back for a later try.
                        log.warning("handling %s deferred: store or broker away", delivery.body)
                        break
                    except Exception:
                        log.exception("handling %s failed; dead-lettered", delivery.body)
                        await delivery.reject()
                        continue
                    await delivery.ack()
            except Exception:
                log.exception("consuming the watchdog's queue failed; will retry")
            await asyncio.sleep(self._settings.sweep_interval_s)

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self._settings.sweep_interval_s)
            try:
                await self.sweep()
            except Exception:
                log.exception("sweep failed; will retry")

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
