"""Shared fixtures: settings on a temporary data dir, a fake clock, a controllable engine."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psutil
import pytest

from dragoman.engines import Engines, Pair
from dragoman.glossaries import Terminology
from dragoman.jobs import BatchRequestsManager, Intake
from dragoman.models import Pool
from dragoman.reuse import Reuse
from dragoman.reuse.memories import TranslationMemories
from dragoman.runtime import Runtime
from dragoman.settings import Settings
from dragoman.usage import UsageMeter
from dragoman.worker import BatchWorker

CORPUS_DIR = Path(__file__).resolve().parent / "data"


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.current = datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)


class ScriptedEngine:
    """A deterministic engine for tests of the machinery around engines: it upper-cases,
    can be slowed down, and can fail on a marker segment."""

    name = "scripted"

    def __init__(
        self, pairs: Sequence[Pair] = (Pair("en", "es"),), *, gpu_capable: bool = False
    ) -> None:
        self.gpu_capable = gpu_capable
        self._pairs = frozenset(pairs)
        self.delay_s = 0.0
        self.calls: list[list[str]] = []
        self.version_tag = "1"  # what version() says for every pair
        self.fail_into: set[str] = set()  # target languages whose every translation fails
        self.release = asyncio.Event()
        self.release.set()

    def pairs(self) -> frozenset[Pair]:
        return self._pairs

    def warm_pairs(self) -> frozenset[Pair]:
        return self._pairs

    def version(self, pair: Pair) -> str:
        return f"scripted-{self.version_tag}"

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        self.calls.append(list(segments))
        await self.release.wait()
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if pair.target in self.fail_into or any(s == "<explode>" for s in segments):
            from dragoman.errors import EngineError

            raise EngineError("scripted engine failure")
        return [s.upper() for s in segments]

    async def close(self) -> None:
        return None


def _running_children() -> dict[int, psutil.Process]:
    running = {}
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                running[child.pid] = child
        except psutil.NoSuchProcess:
            pass
    return running


@pytest.fixture(scope="module", autouse=True)
def no_process_outlives_its_module() -> Iterator[None]:
    """Every process a module starts (pipelines, servers, browsers) has ended once its
    fixtures are torn down. One left running fails here, named, rather than in whichever
    later test counts processes; it is killed so that no later test meets it."""
    before = set(_running_children())
    yield
    deadline = time.monotonic() + 5.0
    while True:
        left = {pid: p for pid, p in _running_children().items() if pid not in before}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    names = []
    for child in left.values():
        try:
            names.append(f"{child.name()} ({child.pid})")
            child.kill()
        except psutil.NoSuchProcess:
            pass
    assert not names, f"processes left running by this module: {', '.join(sorted(names))}"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_settings(tmp_path: Path) -> Any:
    def make(**overrides: Any) -> Settings:
        base: dict[str, Any] = {
            "data_dir": tmp_path / "data",
            "heartbeat_interval_s": 0.05,
            "sweep_interval_s": 0.05,
            "sync_batch_delay_s": 0.005,
        }
        base.update(overrides)
        return Settings(**base)

    return make


@pytest.fixture
def corpus_lines() -> list[str]:
    text = (CORPUS_DIR / "en_licenses.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


async def wait_until(predicate: Any, timeout_s: float = 10.0, interval_s: float = 0.02) -> None:
    """Polls an async predicate until it holds, failing the test after ``timeout_s``."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not await predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(interval_s)


@pytest.fixture
async def scripted_engine() -> AsyncIterator[ScriptedEngine]:
    yield ScriptedEngine()


STOP_PATIENCE_S = 60.0


async def stop_service(service: Any, patience_s: float = STOP_PATIENCE_S) -> None:
    """``service.stop()``, failing with every task's stack if it has not ended in
    ``patience_s``: a stop that hangs says where."""
    try:
        async with asyncio.timeout(patience_s):
            await service.stop()
    except TimeoutError:
        import io

        out = io.StringIO()
        for task in asyncio.all_tasks():
            print(f"--- {task!r}", file=out)
            task.print_stack(file=out)
        raise AssertionError(
            f"stop() did not end in {patience_s} s; tasks:\n{out.getvalue()}"
        ) from None


def a_manager(runtime: Runtime, engines: Engines, intake: Intake) -> BatchRequestsManager:
    """The manager over features of its own, as ``front.Front`` builds them."""
    return BatchRequestsManager(
        runtime,
        engines=engines,
        intake=intake,
        usage=UsageMeter(runtime),
        memories=TranslationMemories(runtime),
        terminology=Terminology(runtime, engines=engines),
        reuse=Reuse(runtime, engines=engines),
    )


def a_worker(runtime: Runtime, *, name: str, pool: Pool, engines: Engines) -> BatchWorker:
    """A worker with reuse and glossaries of its own, as a one-worker process has them."""
    return BatchWorker(
        runtime,
        name=name,
        pool=pool,
        engines=engines,
        reuse=Reuse(runtime, engines=engines),
        terminology=Terminology(runtime, engines=engines),
    )
