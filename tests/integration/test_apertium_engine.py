"""The warm-pipeline policy: discovery, stuck and dead pipelines replaced, idle shutdown."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import psutil
import pytest

from dragoman.engines import Pair
from dragoman.engines.apertium import ApertiumEngine, discover_modes
from dragoman.errors import EngineError, EngineTimeout
from tests.integration.conftest import MODES_DIR


def test_installed_modes_become_canonical_pairs_and_variants_are_skipped() -> None:
    modes = discover_modes(MODES_DIR)
    assert {Pair("en", "es"), Pair("es", "en"), Pair("fr", "es"), Pair("en", "ca")} <= set(modes)
    assert modes[Pair("en", "ca")].name == "eng-cat"
    assert all("_" not in mode.name for mode in modes.values())


def test_a_missing_modes_directory_means_no_pairs(tmp_path: Path) -> None:
    assert discover_modes(tmp_path / "nowhere") == {}


@pytest.fixture
def broken_modes(tmp_path: Path) -> Path:
    (tmp_path / "eng-fra.mode").write_text("tail -f /dev/null\n")  # never answers
    (tmp_path / "fra-eng.mode").write_text("lt-proc -w /nonexistent.bin\n")  # dies at once
    return tmp_path


async def test_a_stuck_pipeline_times_out_and_is_replaced(broken_modes: Path) -> None:
    engine = ApertiumEngine(broken_modes, pipelines_per_pair=1, read_timeout_s=0.5)
    try:
        with pytest.raises(EngineTimeout):
            await engine.translate(Pair("en", "fr"), ["Hello."])
        with pytest.raises(EngineTimeout):
            await engine.translate(Pair("en", "fr"), ["Hello again."])
    finally:
        await engine.close()


def _slow_echo_mode(folder: Path, name: str, *, delay: float, answers: int) -> None:
    """A mode whose one stage gives each segment back after ``delay`` seconds, and falls
    silent after ``answers`` of them. Run as a program (its ``-z`` from the null-flush
    script lands in its arguments)."""
    script = folder / f"{name}.py"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, time\n"
        "answered = 0\n"
        "segment = b''\n"
        "while chunk := sys.stdin.buffer.read(1):\n"
        "    segment += chunk\n"
        "    if chunk != b'\\0':\n"
        "        continue\n"
        "    if answered == " + str(answers) + ":\n"
        "        time.sleep(3600)\n"
        "    time.sleep(" + str(delay) + ")\n"
        "    sys.stdout.buffer.write(segment)\n"
        "    sys.stdout.buffer.flush()\n"
        "    answered += 1\n"
        "    segment = b''\n"
    )
    script.chmod(0o755)
    (folder / f"{name}.mode").write_text(f"{script}\n")


async def test_a_batch_slower_than_the_timeout_passes_while_segments_keep_coming(
    tmp_path: Path,
) -> None:
    # The timeout is on silence, not on the batch: four answers 0.3 s apart take 1.2 s.
    _slow_echo_mode(tmp_path, "eng-fra", delay=0.3, answers=100)
    engine = ApertiumEngine(tmp_path, pipelines_per_pair=1, read_timeout_s=0.8)
    try:
        began = time.monotonic()
        out = await engine.translate(Pair("en", "fr"), ["One.", "Two.", "Three.", "Four."])
        assert out == ["One.", "Two.", "Three.", "Four."]
        assert time.monotonic() - began > 0.8
    finally:
        await engine.close()


async def test_a_pipeline_that_falls_silent_midway_times_out(tmp_path: Path) -> None:
    _slow_echo_mode(tmp_path, "eng-fra", delay=0.05, answers=2)
    engine = ApertiumEngine(tmp_path, pipelines_per_pair=1, read_timeout_s=0.5)
    try:
        began = time.monotonic()
        with pytest.raises(EngineTimeout, match=r"no output within 0\.5s"):
            await engine.translate(Pair("en", "fr"), ["One.", "Two.", "Three.", "Four."])
        assert time.monotonic() - began < 5  # half a second after the second answer
    finally:
        await engine.close()


async def test_a_dead_pipeline_is_an_engine_error_not_a_hang(broken_modes: Path) -> None:
    engine = ApertiumEngine(broken_modes, pipelines_per_pair=1, read_timeout_s=5)
    try:
        with pytest.raises(EngineError):
            await engine.translate(Pair("fr", "en"), ["Bonjour."])
    finally:
        await engine.close()


async def test_a_good_pipeline_recovers_after_its_pair_failed_elsewhere() -> None:
    engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=1, max_uses=2)
    try:
        for _ in range(5):  # worn out after two batches, replaced each time
            assert await engine.translate(Pair("en", "es"), ["Hello world."]) == ["Hola Mundo."]
    finally:
        await engine.close()


async def test_idle_pipelines_are_stopped_and_started_again_on_demand() -> None:
    engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=1, idle_shutdown_s=0.5)
    try:
        await engine.translate(Pair("en", "es"), ["Hello world."])
        assert engine.warm_pairs() == {Pair("en", "es")}
        await asyncio.sleep(1.2)  # the reaper looks every idle_shutdown_s / 2
        assert engine.warm_pairs() == frozenset()
        assert await engine.translate(Pair("en", "es"), ["The cat."]) == ["El gato."]
    finally:
        await engine.close()


async def test_an_empty_batch_costs_nothing() -> None:
    engine = ApertiumEngine(MODES_DIR)
    assert await engine.translate(Pair("en", "es"), []) == []
    assert engine.warm_pairs() == frozenset()
    await engine.close()


def _apertium_children() -> list[psutil.Process]:
    return [
        child
        for child in psutil.Process().children(recursive=True)
        if child.is_running() and child.status() != psutil.STATUS_ZOMBIE
    ]


async def test_closing_mid_batch_leaves_no_process_running() -> None:
    engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=2)
    await engine.translate(Pair("en", "es"), ["Warm."])
    lines = [f"Line number {n} is being translated now." for n in range(3000)]
    batch = asyncio.create_task(engine.translate(Pair("en", "es"), lines))
    waiting = asyncio.create_task(engine.translate(Pair("en", "es"), lines[:8]))
    await asyncio.sleep(0.2)
    assert not batch.done() and not waiting.done()  # the batch holds both pipelines
    await engine.close()
    for task in (batch, waiting):
        with pytest.raises(EngineError):
            await asyncio.wait_for(task, 5)
    await asyncio.sleep(0.1)  # a pipeline replaced after the failure would be starting now
    assert _apertium_children() == []


async def test_a_pipeline_whose_stop_is_cancelled_leaves_no_process_running() -> None:
    """A job cancelled while its pipeline is being stopped (a cancel, then a shutdown) must
    not leave the stages after the first one running for good."""
    engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=1)
    await engine.translate(Pair("en", "es"), ["Warm."])
    (pool,) = engine._pools.values()
    (pipeline,) = pool._all
    stopping = asyncio.create_task(pipeline.stop())
    await asyncio.sleep(0)  # the stop is under way: killing the first stage
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    await asyncio.sleep(0.3)
    assert _apertium_children() == []
    await engine.close()


async def test_a_batch_cancelled_twice_leaves_no_process_running() -> None:
    """A job cancelled mid-batch, then its worker shut down: the second cancellation lands
    while the pool stops the first batch's pipelines."""
    engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=2)
    lines = [f"Line number {n} is being translated now." for n in range(3000)]
    await engine.translate(Pair("en", "es"), lines[:40])  # both pipelines started
    for pause in range(4):
        batch = asyncio.create_task(engine.translate(Pair("en", "es"), lines))
        await asyncio.sleep(0.1)
        batch.cancel()
        for _ in range(pause):
            await asyncio.sleep(0)
        batch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await batch
    await asyncio.wait_for(engine.close(), 20)
    await asyncio.sleep(0.3)
    assert _apertium_children() == []


async def test_a_batch_cancelled_as_its_parts_start_gives_its_pipelines_back() -> None:
    engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=2)
    lines = [f"Line number {n} is being translated now." for n in range(40)]
    try:
        await engine.translate(Pair("en", "es"), lines)  # both pipelines started
        batch = asyncio.create_task(engine.translate(Pair("en", "es"), lines))
        await asyncio.sleep(0)  # it has lent both pipelines; its parts have not run yet
        batch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await batch
        again = await asyncio.wait_for(engine.translate(Pair("en", "es"), lines), 20)
        assert len(again) == 40
    finally:
        await asyncio.wait_for(engine.close(), 20)
