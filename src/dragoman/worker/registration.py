"""A worker's row in the worker registry, refreshed while it runs: the watchdog routes warm
work by it, and the scaler counts busy workers and picks idle ones to remove by it."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from dragoman.errors import TransientError
from dragoman.models import Pool, WorkerInfo
from dragoman.runtime import Runtime
from dragoman.store import WorkerRegistry
from dragoman.tasks import cancel_and_wait

log = logging.getLogger(__name__)

FORGET_TIMEOUT_S = 5.0


class Registered(Protocol):
    """What the registry says of a worker."""

    name: str
    pool: Pool

    @property
    def idle(self) -> bool: ...


@dataclass(slots=True)
class Tally:
    """What a worker has done since it started, published with its registry row: the
    dashboard takes rates from the deltas of these counters."""

    segments_translated: int = 0
    batches: int = 0
    batch_segments: int = 0

    def batch(self, size: int) -> None:
        """One engine call of ``size`` segments."""
        self.batches += 1
        self.batch_segments += size

    def translated(self, segments: int) -> None:
        """``segments`` translations committed."""
        self.segments_translated += segments


class Registration:
    """Registers ``worker`` every heartbeat interval (busy or idle, warm pairs) until
    stopped, then removes it. An entry not refreshed for the registry's TTL counts as gone."""

    def __init__(
        self, worker: Registered, runtime: Runtime, *, warm_models: Callable[[], frozenset[str]]
    ) -> None:
        self._worker = worker
        self._store: WorkerRegistry = runtime.registry
        self._clock = runtime.clock
        self._host = runtime.settings.worker_host
        self._interval_s = runtime.settings.heartbeat_interval_s
        self._warm_models = warm_models
        self.tally = Tally()
        self._task: asyncio.Task[None] | None = None

    def info(self) -> WorkerInfo:
        return WorkerInfo(
            id=self._worker.name,
            pool=self._worker.pool,
            host=self._host,
            busy=not self._worker.idle,
            warm_pairs=self._warm_models(),
            pid=os.getpid(),
            segments_translated=self.tally.segments_translated,
            batches=self.tally.batches,
            batch_segments=self.tally.batch_segments,
        )

    def start(self) -> None:
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
        await cancel_and_wait(self._task)
        self._task = None
        # Bounded: the row expires after the registry's TTL anyway, and a stop must not wait
        # on a store that does not answer.
        try:
            async with asyncio.timeout(FORGET_TIMEOUT_S):
                await self._store.forget_worker(self._worker.name)
        except (TransientError, TimeoutError) as exc:
            log.warning(
                "worker %s left in the registry until it expires: %r", self._worker.name, exc
            )
