"""Each worker's entry in the registry, refreshed while it runs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

from dragoman.clock import Clock
from dragoman.engines.registry import Engines
from dragoman.errors import TransientError
from dragoman.scaling import WorkerInfo
from dragoman.store import JobStore
from dragoman.worker import BatchWorker

log = logging.getLogger(__name__)


class Registration:
    """Registers ``worker`` every ``interval_s`` (busy or idle, warm pairs) until stopped,
    then removes it. An entry not refreshed for the registry's TTL counts as gone."""

    def __init__(
        self,
        worker: BatchWorker,
        *,
        store: JobStore,
        engines: Engines,
        clock: Clock,
        host: str,
        interval_s: float,
    ) -> None:
        self._worker = worker
        self._store = store
        self._engines = engines
        self._clock = clock
        self._host = host
        self._interval_s = interval_s
        self._task: asyncio.Task[None] | None = None

    def info(self) -> WorkerInfo:
        return WorkerInfo(
            id=self._worker.name,
            pool=self._worker.pool,
            host=self._host,
            busy=not self._worker.idle,
            warm_pairs=self._engines.warm_models(),
            pid=os.getpid(),
        )

    async def start(self) -> None:
        self._task = asyncio.create_task(self._refresh(), name=f"register-{self._worker.name}")

    async def _refresh(self) -> None:
        while True:
            try:
                await self._store.register_worker(self.info(), self._clock.now())
            except TransientError as exc:
                log.warning("worker %s not registered: %s", self._worker.name, exc)
            await asyncio.sleep(self._interval_s)

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
        with contextlib.suppress(TransientError):
            await self._store.forget_worker(self._worker.name)
