"""Trying again, with backoff, to reach a dependency that does not answer yet.

Kubernetes starts pods in any order: a worker may start before RabbitMQ, an API before
PostgreSQL. A process waits for them instead of exiting, one log line per attempt, for as
long as it takes; whoever started it stops the wait by cancelling it (a SIGTERM does).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from dragoman.errors import TransientError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Waits between attempts: ``first_s``, doubled after each until ``max_s``, each spread
    by up to ``jitter`` either way so that processes started together do not retry together."""

    first_s: float = 0.5
    max_s: float = 15.0
    jitter: float = 0.2

    def delays_s(self) -> Iterator[float]:
        delay = self.first_s
        while True:
            yield delay * random.uniform(1 - self.jitter, 1 + self.jitter)
            delay = min(delay * 2, self.max_s)


async def until_reached(
    what: str, attempt: Callable[[], Awaitable[None]], backoff: Backoff = Backoff()
) -> None:
    """Awaits ``attempt()`` again while it raises ``TransientError``, logging each failure
    (``what`` names the dependency); other errors are raised at once."""
    delays = backoff.delays_s()
    tries = 1
    while True:
        try:
            await attempt()
        except TransientError as exc:
            delay = next(delays)
            log.warning(
                "%s unreachable (attempt %d): %s; next attempt in %.1f s",
                what,
                tries,
                exc.message,
                delay,
            )
            await asyncio.sleep(delay)
            tries += 1
        else:
            if tries > 1:
                log.info("%s reached (attempt %d)", what, tries)
            return


def without_password(url: str) -> str:
    """``url`` fit for a log line: its password, if any, replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))
