"""Background tasks ended on purpose, and waits that a cancellation always ends."""

from __future__ import annotations

import asyncio
from typing import Any


async def cancel_and_wait(*tasks: asyncio.Task[Any] | None) -> None:
    """Cancels ``tasks`` and waits until each has ended, then raises the first exception one
    of them ended with (their cancellation is not one).

    A cancellation of the caller while it waits is raised: ``await task`` inside
    ``suppress(CancelledError)`` would take it for the task's own and carry on, so that a stop
    cut short by its own deadline never ends."""
    running = [task for task in tasks if task is not None]
    for task in running:
        task.cancel()
    if not running:
        return
    await asyncio.wait(running)
    for task in running:
        if not task.cancelled():
            task.result()
