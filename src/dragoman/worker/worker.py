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
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from dragoman.bus import Delivery
from dragoman.engines import Engines, Pair
from dragoman.errors import ClientError, DragomanError, TransientError
from dragoman.glossaries import Terminology
from dragoman.messages import (
    WATCHDOG_QUEUE,
    Attempt,
    Done,
    Outcomes,
    Work,
    work_queue,
    worker_queue,
)
from dragoman.models import Job, JobError, JobStatus, Output, Pool
from dragoman.reuse import Reuse
from dragoman.runtime import Runtime
from dragoman.store import ChunkWrite
from dragoman.worker.chunks import translate_chunk
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
    def __init__(
        self,
        runtime: Runtime,
        *,
        name: str,
        pool: Pool,
        engines: Engines,
        reuse: Reuse,
        terminology: Terminology,
    ) -> None:
        """``reuse`` and ``terminology`` are the process's, shared by its workers (one
        segment cache writer, one set of compiled glossaries)."""
        self.name = name
        self.pool = pool
        self._settings = runtime.settings
        self._store = runtime.store
        self._bus = runtime.bus
        self._clock = runtime.clock
        self._metrics = runtime.metrics
        self._engines = engines
        self._registration = Registration(self, runtime, warm_models=engines.warm_models)
        self._reuse = reuse
        self._terminology = terminology  # glossaries, kept by id
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
        await asyncio.wait([task])  # a cancellation of the drain itself is raised
        if not task.cancelled():
            task.result()

    async def process(self, attempts: Sequence[Attempt]) -> None:
        """Works on the given attempts as one batch, then reports their outcomes together."""
        units, outcomes = await self._claimed(attempts)
        if units:
            self.busy_with = units[0].job.id
            try:
                outcomes += await self._attempt(units)
            finally:
                self.busy_with = None
        if outcomes:
            await self._report(Outcomes(tuple(outcomes)))

    async def _report(self, outcomes: Outcomes) -> None:
        """Tells the watchdog, waiting out a broker restart: the ack follows the report."""
        while True:
            try:
                await self._bus.publish(WATCHDOG_QUEUE, outcomes.to_body())
                return
            except TransientError as exc:
                log.warning("worker %s: report %s waits: %s", self.name, outcomes, exc)
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

    async def _claimed(self, attempts: Sequence[Attempt]) -> tuple[list[_Unit], list[Done]]:
        """The attempts this worker now holds (one transaction), and reports for those
        cancelled before they could be claimed."""
        # Claiming makes deliveries at-least-once safe: a redelivered message of an attempt
        # that a worker already holds (a broker restart, RabbitMQ's consumer_timeout) is
        # dropped; a silent holder is the watchdog's to retry.
        wanted = [(a.job_id, a.attempt) for a in attempts]
        claimed = await self._stored(self._store.claim_many, wanted, self._clock.now())
        held = [_Unit(job, job.attempts) for job in claimed]
        reports: list[Done] = []
        for job_id, attempt in wanted:
            if job_id in {job.id for job in claimed}:
                continue
            current = await self._stored(self._store.get, job_id)
            if current is not None and current.status is JobStatus.CANCELLED:
                reports.append(Done(job_id, attempt, JobStatus.CANCELLED))
            else:
                log.info("job %s attempt %d is stale or claimed already; dropped", job_id, attempt)
        return held, reports

    @staticmethod
    def _outcome(unit: _Unit, status: JobStatus) -> Done:
        return Done(unit.job.id, unit.attempt, status)

    async def _attempt(self, held: list[_Unit]) -> list[Done]:
        # One line per batch, each job named in it: a line per job cost the loop more than
        # a small job's whole dispatch.
        log.info(
            "running on worker %s: %s",
            self.name,
            ", ".join(f"job {unit.job.id} (attempt {unit.attempt})" for unit in held),
        )
        work = asyncio.create_task(self._translate(held))
        beats = asyncio.create_task(self._heartbeat(held, work))
        try:
            await work
            return [
                self._outcome(u, JobStatus.CANCELLED if u.stopped else JobStatus.SUCCEEDED)
                for u in held
            ]
        except _Stopped:
            return [self._outcome(u, JobStatus.CANCELLED) for u in held]
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this worker is being shut down, not the jobs cancelled
            return [self._outcome(u, JobStatus.CANCELLED) for u in held]
        except Exception as exc:
            # One job's bad segment would fail its batch mates: a batch's failure is
            # retried, and the watchdog runs retried jobs alone.
            alone = len(held) == 1
            return [
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
        sources = await self._stored(self._store.sources_many, [u.job.id for u in units])
        pending = [(u, position, text) for u in units for position, text in sources[u.job.id]]
        size = self._settings.chunk_size(self.pool)
        model = self._engines.model(engine, pair) if pending else None
        for start in range(0, len(pending), size):
            chunk = [item for item in pending[start : start + size] if not item[0].stopped]
            if not chunk:
                continue
            # The glossaries' dictionaries as they are now: the chunk keeps their terms, and
            # its outputs are cached under their versions.
            glossaries = await self._stored(
                self._terminology.resolve, [u.job.options.glossary for u, _, _ in chunk], pair
            )
            began = time.perf_counter()
            outputs = await translate_chunk(
                self._engines,
                functools.partial(self._terminology.translate, resolved=glossaries),
                engine,
                pair,
                [(u.job, text) for u, _, text in chunk],
                shares=self._reuse.caches,
            )
            self._metrics.observe_batch(engine, len(chunk), time.perf_counter() - began)
            self._registration.tally.batch(len(chunk))
            # Segment cache (reuse): the new outputs are stored, the first stored one wins.
            outputs = await self._reuse.settle(
                [(None if unit.stopped else unit.job, text) for unit, _, text in chunk],
                outputs,
                {glossary: loaded.version for glossary, loaded in glossaries.items()},
            )
            await self._write(chunk, outputs, (engine, model))
            if all(unit.stopped for unit in units):
                raise _Stopped

    async def _write(
        self,
        chunk: list[tuple[_Unit, int, str]],
        outputs: list[Output],
        made_by: tuple[str, str | None],
    ) -> None:
        """Commits a chunk's translations, with what made them (``made_by``: the engine and
        its model), every job's in one transaction, each fenced by its own attempt; a job
        whose attempt is no longer current drops out of the batch."""
        per_unit: dict[str, tuple[_Unit, list[tuple[int, Output]]]] = {}
        for (unit, position, _), out in zip(chunk, outputs, strict=True):
            per_unit.setdefault(unit.job.id, (unit, []))[1].append((position, out))
        live = [(unit, results) for unit, results in per_unit.values() if not unit.stopped]
        writes = [_chunk_write(unit, results, made_by) for unit, results in live]
        written = await self._stored(self._store.write_chunk, writes, self._clock.now())
        for unit, results in live:
            if unit.job.id in written:
                self._metrics.segments_translated.labels(unit.job.engine, self.pool).inc(
                    len(results)
                )
                self._registration.tally.translated(len(results))
            else:
                unit.stopped = True

    async def _heartbeat(self, units: list[_Unit], work: asyncio.Task[None]) -> None:
        """Beats for every job at once until the work ends; a job whose attempt stops being
        current drops out of the batch, and the work is cancelled when none is left."""
        while not work.done():
            await asyncio.sleep(self._settings.heartbeat_interval_s)
            live = [unit for unit in units if not unit.stopped]
            try:
                answers = await self._store.heartbeat_many(
                    [(unit.job.id, unit.attempt) for unit in live], self._clock.now()
                )
            except DragomanError:
                continue  # the store is down; the next beat retries
            for unit in live:
                if answers.get(unit.job.id) is not JobStatus.RUNNING:
                    unit.stopped = True
            if all(unit.stopped for unit in units):
                work.cancel()
                return


def _chunk_write(
    unit: _Unit, results: list[tuple[int, Output]], made_by: tuple[str, str | None]
) -> ChunkWrite:
    engine, model = made_by
    return ChunkWrite(
        unit.job.id,
        unit.attempt,
        [(position, out.text) for position, out in results],
        engine=engine,
        model=model,
        confidences=[out.confidence for _, out in results],
        terms=[out.terms for _, out in results],
        review_below=unit.job.options.review_below,
    )
