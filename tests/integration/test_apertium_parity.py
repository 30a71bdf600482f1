"""Batching is invisible: every segment translated in a batch equals the CLI run on it alone."""

from __future__ import annotations

import asyncio
import random

import pytest

from dragoman.engines import Pair
from dragoman.engines.apertium import ApertiumEngine
from tests.conftest import CORPUS_DIR
from tests.integration.conftest import MODES_DIR, cli_many, squash

# eng-spa over the whole licence corpus is the contract; the short lines (every twelfth), and
# the other pairs (eng-cat's CLI takes about a second a segment, every sixth line), keep the
# suite quick.
CASES = [
    ("eng-spa", Pair("en", "es"), "en_licenses.txt", 1),
    ("eng-spa", Pair("en", "es"), "en_short.txt", 12),
    ("fr-es", Pair("fr", "es"), "fr_sentences.txt", 1),
    ("eng-cat", Pair("en", "ca"), "en_licenses.txt", 6),
]


def corpus(name: str, every: int = 1) -> list[str]:
    lines = (CORPUS_DIR / name).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip()][::every]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("mode", "pair", "corpus_name", "every"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES]
)
async def test_every_corpus_segment_matches_the_cli_run_alone(
    apertium: ApertiumEngine, mode: str, pair: Pair, corpus_name: str, every: int
) -> None:
    lines = corpus(corpus_name, every)
    batched = await apertium.translate(pair, lines)
    alone = cli_many(mode, lines)
    mismatches = [
        (line, want, got)
        for line, want, got in zip(lines, alone, batched, strict=True)
        if squash(want) != squash(got)
    ]
    assert mismatches == [], f"{len(mismatches)} of {len(lines)} segments differ"


@pytest.mark.timeout(300)
async def test_order_within_the_batch_does_not_matter(apertium: ApertiumEngine) -> None:
    lines = corpus("en_licenses.txt")
    shuffled = lines[:]
    random.Random(7).shuffle(shuffled)
    first = dict(zip(lines, await apertium.translate(Pair("en", "es"), lines), strict=True))
    second = await apertium.translate(Pair("en", "es"), shuffled)
    assert [first[line] for line in shuffled] == second


async def test_a_stateful_tagger_word_does_not_leak_into_later_segments(
    apertium: ApertiumEngine,
) -> None:
    # 'included' has an ambiguity class eng-spa's tagger model lacks; a warm tagger that
    # met it tags the 'as' of the next segment differently than a fresh one does.
    probe = (
        "Nothing in this License shall be construed as excluding or limiting any implied "
        "license or other defenses to infringement that may otherwise be available to you "
        "under applicable patent law. 12."
    )
    alone = await apertium.translate(Pair("en", "es"), [probe])
    after = await apertium.translate(Pair("en", "es"), ["included", probe, "included", probe])
    assert after[1] == alone[0] and after[3] == alone[0]
    assert squash(alone[0]) == squash(cli_many("eng-spa", [probe])[0])


@pytest.mark.timeout(300)
async def test_a_batch_split_across_pipelines_translates_as_one_pipeline_does() -> None:
    lines = corpus("en_short.txt", 2) + corpus("en_licenses.txt")
    random.Random(11).shuffle(lines)
    one = ApertiumEngine(MODES_DIR, pipelines_per_pair=1)
    three = ApertiumEngine(MODES_DIR, pipelines_per_pair=3)
    try:
        alone = await one.translate(Pair("en", "es"), lines)
        # Three pipelines, and two batches at once: each batch takes what is idle.
        first, second = await asyncio.gather(
            three.translate(Pair("en", "es"), lines), three.translate(Pair("en", "es"), lines[:50])
        )
    finally:
        await one.close()
        await three.close()
    assert first == alone
    assert second == alone[:50]
