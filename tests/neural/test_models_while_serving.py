"""Models that come and go while the embedded service answers: a model moved in is listed and
served at once, a removed one is a 4xx, a replaced one translates (neither its old model nor
its old cached segments), hidden working folders stay unseen, ``GET /v1/models`` tells what
each model is, and ``DRAGOMAN_MAX_LOADED_MODELS`` bounds what loads."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.api.app import create_app
from dragoman.engines import Pair
from dragoman.engines.ct2 import CTranslate2Engine
from dragoman.engines.manifest import Manifest, write_manifest
from dragoman.engines.model_cache import ModelCache
from dragoman.engines.tiny import build_tiny_models
from dragoman.services import EmbeddedService
from tests.conftest import CORPUS_DIR, stop_service, wait_until
from tests.neural.conftest import EN_FR

SENTENCES = ["The licence is free.", "Copyright holders grant you rights."]
ATTRIBUTION = "Model licensed CC-BY-4.0: credit its authors (OPUS-MT: Helsinki-NLP)"
MODEL_FIELDS = {
    "source",
    "target",
    "engine",
    "version",
    "licence",
    "attribution",
    "installed_at",
    "origin",
    "sha256",
}

Serving = tuple[EmbeddedService, httpx.AsyncClient]


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
async def make_serving(make_settings: Any, models_dir: Path) -> AsyncIterator[Any]:
    """An embedded service over ``models_dir`` (CTranslate2 in float32), and its client."""
    made: list[Serving] = []

    async def make(**overrides: Any) -> Serving:
        settings = make_settings(
            models_dir=models_dir, ct2_compute_type="float32", neural_threads=1, **overrides
        )
        service = EmbeddedService(settings)
        await service.start()
        app = create_app(service, manage_lifecycle=False)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
        made.append((service, client))
        return service, client

    yield make
    for service, client in made:
        await client.aclose()
        await stop_service(service)


@pytest.fixture
async def serving(make_serving: Any) -> Serving:
    made: Serving = await make_serving(cpu_max_workers=1)
    return made


def move_in(model: Path, models_dir: Path, pair: Pair) -> None:
    """As the installer does: copied to a hidden folder, then renamed into place (an older
    model there renamed away first, then deleted)."""
    staged = models_dir / ".staging" / f"{pair}-{model.parent.name}"
    shutil.copytree(model, staged)
    target = models_dir / str(pair) / "ctranslate2"
    target.parent.mkdir(exist_ok=True)
    if target.exists():
        os.rename(target, models_dir / ".staging" / "old")
    os.rename(staged, target)
    shutil.rmtree(models_dir / ".staging")


def by_hand(model: Path, models_dir: Path, pair: Pair) -> None:
    """As a person does: the old folder deleted, the new one copied to the same path (ext4
    may give the new folder the old one's inode)."""
    target = models_dir / str(pair) / "ctranslate2"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(model, target)


def refilled(model: Path, models_dir: Path, pair: Pair) -> None:
    """The same folder (the same inode), its files deleted and the new model's copied in."""
    target = models_dir / str(pair) / "ctranslate2"
    for old in target.iterdir():
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    shutil.copytree(model, target, dirs_exist_ok=True)


async def alone(model: Path, pair: Pair) -> list[str]:
    """What ``model`` gives for ``SENTENCES``, served on its own."""
    engine = CTranslate2Engine(
        model.parent.parent, cache=ModelCache(2**30), compute_type="float32", threads=1
    )
    try:
        return await engine.translate(pair, SENTENCES)
    finally:
        await engine.close()


async def listed(client: httpx.AsyncClient) -> dict[tuple[str, str], dict[str, Any]]:
    answer = await client.get("/v1/languages")
    assert answer.status_code == 200, answer.text
    return {(p["source"], p["target"]): p for p in answer.json()["pairs"]}


async def translate(client: httpx.AsyncClient, pair: Pair, **extra: Any) -> httpx.Response:
    body = {"source_lang": pair.source, "target_lang": pair.target, "segments": SENTENCES}
    return await client.post("/v1/translate", json={**body, **extra})


async def test_a_model_moved_in_while_the_service_runs_is_listed_and_served(
    serving: Serving, models_dir: Path
) -> None:
    _, client = serving
    # The OpenAPI description is built once, with the pairs of that moment; requests are
    # validated by the route's own models, never by it.
    assert (await client.get("/openapi.json")).status_code == 200
    en_it = Pair("en", "it")
    assert ("en", "it") not in await listed(client)
    assert (await translate(client, en_it)).status_code == 422

    move_in(models_dir / "en-fr" / "ctranslate2", models_dir, en_it)

    entry = (await listed(client))[("en", "it")]
    assert entry["engines"] == ["ctranslate2"]
    assert (entry["licence"], entry["attribution"]) == (None, None)  # laid out without manifest
    answer = await translate(client, en_it)
    assert answer.status_code == 200, answer.text
    assert answer.json()["translations"] == await alone(models_dir / "en-fr" / "ctranslate2", EN_FR)


@pytest.mark.parametrize("remove", ["renamed away", "deleted by hand"])
async def test_a_removed_model_is_refused_with_a_4xx_and_unloaded(
    serving: Serving, models_dir: Path, remove: str, caplog: pytest.LogCaptureFixture
) -> None:
    service, client = serving
    en_de = Pair("en", "de")
    assert (await translate(client, en_de)).status_code == 200
    assert "ctranslate2:en-de" in service.engines.warm_models()

    target = models_dir / "en-de" / "ctranslate2"
    with caplog.at_level(logging.INFO, logger="dragoman.engines.model_cache"):
        if remove == "renamed away":
            os.rename(target, models_dir / ".trash")
            shutil.rmtree(models_dir / ".trash")
        else:
            shutil.rmtree(target)

        async def unloaded() -> bool:
            # With no request at all: the worker's heartbeat asks what is warm.
            return any("unloaded ctranslate2 model for en-de" in r.message for r in caplog.records)

        await wait_until(unloaded, timeout_s=5)

    assert ("en", "de") in await listed(client)  # still served by its transformers model
    for answer in [
        await translate(client, en_de, engine="ctranslate2"),
        await client.post(
            "/v1/jobs",
            json={
                "source_lang": "en",
                "target_lang": "de",
                "engine": "ctranslate2",
                "documents": [{"name": "a.txt", "segments": SENTENCES}],
            },
        ),
    ]:
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["code"] == "unsupported_language_pair"
    assert "ctranslate2:en-de" not in service.engines.warm_models()
    shutil.rmtree(models_dir / "en-de")
    assert ("en", "de") not in await listed(client)
    answer = await translate(client, en_de)
    assert answer.status_code == 422 and answer.json()["error"]["message"]


@pytest.mark.parametrize(
    "replace", [move_in, by_hand, refilled], ids=["moved in", "by hand", "refilled"]
)
async def test_a_replaced_model_translates_not_the_old_model_nor_its_cached_segments(
    serving: Serving,
    models_dir: Path,
    other_model: Path,
    replace: Callable[[Path, Path, Pair], None],
) -> None:
    _, client = serving
    first = await translate(client, EN_FR)
    assert first.status_code == 200, first.text
    again = await translate(client, EN_FR)  # now in the segment cache
    assert again.json() == first.json()
    expected = await alone(other_model, EN_FR)
    assert expected != first.json()["translations"]

    replace(other_model, models_dir, EN_FR)

    answer = await translate(client, EN_FR)
    assert answer.status_code == 200, answer.text
    assert answer.json()["translations"] == expected


async def test_hidden_working_folders_are_neither_listed_nor_warned_about(
    serving: Serving, models_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _, client = serving
    before = await listed(client)
    model = models_dir / "en-fr" / "ctranslate2"
    shutil.copytree(model, models_dir / ".staging" / "0a1b" / "ctranslate2")
    shutil.copytree(model, models_dir / ".staging" / "en-it" / "ctranslate2")
    shutil.copytree(model, models_dir / ".en-pt" / "ctranslate2")
    (models_dir / ".locks").mkdir()
    (models_dir / ".locks" / "en-it.lock").touch()

    with caplog.at_level(logging.WARNING):
        assert await listed(client) == before
        models = (await client.get("/v1/models")).json()["models"]
    assert {(m["source"], m["target"]) for m in models} == {("en", "fr"), ("en", "de")}
    assert [r for r in caplog.records if r.name.startswith("dragoman.engines")] == []


async def test_models_lists_each_model_with_its_manifest_or_nulls(
    serving: Serving, models_dir: Path
) -> None:
    _, client = serving
    installed_at = datetime(2026, 12, 4, 11, 11, 48, tzinfo=UTC)
    manifest = Manifest(
        pair="en-fr",
        engine="ctranslate2",
        version="1.9",
        licence="CC-BY-4.0",
        attribution=ATTRIBUTION,
        source="https://example.org/translate-en_fr-1_9.argosmodel",
        sha256="ab" * 32,
        installed_at=installed_at,
    )
    write_manifest(models_dir / "en-fr" / "ctranslate2", manifest)

    answer = await client.get("/v1/models")

    assert answer.status_code == 200, answer.text
    models = answer.json()["models"]
    assert all(set(m) == MODEL_FIELDS for m in models)
    by_key = {(m["source"], m["target"], m["engine"]): m for m in models}
    assert set(by_key) == {
        (source, target, engine)
        for source, target in [("en", "de"), ("en", "fr")]
        for engine in ["ctranslate2", "transformers"]
    }
    assert by_key[("en", "fr", "ctranslate2")] == {
        "source": "en",
        "target": "fr",
        "engine": "ctranslate2",
        "version": "1.9",
        "licence": "CC-BY-4.0",
        "attribution": ATTRIBUTION,
        "installed_at": "2026-12-04T11:11:48Z",
        "origin": "https://example.org/translate-en_fr-1_9.argosmodel",
        "sha256": "ab" * 32,
    }
    hand_laid = by_key[("en", "fr", "transformers")]
    assert {k: v for k, v in hand_laid.items() if v is not None} == {
        "source": "en",
        "target": "fr",
        "engine": "transformers",
    }
    pairs = await listed(client)
    assert (pairs[("en", "fr")]["licence"], pairs[("en", "fr")]["attribution"]) == (
        "CC-BY-4.0",
        ATTRIBUTION,
    )
    assert pairs[("en", "de")]["licence"] is None  # laid out by hand
    assert pairs[("en", "es")]["engines"] == ["apertium"]
    assert (pairs[("en", "es")]["licence"], pairs[("en", "es")]["attribution"]) == (None, None)


async def test_models_needs_a_key_when_keys_are_set(make_serving: Any) -> None:
    _, client = await make_serving(api_keys="alpha:key-a")

    refused = await client.get("/v1/models")
    answer = await client.get("/v1/models", headers={"Authorization": "Bearer key-a"})

    assert refused.status_code == 401 and refused.json()["error"]["code"]
    assert answer.status_code == 200 and answer.json()["models"]


async def test_fifty_pairs_installed_load_at_most_max_loaded_models(
    make_serving: Any, models_dir: Path
) -> None:
    codes = ["it", "pt", "nl", "sv", "da", "fi", "pl", "cs", "ro", "hu"]
    sources = ["ja", "ko", "zh", "ar", "ru"]
    pairs = [Pair(source, target) for source in sources for target in codes]
    for pair in pairs:
        (models_dir / str(pair)).mkdir()
        (models_dir / str(pair) / "ctranslate2").symlink_to(models_dir / "en-fr" / "ctranslate2")
    service, client = await make_serving(max_loaded_models=2, cpu_max_workers=1)
    assert set(map(str, pairs)) <= {f"{s}-{t}" for s, t in await listed(client)}

    for done, pair in enumerate(pairs, start=1):
        answer = await translate(client, pair)
        assert answer.status_code == 200, answer.text
        # Warm routing sees the evictions: what is warm is exactly what is loaded.
        assert service.engines.warm_models() == {
            f"ctranslate2:{recent}" for recent in pairs[max(0, done - 2) : done]
        }
