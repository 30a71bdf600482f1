"""A running service serves a pair installed while it runs, through the sync API and jobs,
and stops offering a removed one with a 4xx."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from dragoman.api.app import create_app
from dragoman.cli import app
from dragoman.services import EmbeddedService
from tests.conftest import stop_service, wait_until
from tests.packages.builders import argos_package


def cli(*args: str) -> Result:
    return CliRunner().invoke(app, ["models", *args], env={"DRAGOMAN_OFFLINE": "1"})


@pytest.fixture
async def client(make_settings: Any, models: Path) -> AsyncIterator[httpx.AsyncClient]:
    await asyncio.to_thread(models.mkdir)
    service = EmbeddedService(make_settings(models_dir=models, neural_threads=1, cpu_max_workers=1))
    await service.start()
    api = create_app(service, manage_lifecycle=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=api), base_url="http://t"
    ) as http:
        yield http
    await stop_service(service)


async def listed(client: httpx.AsyncClient) -> set[tuple[str, str]]:
    pairs = (await client.get("/v1/languages")).json()["pairs"]
    return {(p["source"], p["target"]) for p in pairs}


async def test_a_pair_installed_while_the_service_runs_is_served_then_removed(
    client: httpx.AsyncClient, tiny: dict[str, Path], tmp_path: Path, models: Path
) -> None:
    assert ("en", "de") not in await listed(client)
    package = argos_package(
        tiny["ctranslate2"], tmp_path / "p.argosmodel", source="en", target="de"
    )
    installed = await asyncio.to_thread(
        cli,
        "install",
        "--from",
        str(package),
        "--models-dir",
        str(models),
        "--progress",
        "none",
        "--licence",
        "CC-BY-4.0",
    )
    assert installed.exit_code == 0, installed.output

    assert ("en", "de") in await listed(client)
    languages = (await client.get("/v1/languages")).json()["pairs"]
    (en_de,) = [p for p in languages if (p["source"], p["target"]) == ("en", "de")]
    assert en_de["licence"] == "CC-BY-4.0" and "Helsinki-NLP" in en_de["attribution"]
    (model,) = (await client.get("/v1/models")).json()["models"]
    assert (model["source"], model["target"], model["engine"]) == ("en", "de", "ctranslate2")
    assert (model["version"], model["licence"]) == ("1.0", "CC-BY-4.0")
    assert model["origin"] == str(package.resolve()) and len(model["sha256"]) == 64
    sync = await client.post(
        "/v1/translate",
        json={"source_lang": "en", "target_lang": "de", "segments": ["A free licence."]},
    )
    assert sync.status_code == 200, sync.text
    assert sync.json()["translations"][0].strip()
    job = await client.post(
        "/v1/jobs",
        json={
            "source_lang": "en",
            "target_lang": "de",
            "documents": [{"name": "a", "segments": ["Hello.", "Copyright holders."]}],
            "cache": False,
        },
    )
    assert job.status_code == 202, job.text
    job_url = job.headers["location"]

    async def done() -> bool:
        return (await client.get(job_url)).json()["status"] == "succeeded"

    await wait_until(done, timeout_s=30)

    removed = await asyncio.to_thread(cli, "remove", "en-de", "--models-dir", str(models))
    assert removed.exit_code == 0, removed.output
    assert ("en", "de") not in await listed(client)
    assert (await client.get("/v1/models")).json() == {"models": []}
    refused = await client.post(
        "/v1/translate",
        json={"source_lang": "en", "target_lang": "de", "segments": ["A free licence."]},
    )
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "unsupported_language_pair"
