"""Watchdog: hands queued jobs to their pool's workers while capacity allows, records the
workers' reports, and retries (or fails) jobs whose heartbeats stop. It also tracks the
requests that services send each other (``dragoman.relay``).

Dispatch groups small waiting jobs of one pair and engine into one message (one engine
batch on one worker), sends it warm when it can (``routing``), and moves GPU jobs to the
CPU pool when no GPU worker is there to take them. The messages: ``dragoman.messages``.

Its state is the store's: in-flight jobs are rows with a heartbeat deadline, so a restarted
watchdog adopts every open job. The in-memory ``_in_flight`` map only mirrors the store for
capacity accounting and the queue only orders the store's queued jobs; both are rebuilt from
the store on every sweep, so a lost notification delays a job by one sweep at most.

Each sweep ends with the forecast (``forecast``): every waiting and running job's predicted
end, from its pool's measured speed and the queue ahead of it, and the jobs at risk of
missing their deadline.

The notifier of jobs' ends (``dragoman.webhooks``), when given, starts and stops with it:
like dispatch, notifications are sent by the one active watchdog of a cluster.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from dragoman.bus import Message
from dragoman.errors import TransientError
from dragoman.messages import WATCHDOG_QUEUE, Done, Outcomes, Queued, Work, work_queue
from dragoman.models import IN_FLIGHT, Job, JobError, JobStatus, Pool
from dragoman.queue import BatchRequestsQueue, Waiting
from dragoman.relay import RelayTracker
from dragoman.runtime import Runtime
from dragoman.store import Ending
from dragoman.tasks import cancel_and_wait
from dragoman.watchdog.forecast import Forecast
from dragoman.watchdog.routing import Router
from dragoman.webhooks.notifier import Notifier

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Flight:
    pool: Pool
    attempt: int
    slot: str  # the jobs sent in one message share a slot: one worker's capacity
    since: float = field(default_factory=time.monotonic)


class Watchdog:
    def __init__(
        self,
        runtime: Runtime,
        *,
        queue: BatchRequestsQueue,
        on_dispatch: Callable[[], None] = lambda: None,
        on_ended: Callable[[], None] = lambda: None,
        reload_each_sweep: bool = True,
        notifier: Notifier | None = None,
    ) -> None:
        # Jobs reach the queue by notices over the bus, which can be lost; an in-process
        # intake cannot lose them, so the store's queued jobs are read once, at start.
        self._reload_each_sweep = reload_each_sweep
        self._settings = settings = runtime.settings
        self._on_dispatch = on_dispatch
        self._on_ended = on_ended  # jobs ended (or were requeued): followers may look again
        self.notifier = notifier
        self._store = runtime.store
        self._bus = runtime.bus
        self._queue = queue
        self._clock = runtime.clock
        self._metrics = runtime.metrics
        self._in_flight: dict[str, _Flight] = {}
        # Attempts reported over (job id, attempt) → when: until their end is committed the
        # store still lists them in flight, and a sweep must not count them again.
        self._reported: dict[tuple[str, int], float] = {}
        self._router = Router(
            registry=runtime.registry,
            bus=runtime.bus,
            clock=runtime.clock,
            metrics=runtime.metrics,
            ttl_s=settings.worker_ttl_s,
        )
        self.forecast = Forecast(
            store=runtime.store,
            registry=runtime.registry,
            metrics=runtime.metrics,
            settings=settings,
            queue=queue,
            router=self._router,
        )
        self._wakeup = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.relay = RelayTracker(
            store=runtime.relay_log,
            bus=runtime.bus,
            clock=runtime.clock,
            timeout_s=settings.heartbeat_timeout_s,
        )

    # -- capacity -------------------------------------------------------------------------

    def in_flight(self, pool: Pool) -> int:
        """Messages in flight in ``pool``: a batch of jobs takes one worker."""
        return len({flight.slot for flight in self._in_flight.values() if flight.pool is pool})

    def _has_room(self, pool: Pool) -> bool:
        return self.in_flight(pool) < self._settings.max_workers(pool)

    def wake(self) -> None:
        self._wakeup.set()

    async def dispatch(self) -> int:
        """Submits queued jobs while each pool has room; returns how many messages."""
        await self._fall_back()
        sent = 0
        for pool in Pool:
            while self._has_room(pool):
                waiting = self._queue.pop(pool)
                if waiting is None:
                    break
                if await self._submit([waiting, *self._batch_mates(waiting)]):
                    sent += 1
        if sent:
            self._on_dispatch()
        return sent

    def _batch_mates(self, first: Waiting) -> list[Waiting]:
        limit = self._settings.batch_jobs - 1
        room = self._settings.chunk_size(first.pool)
        if limit < 1 or first.alone or not first.batch_key or first.segments >= room:
            return []
        return self._queue.take_batch(first, limit=limit, max_segments=room)

    async def _fall_back(self) -> None:
        """GPU jobs go to the CPU pool once they have waited ``gpu_fallback_s`` with no
        GPU worker registered (none configured, none started, all gone)."""
        # Cheap checks first: this runs on every dispatch, and the scan below is per job.
        if self._settings.gpu_max_workers == 0 or self._router.workers(Pool.GPU):
            return
        patience = self._settings.gpu_fallback_s
        for waiting in self._queue.waiting(Pool.GPU):
            if time.monotonic() - waiting.since < patience:
                continue
            self._queue.remove(waiting.job_id)
            if await self._store.reroute(waiting.job_id, Pool.CPU, self._clock.now()):
                self._queue.push(waiting.moved_to(Pool.CPU))
                self._metrics.gpu_fallbacks.inc()
                log.info("job %s moved to the CPU pool: no GPU worker", waiting.job_id)

    async def _submit(self, group: list[Waiting]) -> bool:
        # One transaction for the group; a job cancelled while it waited is left out.
        ids = [waiting.job_id for waiting in group]
        jobs = await self._store.mark_submitted_many(ids, self._clock.now())
        if not jobs:
            return False
        slot = jobs[0].id
        self._metrics.jobs_per_message.labels(jobs[0].pool).observe(len(jobs))
        for job in jobs:
            self._in_flight[job.id] = _Flight(job.pool, job.attempts, slot)
        # Committed first, published second: if the publish is lost (a crash, the broker
        # down), the jobs stay submitted and unclaimed, and the sweep publishes them again.
        worker = await self._router.send(jobs[0], Work.of(jobs))
        # One line per batch, each job named in it (a line per job cost more than its dispatch).
        log.info(
            "submitted to %s: %s",
            f"worker {worker}" if worker else f"pool {jobs[0].pool}",
            ", ".join(f"job {job.id} (attempt {job.attempts})" for job in jobs),
        )
        return True

    async def republish(self, jobs: list[Job]) -> int:
        """Publishes submitted jobs again: the broker may have lost their messages. A worker
        drops a second delivery of an attempt that is claimed already."""
        sent = 0
        now = self._clock.now()
        for job in jobs:
            if await self._store.resubmit(job.id, job.attempts, now):
                # To the pool's queue, not routed: at start-up the registry is not read yet,
                # and a resend is no routing decision to count.
                await self._bus.publish(work_queue(job.pool), Work.of([job]).to_body())
                sent += 1
        if sent:
            log.info("%d submitted jobs published again", sent)
        return sent

    async def reload(self) -> int:
        """Puts the store's queued jobs in the queue (those already there are kept)."""
        added = 0
        for job in await self._store.in_status([JobStatus.QUEUED]):
            if job.id not in self._queue:
                self._queue.push(Waiting.of(job))
                added += 1
        return added

    # -- completions ----------------------------------------------------------------------

    async def handle(self, message: Message) -> None:
        """A message on the watchdog's queue: a worker's ``Outcomes``, an API's ``Queued``, or
        a relayed request's traffic (``relay.*``). Raises ``ValueError`` on a malformed one."""
        kind = str(message.get("type", ""))
        if kind == "done":
            await self._done(Outcomes.from_body(message).done)
        elif kind == "queued":
            self._queue.push(Waiting.of_notice(Queued.from_body(message)))
            self.wake()
        elif kind.startswith("relay."):
            await self.relay.handle(message)
        else:
            log.error("unknown message on the watchdog's queue dropped: %r", message)

    async def _done(self, outcomes: Sequence[Done]) -> None:
        """Ends the jobs of one message: those that end as reported in one transaction, the
        retryable failures one by one (the store fences every write by attempt: a stale
        report changes nothing)."""
        now = time.monotonic()
        for done in outcomes:
            self._reported[(done.job_id, done.attempt)] = now
            flight = self._in_flight.get(done.job_id)
            if flight is not None and flight.attempt == done.attempt:
                del self._in_flight[done.job_id]
        ends = [
            Ending(done.job_id, done.attempt, done.status, done.error)
            for done in outcomes
            if done.status is JobStatus.SUCCEEDED
            or (done.status is JobStatus.FAILED and not (done.retryable and done.error))
        ]
        finished = await self._store.finish_many(ends, self._clock.now()) if ends else set()
        ended = [end for end in ends if end.job_id in finished]
        if succeeded := [end.job_id for end in ended if end.status is JobStatus.SUCCEEDED]:
            log.info("succeeded: %s", ", ".join(f"job {job_id}" for job_id in succeeded))
        for end in ended:
            if end.status is not JobStatus.SUCCEEDED:
                why = f": {end.error.message}" if end.error else ""
                log.info("job %s %s%s", end.job_id, end.status.value, why)
        for done in outcomes:
            if done.status is JobStatus.FAILED and done.retryable and done.error:
                await self._retry_or_fail(done.job_id, done.attempt, done.error)
        self._on_ended()
        self.wake()

    async def _retry_or_fail(self, job_id: str, attempt: int, error: JobError) -> None:
        now = self._clock.now()
        if attempt < self._settings.max_attempts:
            if await self._store.requeue(job_id, attempt, now):
                job = await self._store.get(job_id)
                if job is not None:
                    self._queue.push(Waiting.of(job))
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
        await self._router.refresh(now)
        began = time.monotonic()
        flying = await self._store.in_status(sorted(IN_FLIGHT))
        # Keep what was dispatched while the query ran: the snapshot cannot know it yet.
        known = self._in_flight
        recent = {k: v for k, v in known.items() if v.since >= began}
        self._in_flight = {}
        # A report older than this has long been committed (or its job was retried).
        forget_before = began - max(60.0, 3 * self._settings.sweep_interval_s)
        self._reported = {k: at for k, at in self._reported.items() if at >= forget_before}
        for job in flying:
            if (job.id, job.attempts) in self._reported:
                continue  # over: its end is on its way to the store
            flight = known.get(job.id)
            slot = flight.slot if flight is not None and flight.attempt == job.attempts else job.id
            self._in_flight[job.id] = _Flight(job.pool, job.attempts, slot)
        self._in_flight.update(recent)
        self.wake()
        # Last: a forecast that fails loses nothing above.
        messages: dict[str, list[Job]] = {}
        for job in flying:
            if (flight := self._in_flight.get(job.id)) is not None:
                messages.setdefault(flight.slot, []).append(job)
        await self.forecast.update(now, list(messages.values()))

    def hit_ratio(self, pool: Pool) -> float | None:
        """Share of this pool's messages that went to a worker with the model warm."""
        return self._router.hit_ratio(pool)

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
        if self.notifier is not None:
            await self.notifier.start()

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
        if self.notifier is not None:
            await self.notifier.stop()
        await cancel_and_wait(*self._tasks)
        self._tasks = []
