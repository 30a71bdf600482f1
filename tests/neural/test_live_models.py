"""Models that come and go while a process serves: an installed pair is served at once, a
removed one is refused and unloaded, an upgraded one replaces the loaded model and its
segment-cache version at once; hidden working folders are never listed; at most
``max_models`` load however many pairs are installed."""

from __future__ import annotations

import logging
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dragoman.engines import Pair
from dragoman.engines.ct2 import CTranslate2Engine
from dragoman.engines.model_cache import ModelCache
from dragoman.engines.tiny import build_tiny_models
from dragoman.errors import UnsupportedPair
from dragoman.packages.layout import ModelsFolder
from tests.conftest import CORPUS_DIR
from tests.neural.conftest import EN_FR

SENTENCES = ["The licence is free.", "Copyright holders grant you rights."]


@pytest.fixture(scope="module")
def other_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another tiny en-fr CTranslate2 model: other weights, other outputs."""
    out = tmp_path_factory.mktemp("other")
    built = build_tiny_models(
        out,
        pair=EN_FR,
        seed=7,
        source_corpus=CORPUS_DIR / "en_licenses.txt",
        target_corpus=CORPUS_DIR / "fr_sentences.txt",
    )
    return built["ctranslate2"]


@pytest.fixture
async def engine(models_dir: Path) -> AsyncIterator[tuple[CTranslate2Engine, ModelCache]]:
    cache = ModelCache(2**30, max_models=3)
    served = CTranslate2Engine(models_dir, cache=cache, compute_type="float32", threads=1)
    yield served, cache
    await served.close()


async def alone(model: Path, pair: Pair) -> list[str]:
    """What ``model`` gives, served on its own."""
    folder = model.parent.parent
    served = CTranslate2Engine(folder, cache=ModelCache(2**30), compute_type="float32")
    try:
        return await served.translate(pair, SENTENCES)
    finally:
        await served.close()


async def test_an_upgrade_replaces_the_loaded_model_and_its_version_at_once(
    engine: tuple[CTranslate2Engine, ModelCache],
    models_dir: Path,
    other_model: Path,
    tmp_path: Path,
) -> None:
    served, cache = engine
    before = await served.translate(EN_FR, SENTENCES)
    version = served.version(EN_FR)
    staged = tmp_path / "staged"
    shutil.copytree(other_model, staged)
    expected = await alone(other_model, EN_FR)
    assert expected != before

    ModelsFolder(models_dir).put(staged, EN_FR, "ctranslate2")

    assert served.version(EN_FR) != version
    assert await served.translate(EN_FR, SENTENCES) == expected
    (loaded,) = cache.loaded()
    assert loaded.revision is not None
    assert loaded.revision[0] == (models_dir / "en-fr" / "ctranslate2").stat().st_ino


async def test_a_removed_pair_is_refused_and_its_model_unloaded(
    engine: tuple[CTranslate2Engine, ModelCache], models_dir: Path
) -> None:
    served, cache = engine
    await served.translate(EN_FR, SENTENCES)
    assert served.warm_pairs() == {EN_FR}

    ModelsFolder(models_dir).take_out(EN_FR, "ctranslate2")

    assert EN_FR not in served.pairs()
    assert cache.loaded() == [] and served.warm_pairs() == frozenset()
    with pytest.raises(UnsupportedPair):
        await served.translate(EN_FR, SENTENCES)


async def test_hidden_working_folders_are_neither_listed_nor_warned_about(
    engine: tuple[CTranslate2Engine, ModelCache],
    models_dir: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    served, _ = engine
    shutil.copytree(models_dir / "en-fr", models_dir / ".staging" / "ctranslate2")
    shutil.copytree(models_dir / "en-fr", models_dir / ".trash")
    with caplog.at_level(logging.WARNING):
        assert served.pairs() == {EN_FR, Pair("en", "de")}
    assert caplog.records == []


async def test_fifty_pairs_installed_load_at_most_the_maximum(
    engine: tuple[CTranslate2Engine, ModelCache], models_dir: Path
) -> None:
    served, cache = engine
    codes = ["de", "es", "it", "pt", "nl", "sv", "da", "fi", "pl", "cs"]
    sources = ["en", "fr", "es", "ca", "eu"]
    pairs = [Pair(s, t) for s in sources for t in codes if s != t][:50]
    for pair in pairs:
        target = models_dir / str(pair) / "ctranslate2"
        if not target.exists():
            target.parent.mkdir(exist_ok=True)
            target.symlink_to(models_dir / "en-fr" / "ctranslate2")
    assert len(served.pairs()) >= 50

    most = 0
    for pair in pairs:
        await served.translate(pair, SENTENCES[:1])
        most = max(most, len(cache.loaded()))
        assert len(served.warm_pairs()) <= 3

    assert most == 3
    assert served.warm_pairs() == set(pairs[-3:])
