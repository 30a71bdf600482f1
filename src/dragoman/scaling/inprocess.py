"""``inprocess``: the embedded mode's workers are asyncio tasks in the service's process."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

from dragoman.models import WorkerInfo
from dragoman.tasks import cancel_and_wait

log = logging.getLogger(__name__)


class RunnableWorker(Protocol):
    """What the controller needs of a worker (``BatchWorker`` is one)."""

    name: str

    @property
    def idle(self) -> bool: ...

    async def run(self) -> None: ...

    async def drain(self, task: asyncio.Task[None]) -> None: ...


W = TypeVar("W", bound=RunnableWorker)


class InProcessController(Generic[W]):
    """Starts worker tasks at once; a scale-down drains the chosen workers in the background
    (a busy one finishes its job first) and no longer counts them. Each worker keeps its
    own entry in the worker registry while it runs."""

    def __init__(self, make_worker: Callable[[str], W], *, prefix: str) -> None:
        self._make_worker = make_worker
        self._prefix = prefix
        self._ids = itertools.count()
        self._running: dict[str, tuple[W, asyncio.Task[None]]] = {}
        self._draining: set[asyncio.Task[None]] = set()

    @property
    def workers(self) -> list[W]:
        return [worker for worker, _ in self._running.values()]

    async def replicas(self) -> int:
        for name, (_, task) in list(self._running.items()):
            if task.done():  # died: no longer a replica
                del self._running[name]
        return len(self._running)

    async def scale(self, replicas: int, remove: Sequence[WorkerInfo] = ()) -> None:
        if replicas < 0:
            raise ValueError("replicas must be >= 0")
        current = await self.replicas()
        for _ in range(replicas - current):
            worker = self._make_worker(f"{self._prefix}-{next(self._ids)}")
            task = asyncio.create_task(worker.run(), name=f"worker-{worker.name}")
            self._running[worker.name] = (worker, task)
        surplus = current - replicas
        if surplus <= 0:
            return
        chosen = [w.id for w in remove if w.id in self._running]
        # Not yet registered or not named: the idle ones, newest first.
        rest = [n for n, (w, _) in reversed(self._running.items()) if w.idle and n not in chosen]
        for name in (chosen + rest)[:surplus]:
            worker, task = self._running.pop(name)
            drain = asyncio.create_task(self._drain(worker, task))
            self._draining.add(drain)
            drain.add_done_callback(self._draining.discard)

    @staticmethod
    async def _drain(worker: RunnableWorker, task: asyncio.Task[None]) -> None:
        await worker.drain(task)
        log.info("worker %s drained and removed", worker.name)

    async def close(self) -> None:
        """Stops every worker now (service shutdown: held jobs are requeued at next start)."""
        tasks = [task for _, task in self._running.values()] + list(self._draining)
        await cancel_and_wait(*tasks)
        self._running.clear()
