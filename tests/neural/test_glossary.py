"""Glossary terms through the neural engines on tiny real models: placeholders checked, and
the fallback taken, with one more engine call, for the segments whose placeholders the model
did not give back exactly once."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.api.app import create_app
from dragoman.engines import Engine
from dragoman.engines.model_cache import ModelCache
from dragoman.formats.markup import Marked
from dragoman.glossaries import Entry, Terms, keep_terms
from dragoman.glossaries.apply import substitute
from dragoman.glossaries.masking import mask, unmask
from dragoman.services import EmbeddedService
from tests.api.helpers import finished
from tests.neural.conftest import EN_FR
from tests.neural.test_engines import ENGINES, MB, make_engine

TERMS = Terms.of([Entry("software", "logiciel libre"), Entry("License", "License")])
SEGMENTS = [
    "This License applies to any software.",
    "The software is provided as is.",
    "Software freedom matters, and so does the License.",
    "Nothing to keep here.",
]


@pytest.fixture(params=ENGINES)
async def engine(request: pytest.FixtureRequest, models_dir: Path) -> AsyncIterator[Engine]:
    found = make_engine(request.param, models_dir, ModelCache(256 * MB))
    yield found
    await found.close()


async def test_placeholders_are_checked_and_the_fallback_is_taken(engine: Engine) -> None:
    calls: list[list[str]] = []

    async def run(texts: Sequence[str]) -> list[str]:
        calls.append(list(texts))
        return await engine.translate(EN_FR, texts)

    kept = await keep_terms(run, [(s, TERMS) for s in SEGMENTS])
    masks = [mask(Marked.of([s]), TERMS) for s in SEGMENTS]
    assert calls[0] == [m.sent.plain for m in masks]  # every segment in one call
    first = await engine.translate(EN_FR, calls[0])  # what the model gave (deterministic)
    lost = [
        i
        for i, m in enumerate(masks)
        if m.placeholders and unmask(Marked.of([first[i]]), m) is None
    ]
    assert lost, "the tiny model gives nonsense: some placeholder must be lost"
    terms = sorted({p.hit.matched for i in lost for p in masks[i].placeholders})
    assert calls[1:] == [[SEGMENTS[i] for i in lost] + terms]  # one more call, no more
    again = await engine.translate(EN_FR, calls[1])
    alone = dict(zip(terms, (t.strip() for t in again[len(lost) :]), strict=True))
    for i, segment in enumerate(SEGMENTS):
        back = unmask(Marked.of([first[i]]), masks[i])
        if i in lost:
            hits = [p.hit for p in masks[i].placeholders]
            plain = Marked.of([again[lost.index(i)]])
            assert kept[i] == substitute(plain, hits, alone)[0].plain
        elif back is not None:
            assert kept[i] == back.plain
        else:
            assert kept[i] == first[i]  # nothing to keep: the model's own output
        assert "ZXQ" not in kept[i].upper(), segment


@pytest.fixture
async def client(make_settings: Any, models_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The embedded service over the tiny models (CTranslate2 in float32)."""
    settings = make_settings(
        models_dir=models_dir, ct2_compute_type="float32", neural_threads=1, cpu_max_workers=1
    )
    service = EmbeddedService(settings)
    await service.start()
    app = create_app(service, manage_lifecycle=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        yield c
    await service.stop()


async def test_a_job_keeps_terms_as_translate_does(client: httpx.AsyncClient) -> None:
    entries = [
        {"source": "software", "target": "logiciel libre"},
        {"source": "License", "target": "License"},
    ]
    glossary = (
        await client.post(
            "/v1/glossaries",
            json={"name": "t", "source_lang": "en", "target_lang": "fr", "entries": entries},
        )
    ).json()
    common = {"source_lang": "en", "target_lang": "fr", "glossary": glossary["id"]}
    sync = await client.post("/v1/translate", json={**common, "segments": SEGMENTS})
    assert sync.status_code == 200, sync.text
    job = await client.post(
        "/v1/jobs", json={**common, "documents": [{"name": "a", "segments": SEGMENTS}]}
    )
    assert job.status_code == 202, job.text
    assert (await finished(client, job.json()["id"]))["status"] == "succeeded"
    result = (await client.get(f"/v1/jobs/{job.json()['id']}/result")).json()
    assert result["documents"][0]["segments"] == sync.json()["translations"]
    assert not any("ZXQ" in text.upper() for text in sync.json()["translations"])
