"""Trying again with backoff while a dependency does not answer (a process started before
PostgreSQL or RabbitMQ)."""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest

from dragoman.backoff import Backoff, until_reached, without_password
from dragoman.errors import BusUnavailable, StoreUnavailable

FAST = Backoff(first_s=0.01, max_s=0.04, jitter=0.2)


def test_the_waits_double_up_to_the_cap_each_spread_by_the_jitter() -> None:
    waits = list(itertools.islice(Backoff(first_s=1, max_s=8, jitter=0.2).delays_s(), 7))
    for wait, nominal in zip(waits, [1, 2, 4, 8, 8, 8, 8], strict=True):
        assert 0.8 * nominal <= wait <= 1.2 * nominal


class Flaky:
    """Fails ``failures`` times with ``error``, then answers."""

    def __init__(self, failures: int, error: Exception) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    async def __call__(self) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error


async def test_each_failed_attempt_is_one_log_line_and_the_wait_ends_when_it_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="dragoman.backoff")
    attempt = Flaky(3, StoreUnavailable("database unavailable: connection refused"))
    await asyncio.wait_for(until_reached("the store at db:5432", attempt, FAST), 5)
    assert attempt.calls == 4
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4
    for n, line in enumerate(lines[:3], start=1):
        assert line.startswith(f"the store at db:5432 unreachable (attempt {n}): database ")
        assert "next attempt in" in line
    assert lines[3] == "the store at db:5432 reached (attempt 4)"


async def test_a_dependency_that_answers_at_once_logs_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="dragoman.backoff")
    await until_reached("the store", Flaky(0, StoreUnavailable("down")), FAST)
    assert caplog.records == []


async def test_an_error_that_is_not_transient_is_raised_at_once() -> None:
    attempt = Flaky(5, ValueError("no such database"))
    with pytest.raises(ValueError, match="no such database"):
        await until_reached("the store", attempt, FAST)
    assert attempt.calls == 1


async def test_the_wait_goes_on_until_cancelled() -> None:
    attempt = Flaky(10**9, BusUnavailable("connection refused"))
    waiting = asyncio.create_task(until_reached("the message bus", attempt, FAST))
    await asyncio.sleep(0.3)
    assert not waiting.done() and attempt.calls > 5
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("amqp://guest:guest@rabbit:5672/", "amqp://guest:***@rabbit:5672/"),
        ("postgresql+asyncpg://app:s3cr%40t@db:5432/d", "postgresql+asyncpg://app:***@db:5432/d"),
        ("postgresql://app@db/d", "postgresql://app@db/d"),
        ("sqlite+aiosqlite:///data/dragoman.db", "sqlite+aiosqlite:///data/dragoman.db"),
    ],
)
def test_urls_are_logged_without_their_password(url: str, shown: str) -> None:
    assert without_password(url) == shown
