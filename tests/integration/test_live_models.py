"""The distributed deployment and a models folder that the API and the workers share: a model
moved in while they run is served by a worker process, an upgrade is translated by the new
model (not the one the worker has loaded, nor the segment cache's entries), and a removed one
is refused with a 4xx. Real processes over PostgreSQL and RabbitMQ."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.engines import Pair
from dragoman.engines.ct2 import CTranslate2Engine
from dragoman.engines.model_cache import ModelCache
from dragoman.engines.tiny import build_tiny_models
from tests.conftest import CORPUS_DIR
from tests.integration.cluster import Cluster, Process, client, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

EN_IT = Pair("en", "it")
SEGMENTS = ["The licence is free.", "Copyright holders grant you rights."]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two tiny CTranslate2 models of one pair: other weights, other outputs."""
    return [
        build_tiny_models(
            tmp_path_factory.mktemp(f"tiny-{seed}"),
            pair=EN_IT,
            seed=seed,
            source_corpus=CORPUS_DIR / "en_licenses.txt",
            target_corpus=CORPUS_DIR / "fr_sentences.txt",
        )["ctranslate2"]
        for seed in (0, 7)
    ]


def alone(model: Path) -> list[str]:
    """What ``model`` gives for ``SEGMENTS``, served in this process on its own."""

    async def run() -> list[str]:
        engine = CTranslate2Engine(
            model.parent.parent, cache=ModelCache(2**30), compute_type="float32", threads=1
        )
        try:
            return await engine.translate(EN_IT, SEGMENTS)
        finally:
            await engine.close()

    return asyncio.run(run())


def move_in(model: Path, models: Path) -> None:
    """As the installer does: staged in a hidden folder, renamed into place."""
    staged = models / ".staging" / "next"
    shutil.copytree(model, staged)
    target = models / str(EN_IT) / "ctranslate2"
    target.parent.mkdir(exist_ok=True)
    if target.exists():
        os.rename(target, models / ".staging" / "old")
    os.rename(staged, target)
    shutil.rmtree(models / ".staging")


def job(api: Process) -> httpx.Response:
    body = {
        "source_lang": "en",
        "target_lang": "it",
        "cache": False,  # through a worker, whatever ran before
        "documents": [{"name": "a.txt", "segments": SEGMENTS}],
    }
    with client(api) as http:
        return http.post("/v1/jobs", json=body)


def sync(api: Process) -> httpx.Response:
    body = {"source_lang": "en", "target_lang": "it", "segments": SEGMENTS}
    with client(api) as http:
        return http.post("/v1/translate", json=body)


def job_result(api: Process) -> list[str]:
    answer = job(api)
    assert answer.status_code == 202, answer.text
    job_id = answer.json()["id"]
    with client(api) as http:

        def finished() -> dict[str, Any] | None:
            state: dict[str, Any] = http.get(f"/v1/jobs/{job_id}").json()
            return state if state["status"] in {"succeeded", "failed", "cancelled"} else None

        state = wait_for(finished, 60, f"job {job_id}")
        assert state["status"] == "succeeded", state
        (document,) = http.get(f"/v1/jobs/{job_id}/result").json()["documents"]
    segments: list[str] = document["segments"]
    return segments


def listed(api: Process) -> set[str]:
    with client(api) as http:
        pairs = http.get("/v1/languages").json()["pairs"]
    return {f"{p['source']}-{p['target']}" for p in pairs}


def test_workers_serve_a_model_moved_in_upgraded_and_removed_while_they_run(
    tmp_path: Path, tiny: list[Path]
) -> None:
    models = tmp_path / "models"
    models.mkdir()
    first, second = tiny
    cluster = Cluster(
        tmp_path,
        DRAGOMAN_MODELS_DIR=str(models),
        DRAGOMAN_CT2_COMPUTE_TYPE="float32",
        DRAGOMAN_NEURAL_THREADS="1",
    )
    try:
        api = cluster.api()
        cluster.watchdog()
        cluster.worker()
        assert job(api).status_code == 422

        move_in(first, models)
        assert "en-it" in listed(api)
        assert job_result(api) == alone(first)
        assert sync(api).json()["translations"] == alone(first)  # now in the segment cache

        move_in(second, models)
        assert job_result(api) == alone(second)
        assert sync(api).json()["translations"] == alone(second)

        os.rename(models / str(EN_IT), models / ".trash")
        shutil.rmtree(models / ".trash")
        assert "en-it" not in listed(api)
        for refused in (job(api), sync(api)):
            assert refused.status_code == 422, refused.text
            assert refused.json()["error"]["code"] == "unsupported_language_pair"
    finally:
        cluster.close()
