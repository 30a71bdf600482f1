"""The HMM tagger takes segments in windows, each segment followed by a marker whose warning
tells where the segment's own warnings end (ADR 0001)."""

from __future__ import annotations

import asyncio
import random

import psutil
import pytest

from dragoman.engines import Pair
from dragoman.engines.apertium import ApertiumEngine
from dragoman.engines.apertium.pipeline import Pipeline
from dragoman.engines.apertium.stream import deformat, reformat
from dragoman.engines.apertium.tagger import WINDOW, Script, Tagger, _TaggerProcess
from dragoman.errors import EngineError
from tests.conftest import CORPUS_DIR
from tests.integration.conftest import MODES_DIR, cli_many, squash

# 'included' has an ambiguity class eng-spa's model lacks: tagging it narrows the model.
NARROWS = "The code is included."
# 'construed' and 'otherwise' are unknown words: a narrowed model tags them differently.
READS = (
    "Nothing in this License shall be construed as excluding or limiting any implied "
    "license or other defenses to infringement that may otherwise be available to you "
    "under applicable patent law."
)


def restarts(engine: ApertiumEngine, pair: Pair) -> int:
    return sum(p._tagger.restarts for p in engine._pools[pair, False]._all if p._tagger)


async def test_a_window_after_a_narrowing_segment_is_tagged_again_by_a_fresh_tagger() -> None:
    pair = Pair("en", "es")
    lines = [line for line in (CORPUS_DIR / "en_short.txt").read_text().splitlines()][:40]
    # Narrowing segments at several places of a window, each followed by a segment that a
    # narrowed model would tag differently.
    batch = [*lines[:5], NARROWS, READS, *lines[5:20], NARROWS, NARROWS, READS, *lines[20:]]
    assert len(batch) > 2 * WINDOW
    engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=1)
    try:
        out = await engine.translate(pair, batch)
        assert restarts(engine, pair) == 3  # right after each narrowing segment
    finally:
        await engine.close()
    assert [squash(t) for t in out] == [squash(t) for t in cli_many("eng-spa", batch)]


@pytest.mark.timeout(120)
async def test_a_window_larger_than_the_pipes_between_processes_does_not_block() -> None:
    rng = random.Random(5)
    words = (CORPUS_DIR / "en_licenses.txt").read_text().split()
    long_segments = [" ".join(rng.choice(words) for _ in range(1400)) for _ in range(3)]
    engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=1, read_timeout_s=60)
    try:
        out = await engine.translate(Pair("en", "es"), [*long_segments, "The cat."])
    finally:
        await engine.close()
    assert len(out) == 4 and out[-1] == "El gato."
    assert all(len(text) > 5000 for text in out[:3])


async def test_a_tagger_that_does_not_answer_the_marker_is_fed_one_segment_at_a_time() -> None:
    # `cat` as the tagger says nothing on stderr: no marker, so no windows.
    pipeline = Pipeline(Script(head="cat", tagger=["cat"], tail="cat"), read_timeout_s=5)
    await pipeline.start()
    try:
        assert pipeline._tagger is not None and pipeline._tagger._marker_says is None
        texts = [f"Line {i}, with words." for i in range(40)]
        assert await pipeline.translate(texts) == [reformat(deformat(t)) for t in texts]
    finally:
        await pipeline.stop()


async def test_a_tagger_stopped_while_it_swaps_starts_no_new_process() -> None:
    """A pipeline closed mid-batch stops its tagger while a swap may wait for the spare:
    the swap then fails, and no fresh spare outlives the stop."""
    argv = ["sleep", "60"]
    tagger = Tagger(argv)
    tagger._current = await _TaggerProcess.spawn(argv)
    gate = asyncio.Event()

    async def slow_spare() -> _TaggerProcess:
        await gate.wait()
        return await _TaggerProcess.spawn(argv)

    tagger._spare = asyncio.ensure_future(slow_spare())
    swapping = asyncio.create_task(tagger._swap())
    await asyncio.sleep(0.05)
    stopping = asyncio.create_task(tagger.stop())
    await asyncio.sleep(0.05)
    gate.set()
    await stopping
    with pytest.raises(EngineError):
        await swapping
    await asyncio.sleep(0.2)
    alive = [
        p
        for p in psutil.Process().children(recursive=True)
        if p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    ]
    assert alive == []
