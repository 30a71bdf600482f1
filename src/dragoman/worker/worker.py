"""BatchWorker: one message at a time from its pool's queue (or its private queue, where
the watchdog routes work whose model this worker has warm).

A message names one job (or shard), or several small jobs of one pair and engine that run
as one engine batch. For each job: translate the segments still missing in chunks, commit
each job's results (fenced by its attempt), heartbeat every job all along, report each
outcome to the watchdog, **then** ack. A crash before the ack leaves the message to be
redelivered; the chunks already committed are not translated again. Jobs of one batch keep
apart: their own results, progress, heartbeats, status and cancellation.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from dragoman.bus import Delivery
from dragoman.engines import Engines, Pair
from dragoman.errors import ClientError, DragomanError, TransientError
from dragoman.glossaries import Terminology
from dragoman.messages import WATCHDOG_QUEUE, Attempt, Done, Work, work_queue, worker_queue
from dragoman.models import IN_FLIGHT, Job, JobError, JobStatus, Pool
from dragoman.reuse import Reuse
from dragoman.runtime import Runtime
from dragoman.worker.registration import Registration

log = logging.getLogger(__name__)

T = TypeVar("T")


class _Stopped(Exception):
    """No attempt of the batch is current any more (cancelled, or retried elsewhere)."""


@dataclass(slots=True)
class _Unit:
    """One job's attempt inside the message being worked on."""

    job: Job
    attempt: int
    stopped: bool = False


class BatchWorker:
    def __init__(self, runtime: Runtime, *, name: str, pool: Pool, engines: Engines) -> None:
        self.name = name
        self.pool = pool
        self._settings = runtime.settings
        self._store = runtime.store
        self._bus = runtime.bus
        self._clock = runtime.clock
        self._metrics = runtime.metrics
        self._engines = engines
        self._registration = Registration(self, runtime, warm_models=engines.warm_models)
        self._reuse = Reuse(runtime, engines=engines)
        self._terminology = Terminology(runtime, engines=engines)  # glossaries, kept by id
        self.busy_with: str | None = None
        self._draining = asyncio.Event()
        self._holding = False

    async def run(self) -> None:
        """Consumes until drained; the job in hand is always finished first. A store or
        broker that goes away only pauses it. The worker is in the registry meanwhile."""
        self._registration.start()
        try:
            await self._consume()
        finally:
            await self._registration.stop()

    async def _consume(self) -> None:
        while not self._draining.is_set():
            try:
                deliveries = self._bus.consume(
                    work_queue(self.pool), private=worker_queue(self.name)
                )
                async for delivery in deliveries:
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
        try:
            work = Work.from_body(delivery.body)
        except ValueError:
            log.error("worker %s: malformed message %r dead-lettered", self.name, delivery.body)
            await delivery.reject()
            return
        await self.process(work.attempts)
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

    async def process(self, attempts: Sequence[Attempt]) -> None:
        """Works on the given attempts as one batch, then reports each outcome."""
        current: list[_Unit] = []
        for job_id, attempt in ((a.job_id, a.attempt) for a in attempts):
            job = await self._stored(self._store.get, job_id)
            if job is None or job.status not in IN_FLIGHT or job.attempts != attempt:
                log.info("worker %s: skipping stale message for job %s", self.name, job_id)
                continue
            current.append(_Unit(job, attempt))
        if not current:
            return
        self.busy_with = current[0].job.id
        try:
            outcomes = await self._attempt(current)
        finally:
            self.busy_with = None
        for outcome in outcomes:
            await self._report(outcome)

    async def _report(self, outcome: Done) -> None:
        """Tells the watchdog, waiting out a broker restart: the ack follows the report."""
        while True:
            try:
                await self._bus.publish(WATCHDOG_QUEUE, outcome.to_body())
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

    async def _claimed(self, units: list[_Unit]) -> tuple[list[_Unit], list[Done]]:
        """The units this worker now holds, and reports for those cancelled meanwhile."""
        held: list[_Unit] = []
        reports: list[Done] = []
        now = self._clock.now()
        for unit in units:
            job = unit.job
            # Claiming makes deliveries at-least-once safe: a redelivered message of an
            # attempt that a worker already holds (a broker restart, RabbitMQ's
            # consumer_timeout) is dropped; a silent holder is the watchdog's to retry.
            if await self._stored(self._store.claim, job.id, unit.attempt, now):
                held.append(unit)
                continue
            current = await self._stored(self._store.get, job.id)
            if current is not None and current.status is JobStatus.CANCELLED:
                reports.append(self._outcome(unit, JobStatus.CANCELLED))
            else:
                log.info("job %s attempt %d is claimed already; dropped", job.id, unit.attempt)
        return held, reports

    @staticmethod
    def _outcome(unit: _Unit, status: JobStatus) -> Done:
        return Done(unit.job.id, unit.attempt, status)

    async def _attempt(self, units: list[_Unit]) -> list[Done]:
        held, reports = await self._claimed(units)
        if not held:
            return reports
        for unit in held:
            log.info(
                "job %s running on worker %s (attempt %d, %d in batch)",
                unit.job.id,
                self.name,
                unit.attempt,
                len(held),
            )
        work = asyncio.create_task(self._translate(held))
        beats = asyncio.create_task(self._heartbeat(held, work))
        try:
            await work
            return reports + [
                self._outcome(u, JobStatus.CANCELLED if u.stopped else JobStatus.SUCCEEDED)
                for u in held
            ]
        except _Stopped:
            return reports + [self._outcome(u, JobStatus.CANCELLED) for u in held]
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this worker is being shut down, not the jobs cancelled
            return reports + [self._outcome(u, JobStatus.CANCELLED) for u in held]
        except Exception as exc:
            # One job's bad segment would fail its batch mates: a batch's failure is
            # retried, and the watchdog runs retried jobs alone.
            alone = len(held) == 1
            return reports + [
                self._outcome(u, JobStatus.CANCELLED) if u.stopped else self._failure(u, exc, alone)
                for u in held
            ]
        finally:
            # Both tasks end here, not in the background: a translation cut short must hand
            # its pipeline back before the engine is closed or the next job starts.
            # A shutdown that lands during this wait must not be swallowed (the worker would
            # then wait for its next message forever): wait for both, then stop as asked.
            work.cancel()
            beats.cancel()
            both = asyncio.gather(work, beats, return_exceptions=True)
            try:
                await asyncio.shield(both)
            except asyncio.CancelledError:
                await both
                raise

    @staticmethod
    def _failure(unit: _Unit, exc: Exception, alone: bool) -> Done:
        job_id, attempt = unit.job.id, unit.attempt
        if isinstance(exc, DragomanError):
            code, message = exc.code, exc.message
        else:
            log.exception("job %s attempt %d: unexpected error", job_id, attempt)
            code, message = "internal_error", f"{type(exc).__name__}: {exc}"
        # Bad input fails at once; an engine or unexpected fault may be the process's rather
        # than the job's, so the watchdog retries it while attempts remain.
        retryable = not (alone and isinstance(exc, ClientError))
        log.warning("job %s attempt %d failed: %s", job_id, attempt, message)
        return Done(job_id, attempt, JobStatus.FAILED, retryable, JobError(code, message))

    async def _translate(self, units: list[_Unit]) -> None:
        first = units[0].job
        engine, pair = first.engine, Pair(first.source_lang, first.target_lang)
        pending: list[tuple[_Unit, int, str]] = []
        for unit in units:
            for position, text in await self._stored(self._store.sources, unit.job.id):
                pending.append((unit, position, text))
        size = self._settings.chunk_size(self.pool)
        for start in range(0, len(pending), size):
            chunk = [item for item in pending[start : start + size] if not item[0].stopped]
            if not chunk:
                continue
            began = time.perf_counter()
            texts = await self._translate_chunk(engine, pair, chunk)
            self._metrics.observe_batch(engine, len(chunk), time.perf_counter() - began)
            self._registration.tally.batch(len(chunk))
            # Segment cache (reuse): the new outputs are stored, the first stored one wins.
            texts = await self._reuse.settle(
                [(None if unit.stopped else unit.job, text) for unit, _, text in chunk], texts
            )
            per_unit: dict[int, list[tuple[int, str]]] = {}
            for (unit, position, _), out in zip(chunk, texts, strict=True):
                per_unit.setdefault(id(unit), []).append((position, out))
            for unit in units:
                results = per_unit.get(id(unit))
                if not results or unit.stopped:
                    continue
                written = await self._stored(
                    self._store.write_results,
                    unit.job.id,
                    unit.attempt,
                    results,
                    self._clock.now(),
                )
                if not written:
                    unit.stopped = True
                    continue
                self._metrics.segments_translated.labels(engine, self.pool).inc(len(results))
                self._registration.tally.translated(len(results))
            if all(unit.stopped for unit in units):
                raise _Stopped

    async def _translate_chunk(
        self, engine: str, pair: Pair, chunk: list[tuple[_Unit, int, str]]
    ) -> list[str]:
        """One engine batch; the segments of file jobs carry inline codes and go their way."""
        # Glossary hook: a chunk with a job that names a glossary keeps each job's terms
        # around the same engine calls (dragoman.glossaries.Terminology.translate).
        if any(unit.job.glossary for unit, _, _ in chunk):
            jobs = [(unit.job, text) for unit, _, text in chunk]
            return await self._terminology.translate(engine, pair, jobs)
        # End of the glossary hook.
        marked = [i for i, (unit, _, _) in enumerate(chunk) if unit.job.markup]
        if not marked:
            return await self._engines.translate(engine, pair, [text for _, _, text in chunk])
        plain = [i for i in range(len(chunk)) if i not in set(marked)]
        out: list[str] = [""] * len(chunk)
        for indices, translate in (
            (marked, self._engines.translate_marked),
            (plain, self._engines.translate),
        ):
            if indices:
                texts = await translate(engine, pair, [chunk[i][2] for i in indices])
                for i, text in zip(indices, texts, strict=True):
                    out[i] = text
        return out

    async def _heartbeat(self, units: list[_Unit], work: asyncio.Task[None]) -> None:
        """Beats for each job until the work ends; a job whose attempt stops being current
        drops out of the batch, and the work is cancelled when none is left."""
        while not work.done():
            await asyncio.sleep(self._settings.heartbeat_interval_s)
            for unit in units:
                if unit.stopped:
                    continue
                try:
                    status = await self._store.heartbeat(
                        unit.job.id, unit.attempt, self._clock.now()
                    )
                except DragomanError:
                    break  # the store is down; the next beat retries
                if status is not JobStatus.RUNNING:
                    unit.stopped = True
            if all(unit.stopped for unit in units):
                work.cancel()
                return
