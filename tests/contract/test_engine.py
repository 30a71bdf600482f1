"""The ``Engine`` contract, run against every engine: Apertium and the two neural engines.

``close()`` is idempotent, and an engine still translates after it: it starts its pipelines or
loads its models again on the next batch.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dragoman.engines import Engine, Pair
from dragoman.engines.apertium import ApertiumEngine
from dragoman.engines.ct2 import CTranslate2Engine
from dragoman.engines.hf import TransformersEngine
from dragoman.engines.model_cache import ModelCache
from dragoman.errors import UnsupportedPair
from tests.integration.conftest import MODES_DIR
from tests.neural.conftest import EN_FR, tiny_models  # noqa: F401  (a fixture)

SEGMENTS = ["Hello world.", "The licence is free.", "", "Copyright 2007."]


@pytest.fixture(params=["apertium", "ctranslate2", "transformers"])
async def engine_and_pair(
    request: pytest.FixtureRequest,
    tiny_models: Path,  # noqa: F811
) -> AsyncIterator[tuple[Engine, Pair]]:
    cache = ModelCache(256 * 1024 * 1024)
    engines: dict[str, tuple[Engine, Pair]] = {
        "apertium": (ApertiumEngine(MODES_DIR, pipelines_per_pair=1), Pair("en", "es")),
        "ctranslate2": (CTranslate2Engine(tiny_models, cache=cache, max_output_tokens=16), EN_FR),
        "transformers": (TransformersEngine(tiny_models, cache=cache, max_output_tokens=16), EN_FR),
    }
    engine, pair = engines[request.param]
    yield engine, pair
    await engine.close()


def test_it_is_an_engine_that_says_whether_it_runs_on_a_gpu(
    engine_and_pair: tuple[Engine, Pair],
) -> None:
    engine, pair = engine_and_pair
    assert isinstance(engine, Engine)
    assert isinstance(engine.gpu_capable, bool)
    assert pair in engine.pairs()


async def test_it_gives_one_translation_per_segment_in_order(
    engine_and_pair: tuple[Engine, Pair],
) -> None:
    engine, pair = engine_and_pair

    together = await engine.translate(pair, SEGMENTS)

    assert len(together) == len(SEGMENTS)
    assert all(isinstance(text, str) for text in together)
    assert together == [(await engine.translate(pair, [s]))[0] for s in SEGMENTS]
    assert together[2].strip() == ""


async def test_no_segments_give_no_translations(engine_and_pair: tuple[Engine, Pair]) -> None:
    engine, pair = engine_and_pair
    assert await engine.translate(pair, []) == []


async def test_a_pair_is_warm_after_a_translation(engine_and_pair: tuple[Engine, Pair]) -> None:
    engine, pair = engine_and_pair

    await engine.translate(pair, ["Hello world."])

    assert pair in engine.warm_pairs()


async def test_close_is_idempotent_and_the_engine_translates_after_it(
    engine_and_pair: tuple[Engine, Pair],
) -> None:
    engine, pair = engine_and_pair
    before = await engine.translate(pair, ["Hello world."])

    await engine.close()
    await engine.close()

    assert await engine.translate(pair, ["Hello world."]) == before


async def test_its_version_is_stable_and_it_refuses_a_pair_it_does_not_serve(
    engine_and_pair: tuple[Engine, Pair],
) -> None:
    engine, pair = engine_and_pair
    version = engine.version(pair)
    assert isinstance(version, str) and version
    await engine.translate(pair, ["Hello world."])
    assert engine.version(pair) == version
    with pytest.raises(UnsupportedPair):
        engine.version(Pair("xh", "zu"))
