"""A chore a process runs every so often (purge finished jobs, trim the segment cache),
named for the log, its failures logged and retried at the next turn."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from dragoman.tasks import cancel_and_wait

log = logging.getLogger(__name__)


class Periodic:
    def __init__(
        self, what: str, chore: Callable[[], Awaitable[object]], *, every_s: float
    ) -> None:
        self.what = what
        self._chore = chore
        self._every_s = every_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._forever(), name=self.what)

    async def _forever(self) -> None:
        while True:
            await asyncio.sleep(self._every_s)
            try:
                await self._chore()
            except Exception:
                log.exception("%s failed; will retry", self.what)

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None
