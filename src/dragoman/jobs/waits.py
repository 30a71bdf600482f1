"""Long polls of a job (``GET /v1/jobs/{id}?wait=``): each waits until its job's status or
progress is other than the one it was answered, or its time is up.

One task per process reads the status and progress of every job waited on, in one store
read every ``interval_s``, and wakes the waiters whose job moved: a thousand idle waiters
cost one read per interval, not a thousand. The store is the truth, so a job moved by a
worker of any process is seen the same way. Where jobs end in this very process (the
embedded service), ``poke`` has that read made at once rather than at the interval's end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from dragoman.errors import TransientError
from dragoman.models import Job, JobStatus
from dragoman.tasks import cancel_and_wait

log = logging.getLogger(__name__)

INTERVAL_S = 0.25
# Reads follow one another by this much at least, however often the process pokes.
GAP_S = 0.05

Progress = tuple[JobStatus, int]
ReadProgress = Callable[[Sequence[str]], Awaitable[dict[str, Progress]]]


class JobWaits:
    def __init__(self, read: ReadProgress, *, interval_s: float = INTERVAL_S) -> None:
        self._read = read
        self._interval_s = interval_s
        # job id → the waiters on it, each with the progress it was answered.
        self._waiters: dict[str, list[tuple[Progress, asyncio.Future[None]]]] = {}
        self._poked = asyncio.Event()
        self._poller: asyncio.Task[None] | None = None

    def waiting(self) -> int:
        return sum(len(waiters) for waiters in self._waiters.values())

    async def until_moved(self, job: Job, timeout_s: float) -> None:
        """Returns once ``job`` is in another status or has done other segments than it
        had, or after ``timeout_s``, whichever comes first."""
        if job.status.finished or timeout_s <= 0:
            return
        seen: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = ((job.status, job.segments_done), seen)
        self._waiters.setdefault(job.id, []).append(entry)
        if self._poller is None or self._poller.done():
            self._poller = asyncio.create_task(self._poll(), name="job waits")
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout_s):
                    await asyncio.shield(seen)
        finally:
            waiters = self._waiters.get(job.id, [])
            if entry in waiters:
                waiters.remove(entry)
            if not waiters:
                self._waiters.pop(job.id, None)

    async def _poll(self) -> None:
        gap_s = min(GAP_S, self._interval_s)
        while self._waiters:
            await asyncio.sleep(gap_s)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._interval_s - gap_s):
                    await self._poked.wait()
            self._poked.clear()
            job_ids = list(self._waiters)
            if not job_ids:
                return
            try:
                found = await self._read(job_ids)
            except TransientError as exc:
                log.warning("long polls: the store did not answer (%s); trying again", exc)
                continue
            for job_id in job_ids:
                now = found.get(job_id)  # None: the job is gone (purged)
                for progress, seen in self._waiters.get(job_id, []):
                    if progress != now and not seen.done():
                        seen.set_result(None)
            await asyncio.sleep(0)

    def poke(self) -> None:
        """Some job moved in this process: read now, not at the interval's end (pokes
        before that read are answered by it)."""
        if self._waiters:
            self._poked.set()

    async def close(self) -> None:
        if self._poller is not None:
            await cancel_and_wait(self._poller)
