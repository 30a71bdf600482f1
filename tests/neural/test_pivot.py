"""Neural models beside Apertium's pairs: a pair's configured default among several engines,
and pivot pairs whose legs are neural, Apertium, or one of each."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.api.app import create_app
from dragoman.engines import Pair
from dragoman.services import EmbeddedService
from tests.api.helpers import finished
from tests.conftest import stop_service
from tests.neural.conftest import EN_FR

TEXTS = ["The cat sleeps in the house.", "", "Good morning."]


@pytest.fixture
async def service(
    make_settings: Any, tiny_models: Path, tmp_path: Path
) -> AsyncIterator[tuple[EmbeddedService, httpx.AsyncClient]]:
    """en-fr and a copy of it as en-es (beside Apertium's) and as fr-de; Apertium has ca-en."""
    models = tmp_path / "models"
    for name in (str(EN_FR), "en-es", "fr-de"):
        shutil.copytree(tiny_models / str(EN_FR), models / name)
    settings = make_settings(
        models_dir=models,
        ct2_compute_type="float32",
        neural_threads=1,
        pair_engines="en-es=apertium",
        cpu_max_workers=1,
    )
    service = EmbeddedService(settings)
    await service.start()
    app = create_app(service, manage_lifecycle=False)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
    yield service, client
    await client.aclose()
    await stop_service(service)


async def translate(client: httpx.AsyncClient, source: str, target: str, **extra: Any) -> Any:
    body = {"source_lang": source, "target_lang": target, "segments": TEXTS, **extra}
    response = await client.post("/v1/translate", json=body)
    assert response.status_code == 200, response.text
    return response.json()["translations"]


async def test_the_configured_default_serves_a_pair_of_three_engines(
    service: tuple[EmbeddedService, httpx.AsyncClient],
) -> None:
    _, client = service
    pairs = {
        (p["source"], p["target"]): p for p in (await client.get("/v1/languages")).json()["pairs"]
    }
    assert pairs[("en", "es")]["engines"] == ["apertium", "ctranslate2", "transformers"]
    default = await translate(client, "en", "es")
    assert default == await translate(client, "en", "es", engine="apertium")
    assert default != await translate(client, "en", "es", engine="ctranslate2")
    assert pairs[("en", "fr")]["engines"][0] == "ctranslate2"  # engine_order elsewhere


async def test_a_job_may_still_name_any_engine_of_the_pair(
    service: tuple[EmbeddedService, httpx.AsyncClient],
) -> None:
    embedded, client = service
    for engine in (None, "transformers"):
        body = {
            "source_lang": "en",
            "target_lang": "es",
            "documents": [{"name": "d.txt", "segments": TEXTS}],
            **({"engine": engine} if engine else {}),
        }
        created = await client.post("/v1/jobs", json=body)
        assert created.status_code == 202, created.text
        assert (await finished(client, created.json()["id"], 60))["status"] == "succeeded"
        stored = await embedded.store.get(created.json()["id"])
        assert stored is not None and stored.engine == (engine or "apertium")


@pytest.mark.parametrize(
    ("source", "via", "target"),
    [("en", "fr", "de"), ("ca", "en", "fr")],  # neural legs; an Apertium leg then a neural one
)
async def test_a_pivot_pair_translates_as_its_two_legs_do(
    service: tuple[EmbeddedService, httpx.AsyncClient], source: str, via: str, target: str
) -> None:
    embedded, client = service
    pairs = {
        (p["source"], p["target"]): p for p in (await client.get("/v1/languages")).json()["pairs"]
    }
    assert pairs[(source, target)]["engines"] == ["pivot"]
    assert pairs[(source, target)]["pivot"] == via
    middle = await translate(client, source, via)
    expected = (
        await client.post(
            "/v1/translate", json={"source_lang": via, "target_lang": target, "segments": middle}
        )
    ).json()["translations"]
    assert await translate(client, source, target) == expected
    assert await translate(client, source, target, engine="pivot") == expected
    neural_only = source == "en"
    assert embedded.engines.resolve(Pair(source, target)).gpu_capable is neural_only
