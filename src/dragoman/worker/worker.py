"""BatchWorker: one job at a time, from its pool's queue.

For each job: translate the segments still missing in chunks, commit each chunk's results
(fenced by the attempt), heartbeat all along, report the outcome to the watchdog, **then**
ack. A crash before the ack leaves the message to be redelivered; the chunks already
committed are not translated again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from dragoman.bus import WATCHDOG_QUEUE, Bus, Delivery, work_queue
from dragoman.clock import Clock
from dragoman.engines import Pair
from dragoman.engines.registry import Engines
from dragoman.errors import ClientError, DragomanError, TransientError
from dragoman.metrics import Metrics
from dragoman.models import IN_FLIGHT, Job, JobStatus, Pool
from dragoman.settings import Settings
from dragoman.store import JobStore

log = logging.getLogger(__name__)

T = TypeVar("T")


class _Stopped(Exception):
    """The attempt is no longer current (cancelled, or retried elsewhere)."""


class BatchWorker:
    def __init__(
        self,
        *,
        name: str,
        pool: Pool,
        settings: Settings,
        store: JobStore,
        bus: Bus,
        engines: Engines,
        clock: Clock,
        metrics: Metrics,
    ) -> None:
        self.name = name
        self.pool = pool
        self._settings = settings
        self._store = store
        self._bus = bus
        self._engines = engines
        self._clock = clock
        self._metrics = metrics
        self.busy_with: str | None = None
        self._draining = asyncio.Event()
        self._holding = False

    async def run(self) -> None:
        """Consumes until drained; the job in hand is always finished first. A store or
        broker that goes away only pauses it."""
        while not self._draining.is_set():
            try:
                async for delivery in self._bus.consume(work_queue(self.pool)):
                    self._holding = True
                    try:
                        await self._settle(delivery)
                    finally:
                        self._holding = False
                    if self._draining.is_set():
                        return
            except TransientError as exc:
                # Unacked, the delivery goes back to the broker when the channel closes.
                log.warning("worker %s pauses: %s", self.name, exc)
            await asyncio.sleep(self._settings.heartbeat_interval_s)

    async def _settle(self, delivery: Delivery) -> None:
        body = delivery.body
        try:
            job_id, attempt = str(body["job_id"]), int(body["attempt"])
        except (KeyError, ValueError, TypeError):
            log.error("worker %s: malformed message %r dead-lettered", self.name, body)
            await delivery.reject()
            return
        await self.process(job_id, attempt)
        await delivery.ack()

    @property
    def idle(self) -> bool:
        return not self._holding

    async def drain(self, task: asyncio.Task[None]) -> None:
        """Stops taking jobs; returns once the job in hand (if any) is finished and acked."""
        self._draining.set()
        if not self._holding:
            task.cancel()  # waiting for a message: nothing is in hand
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def process(self, job_id: str, attempt: int) -> None:
        job = await self._stored(self._store.get, job_id)
        if job is None or job.status not in IN_FLIGHT or job.attempts != attempt:
            log.info("worker %s: skipping stale message for job %s", self.name, job_id)
            return
        self.busy_with = job_id
        try:
            outcome = await self._attempt(job, attempt)
        finally:
            self.busy_with = None
        if outcome is not None:
            await self._report(outcome)

    async def _report(self, outcome: dict[str, Any]) -> None:
        """Tells the watchdog, waiting out a broker restart: the ack follows the report."""
        while True:
            try:
                await self._bus.publish(WATCHDOG_QUEUE, {"type": "done", **outcome})
                return
            except TransientError as exc:
                log.warning("worker %s: report of job %s waits: %s", self.name, outcome, exc)
                await asyncio.sleep(self._settings.heartbeat_interval_s)

    async def _stored(self, call: Callable[..., Awaitable[T]], *args: Any) -> T:
        """A store call, retried while the database is away, for up to the heartbeat
        timeout (after that the watchdog would give the attempt to another worker anyway)."""
        waited = 0.0
        pause = min(0.5, self._settings.heartbeat_interval_s)
        while True:
            try:
                return await call(*args)
            except TransientError:
                if waited >= self._settings.heartbeat_timeout_s:
                    raise
                await asyncio.sleep(pause)
                waited += pause

    async def _attempt(self, job: Job, attempt: int) -> dict[str, Any] | None:
        report: dict[str, Any] = {"job_id": job.id, "attempt": attempt}
        # Claiming makes deliveries at-least-once safe: a redelivered message of an attempt
        # that a worker already holds (a broker restart, RabbitMQ's consumer_timeout) is
        # dropped; a silent holder is the watchdog's to retry with a new attempt.
        if not await self._stored(self._store.claim, job.id, attempt, self._clock.now()):
            current = await self._stored(self._store.get, job.id)
            if current is not None and current.status is JobStatus.CANCELLED:
                return {**report, "status": JobStatus.CANCELLED.value}
            log.info("job %s attempt %d is claimed already; delivery dropped", job.id, attempt)
            return None
        log.info("job %s running on worker %s (attempt %d)", job.id, self.name, attempt)
        work = asyncio.create_task(self._translate(job, attempt))
        beats = asyncio.create_task(self._heartbeat(job.id, attempt, work))
        try:
            await work
            return {**report, "status": JobStatus.SUCCEEDED.value}
        except _Stopped:
            return {**report, "status": JobStatus.CANCELLED.value}
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this worker is being shut down, not the job cancelled
            return {**report, "status": JobStatus.CANCELLED.value}
        except Exception as exc:
            return {**report, **self._failure(job.id, attempt, exc)}
        finally:
            # Both tasks end here, not in the background: a translation cut short must hand
            # its pipeline back before the engine is closed or the next job starts.
            work.cancel()
            beats.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.gather(work, beats, return_exceptions=True)

    @staticmethod
    def _failure(job_id: str, attempt: int, exc: Exception) -> dict[str, Any]:
        if isinstance(exc, DragomanError):
            code, message = exc.code, exc.message
        else:
            log.exception("job %s attempt %d: unexpected error", job_id, attempt)
            code, message = "internal_error", f"{type(exc).__name__}: {exc}"
        # Bad input fails at once; an engine or unexpected fault may be the process's rather
        # than the job's, so the watchdog retries it while attempts remain.
        retryable = not isinstance(exc, ClientError)
        log.warning("job %s attempt %d failed: %s", job_id, attempt, message)
        return {
            "status": JobStatus.FAILED.value,
            "retryable": retryable,
            "error": {"code": code, "message": message},
        }

    async def _translate(self, job: Job, attempt: int) -> None:
        pair = Pair(job.source_lang, job.target_lang)
        pending = await self._stored(self._store.sources, job.id)
        size = self._settings.chunk_segments
        for start in range(0, len(pending), size):
            chunk = pending[start : start + size]
            began = time.perf_counter()
            texts = await self._engines.translate(job.engine, pair, [text for _, text in chunk])
            self._metrics.observe_batch(job.engine, len(chunk), time.perf_counter() - began)
            results = [(pos, out) for (pos, _), out in zip(chunk, texts, strict=True)]
            written = await self._stored(
                self._store.write_results, job.id, attempt, results, self._clock.now()
            )
            if not written:
                raise _Stopped
            self._metrics.segments_translated.labels(job.engine, self.pool).inc(len(chunk))

    async def _heartbeat(self, job_id: str, attempt: int, work: asyncio.Task[None]) -> None:
        """Beats until the work ends; cancels the work when the attempt stops being current."""
        while not work.done():
            await asyncio.sleep(self._settings.heartbeat_interval_s)
            try:
                status = await self._store.heartbeat(job_id, attempt, self._clock.now())
            except DragomanError:
                continue  # the store is down; the next beat retries
            if status is not JobStatus.RUNNING:
                work.cancel()
                return
