"""The neural engines on tiny real models: batching is invisible, models load and unload."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dragoman.engines import Engine, Pair
from dragoman.engines.ct2 import CTranslate2Engine
from dragoman.engines.hf import TransformersEngine, length_batches
from dragoman.engines.model_cache import ModelCache, ModelKey, directory_size
from dragoman.engines.neural import ModelCatalog
from dragoman.errors import EngineError, UnsupportedPair
from tests.conftest import CORPUS_DIR
from tests.neural.conftest import EN_FR

EN_DE = Pair("en", "de")
ENGINES = ["ctranslate2", "transformers"]
MB = 1024 * 1024


def make_engine(
    name: str, models_dir: Path, cache: ModelCache, max_output_tokens: int = 16
) -> CTranslate2Engine | TransformersEngine:
    # float32 on both: int8 is not bit-identical across batch shapes, and the tests compare.
    if name == "ctranslate2":
        return CTranslate2Engine(
            models_dir, cache=cache, compute_type="float32", max_output_tokens=max_output_tokens
        )
    return TransformersEngine(
        models_dir, cache=cache, dtype="float32", max_output_tokens=max_output_tokens
    )


@pytest.fixture(params=ENGINES)
async def engine(request: pytest.FixtureRequest, models_dir: Path) -> AsyncIterator[Engine]:
    engine = make_engine(request.param, models_dir, ModelCache(512 * MB))
    yield engine
    await engine.close()


def corpus_segments(count: int) -> list[str]:
    """``count`` corpus lines, repeated, with the edge cases among them."""
    lines = (CORPUS_DIR / "en_licenses.txt").read_text(encoding="utf-8").splitlines()
    lines = [line for line in lines if line.strip()]
    edge = ["", "   ", " ".join(lines[:40]), "Ça coûte 5 € — naïve café, 東京, emoji 🙂."]
    repeated = [lines[i % len(lines)] for i in range(count - len(edge))]
    return repeated[:100] + edge + repeated[100:]


async def test_each_segment_gets_in_a_batch_of_500_what_it_gets_alone(engine: Engine) -> None:
    segments = corpus_segments(500)

    together = await engine.translate(EN_FR, segments)

    assert len(together) == 500
    # Each distinct segment alone is ~100 model calls: minutes on a busy CPU. The edge cases,
    # the shortest and longest lines and a spread of the rest tell padding or order errors.
    distinct = sorted(set(segments), key=len)
    probes = {*distinct[:8], *distinct[-8:], *distinct[:: max(1, len(distinct) // 16)]}
    alone = {text: (await engine.translate(EN_FR, [text]))[0] for text in probes}
    assert [alone[t] for t in segments if t in alone] == [
        out for t, out in zip(segments, together, strict=True) if t in alone
    ]
    assert len(set(together)) > 5  # a swap of results would not go unseen


async def test_blank_segments_give_blank_translations_without_loading_a_model(
    engine: Engine,
) -> None:
    assert await engine.translate(EN_FR, ["", " \n"]) == ["", ""]
    assert engine.warm_pairs() == frozenset()

    [hello] = await engine.translate(EN_FR, ["Hello."])

    assert await engine.translate(EN_FR, ["", "Hello.", " \n"]) == ["", hello, ""]


async def test_pairs_are_the_model_folders_and_warm_pairs_the_loaded_ones(engine: Engine) -> None:
    assert engine.pairs() == {EN_FR, EN_DE}
    assert engine.warm_pairs() == frozenset()

    await engine.translate(EN_DE, ["Hello."])

    assert engine.warm_pairs() == {EN_DE}


async def test_closing_unloads_and_the_engine_still_works_after(engine: Engine) -> None:
    first = await engine.translate(EN_FR, ["Hello."])
    await engine.close()
    assert engine.warm_pairs() == frozenset()
    await engine.close()

    assert await engine.translate(EN_FR, ["Hello."]) == first


async def test_an_unknown_pair_is_unsupported(engine: Engine) -> None:
    with pytest.raises(UnsupportedPair):
        await engine.translate(Pair("fr", "en"), ["Bonjour."])


@pytest.mark.parametrize("name", ENGINES)
async def test_a_broken_model_is_an_engine_error_naming_its_directory(
    name: str, models_dir: Path
) -> None:
    model_dir = models_dir / "en-fr" / name
    weights = "model.bin" if name == "ctranslate2" else "model.safetensors"
    (model_dir / weights).write_bytes(b"not a model" * 100)
    engine = make_engine(name, models_dir, ModelCache(512 * MB))

    with pytest.raises(EngineError, match=str(model_dir)):
        await engine.translate(EN_FR, ["Hello."])
    await engine.close()


@pytest.mark.parametrize("name", ENGINES)
async def test_loading_a_second_model_evicts_the_first_when_both_do_not_fit(
    name: str, models_dir: Path
) -> None:
    size = directory_size(models_dir / "en-fr" / name)
    engine = make_engine(name, models_dir, ModelCache(size * 3 // 2))

    await engine.translate(EN_FR, ["Hello."])
    await engine.translate(EN_DE, ["Hello."])

    assert engine.warm_pairs() == {EN_DE}
    await engine.close()


async def test_a_model_in_use_is_not_evicted(models_dir: Path) -> None:
    path = models_dir / "en-fr" / "ctranslate2"
    cache = ModelCache(directory_size(path) * 3 // 2)
    engine = make_engine("ctranslate2", models_dir, cache)
    await engine.translate(EN_FR, ["Hello."])
    (key,) = cache.loaded()  # the key the engine lends en-fr under

    with cache.use(key, lambda: pytest.fail("en-fr is loaded")):  # as a running batch would
        await engine.translate(EN_DE, ["Hello."])
        assert engine.warm_pairs() == {EN_FR, EN_DE}

    assert len(cache.loaded()) == 1
    await engine.close()


async def test_an_argos_translate_package_loads_and_translates(models_dir: Path) -> None:
    package = models_dir / "en-es" / "ctranslate2"
    shutil.copytree(models_dir / "en-fr" / "ctranslate2", package / "model")
    shutil.move(package / "model" / "source.spm", package / "sentencepiece.model")
    (package / "metadata.json").write_text('{"from_code": "en", "to_code": "es"}')
    engine = make_engine("ctranslate2", models_dir, ModelCache(512 * MB))

    [text] = await engine.translate(Pair("en", "es"), ["Hello world."])

    assert text.strip()
    await engine.close()


async def test_an_nllb_style_target_code_is_forced_first(models_dir: Path) -> None:
    model_dir = models_dir / "en-fr" / "transformers"
    (model_dir / "dragoman.json").write_text(
        json.dumps({"source_code": "en", "target_code": "▁distribute"})
    )
    engine = make_engine("transformers", models_dir, ModelCache(512 * MB))

    texts = await engine.translate(EN_FR, ["Hello.", "Copyright notice."])

    assert all(text.startswith("distribute") for text in texts)
    await engine.close()


def test_folders_not_named_as_pairs_are_skipped_and_codes_made_canonical(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("eng-fra", "english-french", "en", "de-es"):
        (tmp_path / name / "ctranslate2").mkdir(parents=True)
    (tmp_path / "it-en" / "transformers").mkdir(parents=True)
    catalog = ModelCatalog(tmp_path, "ctranslate2")

    models = catalog.models()
    catalog.models()

    assert len(caplog.records) == 2  # english-french and en, once each
    assert models == {
        Pair("en", "fr"): tmp_path / "eng-fra" / "ctranslate2",
        Pair("de", "es"): tmp_path / "de-es" / "ctranslate2",
    }


def test_length_batches_keep_padded_size_within_the_budget() -> None:
    lengths = [5, 1, 9, 3, 3, 20]

    batches = length_batches(lengths, max_tokens=10)

    assert sorted(i for batch in batches for i in batch) == list(range(6))
    assert [[lengths[i] for i in batch] for batch in batches] == [[1, 3, 3], [5], [9], [20]]


class FakeModel:
    def __init__(self) -> None:
        self.unloaded = False

    def unload(self) -> None:
        self.unloaded = True


def fake_key(tmp_path: Path, name: str, size: int) -> ModelKey:
    path = tmp_path / name
    path.mkdir()
    (path / "weights").write_bytes(b"\0" * size)
    return ModelKey("fake", "cpu", Pair("en", name), path)


def test_the_least_recently_used_idle_model_goes_first(tmp_path: Path) -> None:
    cache = ModelCache(250)
    a, b, c = (fake_key(tmp_path, name, 100) for name in ("fr", "de", "es"))
    models = {}
    for key in (a, b, a, c):
        with cache.use(key, FakeModel) as model:
            models[key] = model

    assert cache.loaded() == [a, c]
    assert models[b].unloaded and not models[a].unloaded


def test_a_model_larger_than_the_budget_loads_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = ModelCache(150)
    small, big = fake_key(tmp_path, "fr", 100), fake_key(tmp_path, "de", 200)
    with cache.use(small, FakeModel):
        pass

    with cache.use(big, FakeModel):
        assert cache.loaded() == [big]
    assert "more than the whole model budget" in caplog.text
    assert cache.loaded() == [big]


def test_concurrent_users_of_one_model_load_it_once(tmp_path: Path) -> None:
    cache = ModelCache(1000)
    key = fake_key(tmp_path, "fr", 100)
    loads = []

    def load() -> FakeModel:
        loads.append(1)
        time.sleep(0.1)
        return FakeModel()

    def use() -> None:
        with cache.use(key, load):
            pass

    threads = [threading.Thread(target=use) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(loads) == 1


def test_a_failed_load_leaves_nothing_behind_and_the_next_use_tries_again(tmp_path: Path) -> None:
    cache = ModelCache(1000)
    key = fake_key(tmp_path, "fr", 100)

    def fail() -> FakeModel:
        raise EngineError("broken")

    with pytest.raises(EngineError), cache.use(key, fail):
        pass
    assert cache.loaded() == []

    with cache.use(key, FakeModel) as model:
        assert isinstance(model, FakeModel)


def test_unloading_a_model_in_use_waits_until_it_is_given_back(tmp_path: Path) -> None:
    cache = ModelCache(1000)
    key = fake_key(tmp_path, "fr", 100)

    with cache.use(key, FakeModel) as model:
        cache.unload(lambda _: True)
        assert not model.unloaded

    assert model.unloaded
    assert cache.loaded() == []


async def test_inline_codes_survive_a_neural_engine_in_order_and_at_the_edges(
    engine: Engine,
) -> None:
    from dragoman.engines.markup import translate_stored
    from dragoman.formats.markup import parse_stored, same_codes

    sources = [
        "<g1>This License</g1> applies to <g2>any <g3>program</g3></g2> or <x4/> work.",
        "  <g1>You may copy it.</g1> ",
    ]
    out = await translate_stored(engine, EN_FR, sources)
    for source, translated in zip(sources, out, strict=True):
        assert same_codes(parse_stored(source), parse_stored(translated)), translated
    # The pair that spans the whole text and the outer whitespace stay where they were.
    assert out[1].startswith("  <g1>") and out[1].endswith("</g1> ")
    assert out[0].startswith("<g1>")


class _Clock:
    def __init__(self) -> None:
        self.now = time.time() + 10.0  # well after the folders' own changes

    def __call__(self) -> float:
        return self.now


def counted_scans(catalog: ModelCatalog, monkeypatch: pytest.MonkeyPatch) -> list[None]:
    """One entry per scan of ``catalog``'s folders from now on."""
    scans: list[None] = []
    scan = catalog._scan

    def counted() -> tuple[dict[Pair, Path], list[tuple[str, int]]]:
        scans.append(None)
        return scan()

    monkeypatch.setattr(catalog, "_scan", counted)
    return scans


def test_the_catalog_is_read_again_when_its_folder_changes_and_otherwise_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "en-fr" / "ctranslate2").mkdir(parents=True)
    clock = _Clock()
    catalog = ModelCatalog(tmp_path, "ctranslate2", clock=clock)
    scans = counted_scans(catalog, monkeypatch)
    assert set(catalog.models()) == {Pair("en", "fr")}
    for _ in range(5):
        assert set(catalog.models()) == {Pair("en", "fr")}
    assert len(scans) == 1  # nothing changed: one scan, then a stat of each folder per call

    # An install renames a folder into place: the folder changes, and the next call sees it
    # (a tick of the file system's clock later, so that its time changes).
    time.sleep(0.02)
    staged = tmp_path / ".staging-de-en"
    (staged / "ctranslate2").mkdir(parents=True)
    staged.rename(tmp_path / "de-en")
    clock.now = time.time() + 10.0
    assert set(catalog.models()) == {Pair("en", "fr"), Pair("de", "en")}
    # A removal too.
    time.sleep(0.02)
    (tmp_path / "en-fr" / "ctranslate2").rmdir()
    (tmp_path / "en-fr").rmdir()
    clock.now = time.time() + 10.0
    assert set(catalog.models()) == {Pair("de", "en")}


def test_a_model_folder_changed_in_place_is_seen_at_once(tmp_path: Path) -> None:
    """Adding or removing an engine's folder inside a pair's folder leaves the models
    folder as it was: the pair's folder says it changed."""
    (tmp_path / "en-fr").mkdir()
    clock = _Clock()
    catalog = ModelCatalog(tmp_path, "ctranslate2", clock=clock)
    assert catalog.models() == {}
    time.sleep(0.02)
    (tmp_path / "en-fr" / "ctranslate2").mkdir()
    assert set(catalog.models()) == {Pair("en", "fr")}
    time.sleep(0.02)
    (tmp_path / "en-fr" / "ctranslate2").rmdir()
    assert catalog.models() == {}


def test_a_folder_changed_just_before_its_scan_is_scanned_again(tmp_path: Path) -> None:
    """Two changes within one tick of the file system's clock leave it the same time: a
    scan made that close to the last change is not trusted."""
    catalog = ModelCatalog(tmp_path, "ctranslate2")  # the real clock: the folder is new
    assert catalog.models() == {}
    (tmp_path / "en-fr" / "ctranslate2").mkdir(parents=True)
    assert set(catalog.models()) == {Pair("en", "fr")}


def test_a_models_folder_not_there_yet_is_not_scanned_per_call_and_is_seen_once_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models"
    clock = _Clock()
    catalog = ModelCatalog(models, "ctranslate2", clock=clock)
    scans = counted_scans(catalog, monkeypatch)
    for _ in range(5):
        assert catalog.pairs() == frozenset()
    assert len(scans) == 1
    (models / "en-fr" / "ctranslate2").mkdir(parents=True)
    clock.now = time.time() + 10.0
    assert catalog.pairs() == {Pair("en", "fr")}
    # The same set, the same object, while nothing changes: the engines' table is kept.
    assert catalog.pairs() is catalog.pairs()
