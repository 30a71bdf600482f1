"""``engines.view.one_view``: within it a task asks each engine for its pairs once, so a
submission's several resolutions cost one look at the models folder; outside it, in the
tasks and threads it starts, and in the next request, every change is seen at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from dragoman.bus.memory import MemoryBus
from dragoman.engines import Engines, Pair
from dragoman.engines.view import in_one_view, one_view
from dragoman.errors import UnsupportedPair
from dragoman.glossaries import Terminology
from dragoman.jobs import LocalIntake
from dragoman.metrics import Metrics
from dragoman.models import Document, JobOptions, JobStatus
from dragoman.queue import BatchRequestsQueue
from dragoman.reuse import Reuse
from dragoman.runtime import Runtime
from dragoman.store.sql import SqlJobStore
from dragoman.translation import TextRequest, TextTranslation
from dragoman.usage import UsageMeter
from tests.conftest import FakeClock, ScriptedEngine, a_manager

EN_ES, EN_DE = Pair("en", "es"), Pair("en", "de")


class Counted(ScriptedEngine):
    """An engine whose pairs a test changes, counting how often it is asked for them."""

    def __init__(self, name: str, pairs: list[Pair]) -> None:
        super().__init__(pairs)
        self.name = name
        self.asked = 0

    def pairs(self) -> frozenset[Pair]:
        self.asked += 1
        return super().pairs()


def engines() -> tuple[Engines, Counted]:
    neural = Counted("neural", [])
    return Engines([Counted("apertium", [EN_ES]), neural]), neural


async def test_within_a_view_the_engines_are_asked_once_and_its_table_kept() -> None:
    table, neural = engines()
    with one_view():
        assert table.resolve(EN_ES).name == "apertium"
        neural._pairs = frozenset({EN_DE})  # installed while the request runs
        await asyncio.sleep(0)
        with pytest.raises(UnsupportedPair):
            table.resolve(EN_DE)  # what was installed when it first asked
        table.resolve(EN_ES)
        assert neural.asked == 1
    assert table.resolve(EN_DE).name == "neural"  # outside: seen at once
    assert neural.asked == 2


async def test_outside_a_view_every_resolution_asks_again() -> None:
    table, neural = engines()
    for _ in range(3):
        table.resolve(EN_ES)
    assert neural.asked == 3


async def test_tasks_and_threads_started_in_a_view_ask_every_time() -> None:
    table, neural = engines()
    with one_view():
        table.resolve(EN_ES)
        neural._pairs = frozenset({EN_DE})
        # A task started here copies the variable; a long-lived one must not keep the view.
        assert (await asyncio.create_task(_resolved(table, EN_DE))) == "neural"
        assert (await asyncio.to_thread(lambda: table.resolve(EN_DE).name)) == "neural"
        assert neural.asked == 3


async def test_two_requests_have_views_of_their_own() -> None:
    table, neural = engines()

    @in_one_view
    async def request(pair: Pair, installed: asyncio.Event) -> str:
        table.resolve(EN_ES)
        await installed.wait()
        return table.resolve(pair).name

    installed = asyncio.Event()
    before = asyncio.create_task(request(EN_DE, installed))
    await asyncio.sleep(0)
    neural._pairs = frozenset({EN_DE})
    after = asyncio.create_task(request(EN_DE, installed))
    await asyncio.sleep(0)
    installed.set()
    with pytest.raises(UnsupportedPair):
        await before
    assert await after == "neural"


async def _resolved(table: Engines, pair: Pair) -> str:
    return table.resolve(pair).name


@pytest.fixture
async def runtime(make_settings: Any, clock: FakeClock) -> AsyncIterator[Runtime]:
    store = SqlJobStore("sqlite+aiosqlite:///:memory:")
    await store.open()
    try:
        yield Runtime(make_settings(), store, MemoryBus(), clock, Metrics())
    finally:
        await store.close()


async def test_a_submission_asks_the_engines_for_their_pairs_once(runtime: Runtime) -> None:
    # Admission, the segment cache's version and the model that results name each resolve
    # the pair: three looks at a neural engine's models folder before this view.
    table, neural = engines()
    manager = a_manager(runtime, table, LocalIntake(BatchRequestsQueue(), lambda: None))
    job = await manager.submit(None, EN_ES, [Document("d", ["One.", "Two."])], JobOptions())
    assert job.status is JobStatus.QUEUED
    assert neural.asked == 1


async def test_a_synchronous_translation_asks_the_engines_for_their_pairs_once(
    runtime: Runtime,
) -> None:
    # The resolution and the segment cache's version each looked; the batcher, which
    # translates the misses in a task of its own, looks once more (three before the view).
    table, neural = engines()
    sync = TextTranslation(
        runtime.settings,
        table,
        runtime.metrics,
        usage=UsageMeter(runtime),
        terminology=Terminology(runtime, engines=table),
        cache=Reuse(runtime, engines=table),
    )
    try:
        done = await sync.translate(TextRequest(None, "en", "es", ["One.", "Two."]))
        assert done.texts == ["ONE.", "TWO."]
        assert neural.asked == 2
    finally:
        await sync.close()
