"""The neural engines inside the service: languages, engine choice, jobs batched across
jobs and shards, over the real tiny models and the embedded deployment."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.api.app import create_app
from dragoman.engines.ct2 import CTranslate2Engine
from dragoman.engines.model_cache import ModelCache
from dragoman.services import EmbeddedService
from tests.conftest import CORPUS_DIR, stop_service
from tests.neural.conftest import EN_FR


@pytest.fixture
async def make_neural(make_settings: Any, models_dir: Path) -> AsyncIterator[Any]:
    """An embedded service over the tiny models (CTranslate2 in float32), and its client."""
    made: list[tuple[EmbeddedService, httpx.AsyncClient]] = []

    async def make(**overrides: Any) -> tuple[EmbeddedService, httpx.AsyncClient]:
        settings = make_settings(
            **{
                "models_dir": models_dir,
                "ct2_compute_type": "float32",
                "neural_threads": 1,
                **overrides,
            }
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
async def neural(make_neural: Any) -> tuple[EmbeddedService, httpx.AsyncClient]:
    made: tuple[EmbeddedService, httpx.AsyncClient] = await make_neural(
        cpu_max_workers=1, batch_jobs=16, chunk_segments=512
    )
    return made


def corpus(count: int, offset: int = 0) -> list[str]:
    lines = [
        line
        for line in (CORPUS_DIR / "en_licenses.txt").read_text("utf-8").splitlines()
        if line.strip()
    ]
    return [lines[(offset + k) % len(lines)] for k in range(count)]


async def alone(models_dir: Path, segments: list[str]) -> list[str]:
    """Each segment translated on its own by a fresh engine: the reference."""
    engine = CTranslate2Engine(
        models_dir, cache=ModelCache(2**30), compute_type="float32", threads=1
    )
    try:
        return [(await engine.translate(EN_FR, [segment]))[0] for segment in segments]
    finally:
        await engine.close()


async def run_job(client: httpx.AsyncClient, segments: list[str], **extra: Any) -> str:
    body = {
        "source_lang": "en",
        "target_lang": "fr",
        "documents": [{"name": "d.txt", "segments": segments}],
        **extra,
    }
    response = await client.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


async def finished(client: httpx.AsyncClient, job_id: str) -> dict[str, Any]:
    for _ in range(600):
        job: dict[str, Any] = (await client.get(f"/v1/jobs/{job_id}")).json()
        if job["status"] in {"succeeded", "failed", "cancelled"}:
            return job
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


async def result(client: httpx.AsyncClient, job_id: str) -> list[str | None]:
    body = (await client.get(f"/v1/jobs/{job_id}/result")).json()
    return [segment for doc in body["documents"] for segment in doc["segments"]]


async def test_languages_list_each_pair_with_its_engines_default_first(
    neural: tuple[EmbeddedService, httpx.AsyncClient],
) -> None:
    _, client = neural
    pairs = (await client.get("/v1/languages")).json()["pairs"]
    by_pair = {(p["source"], p["target"]): p["engines"] for p in pairs}
    assert by_pair[("en", "fr")] == ["ctranslate2", "transformers"]
    assert by_pair[("en", "es")] == ["apertium"]


async def test_a_job_names_its_engine_or_gets_the_pairs_default(
    neural: tuple[EmbeddedService, httpx.AsyncClient],
) -> None:
    service, client = neural
    default = await run_job(client, corpus(3))
    named = await run_job(client, corpus(3), engine="transformers")
    assert (await finished(client, default))["status"] == "succeeded"
    assert (await finished(client, named))["status"] == "succeeded"
    stored = [await service.store.get(default), await service.store.get(named)]
    assert [job.engine for job in stored if job] == ["ctranslate2", "transformers"]
    assert all(isinstance(s, str) for s in await result(client, named))


async def test_an_engine_that_does_not_serve_the_pair_is_a_clear_4xx(
    neural: tuple[EmbeddedService, httpx.AsyncClient],
) -> None:
    _, client = neural
    body = {
        "source_lang": "en",
        "target_lang": "fr",
        "engine": "apertium",
        "documents": [{"name": "d.txt", "segments": ["Hello."]}],
    }
    response = await client.post("/v1/jobs", json=body)
    assert 400 <= response.status_code < 500
    assert response.json()["error"]["code"] == "unsupported_language_pair"


async def test_jobs_batched_together_each_get_their_own_translations(
    neural: tuple[EmbeddedService, httpx.AsyncClient], models_dir: Path
) -> None:
    service, client = neural
    texts = [corpus(8 + 2 * i, offset=11 * i) for i in range(8)]
    reference = await alone(models_dir, sorted({s for job in texts for s in job}))
    expected = dict(zip(sorted({s for job in texts for s in job}), reference, strict=True))
    blocker = await run_job(client, corpus(150))  # keeps the only worker busy meanwhile
    ids = [await run_job(client, segments) for segments in texts]
    for job_id in [blocker, *ids]:
        assert (await finished(client, job_id))["status"] == "succeeded"
    for job_id, segments in zip(ids, texts, strict=True):
        assert await result(client, job_id) == [expected[s] for s in segments]
    # They did share engine batches: fewer messages than jobs went to the worker.
    registry = service.metrics.registry
    jobs = registry.get_sample_value("dragoman_jobs_per_message_sum", {"pool": "cpu"})
    messages = registry.get_sample_value("dragoman_jobs_per_message_count", {"pool": "cpu"})
    assert jobs == len(ids) + 1
    assert messages is not None and messages < jobs


async def test_a_sharded_neural_job_merges_its_shards_in_order(
    make_neural: Any, models_dir: Path
) -> None:
    service, client = await make_neural(cpu_max_workers=2, shard_segments=50, chunk_segments=32)
    segments = corpus(180, offset=5)
    job_id = await run_job(client, segments)
    job = await finished(client, job_id)
    assert job["status"] == "succeeded"
    assert job["segments_done"] == 180
    expected = dict(zip(segments, await alone(models_dir, segments), strict=True))
    assert await result(client, job_id) == [expected[s] for s in segments]
    stored = await service.store.get(job_id)
    assert stored is not None and stored.shards == 4
