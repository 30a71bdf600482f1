"""Any input is safe: special characters never hang a pipeline or shift a result."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dragoman.engines import Pair
from dragoman.engines.apertium import ApertiumEngine
from tests.integration.conftest import MODES_DIR, cli_many, squash

EN_ES = Pair("en", "es")
SENTINEL, SENTINEL_ES = "Hello world.", "Hola Mundo."
STREAM_CHARACTERS = list("^$[]{}\\/@*#<>~.,;:!?'\"()-_=+%&|`")
BLANKS = ["\t", "\n", "\r", " ", "  "]
WORDS = ["the", "cat", "house", "Hello", "run", "included", "ñ", "漢字", "🙂", "\u00a0", "\u200b"]
ALPHABET = st.sampled_from([*STREAM_CHARACTERS, *BLANKS, *WORDS])
segments = st.lists(ALPHABET, max_size=12).map("".join)


@pytest.mark.timeout(600)
def test_random_segments_never_hang_or_shift() -> None:
    loop = asyncio.new_event_loop()
    engine = ApertiumEngine(MODES_DIR, pipelines_per_pair=1, read_timeout_s=10)

    @settings(max_examples=40, deadline=None)
    @given(st.lists(segments, min_size=1, max_size=4))
    def check(batch: list[str]) -> None:
        # Sentinels between the random segments show any shift; each random segment must
        # also come out as the CLI gives it alone.
        mixed = [SENTINEL]
        for text in batch:
            mixed += [text, SENTINEL]
        out = loop.run_until_complete(asyncio.wait_for(engine.translate(EN_ES, mixed), 60))
        assert len(out) == len(mixed)
        assert out[::2] == [SENTINEL_ES] * (len(batch) + 1)
        expected = cli_many("eng-spa", batch)
        assert [squash(o) for o in out[1::2]] == [squash(e) for e in expected]

    try:
        check()
    finally:
        loop.run_until_complete(engine.close())
        loop.close()
