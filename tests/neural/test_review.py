"""Which segments to review, through the service over the tiny CTranslate2 model: each
result names the engine, model and confidence of every translation, a job's
``review_below`` counts and lists those below it (a cache hit keeps its confidence, a
sharded job counts its shards'), and XLIFF files mark them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from lxml import etree

from dragoman import __version__
from dragoman.engines import Engines
from dragoman.engines.ct2 import CTranslate2Engine
from dragoman.engines.manifest import Manifest, write_manifest
from dragoman.engines.model_cache import ModelCache
from dragoman.services import EmbeddedService
from tests.formats.xliff_rules import MDA, X1, X2, check_v2, check_v12
from tests.neural.conftest import EN_FR
from tests.neural.test_service import corpus, finished, make_neural, neural, run_job

__all__ = ["make_neural", "neural"]  # fixtures

Neural = tuple[EmbeddedService, httpx.AsyncClient]


async def document(client: httpx.AsyncClient, job_id: str) -> dict[str, Any]:
    body = (await client.get(f"/v1/jobs/{job_id}/result")).json()
    [doc] = body["documents"]
    return doc  # type: ignore[no-any-return]


async def test_a_job_s_result_names_what_made_each_translation_and_how_sure_it_was(
    neural: Neural,
) -> None:
    _, client = neural
    segments = corpus(12)
    job = await finished(client, await run_job(client, segments))
    doc = await document(client, job["id"])

    assert doc["origins"] == ["mt"] * 12
    assert doc["engines"] == ["ctranslate2"] * 12
    [model] = set(doc["models"])  # no manifest: the engine's version of the pair
    assert model.startswith(f"{__version__}:")
    assert doc["glossary_terms"] == [False] * 12
    assert all(0 < confidence <= 1 for confidence in doc["confidences"])
    assert (doc["review"], job["review_below"], job["segments_to_review"]) == (None, None, None)


async def test_review_below_counts_and_lists_the_translations_under_it_cache_hits_too(
    neural: Neural,
) -> None:
    _, client = neural
    segments = corpus(12, offset=3)
    first_id = await run_job(client, segments)  # its translations go into the cache
    await finished(client, first_id)
    first = await document(client, first_id)
    confidences = first["confidences"]
    threshold = sorted(confidences)[6]
    below = [i for i, confidence in enumerate(confidences) if confidence < threshold]
    assert 0 < len(below) < 12

    # Every segment again from the engine, then all of them from the segment cache.
    fresh = await finished(
        client, await run_job(client, segments, cache=False, review_below=threshold)
    )
    answer = await client.post(
        "/v1/jobs",
        json={
            "source_lang": "en",
            "target_lang": "fr",
            "review_below": threshold,
            "documents": [{"name": "d.txt", "segments": segments}],
        },
    )
    cached = answer.json()

    assert (fresh["status"], cached["status"]) == ("succeeded", "succeeded")
    for job in (fresh, cached):
        assert (job["review_below"], job["segments_to_review"]) == (threshold, len(below))
    for job, origin in ((fresh, "mt"), (cached, "cache")):
        doc = await document(client, job["id"])
        assert doc["origins"] == [origin] * 12
        assert doc["segments"] == first["segments"]
        assert (doc["engines"], doc["models"]) == (first["engines"], first["models"])
        assert doc["confidences"] == confidences
        assert doc["review"] == below


async def test_a_sharded_job_counts_the_segments_to_review_of_all_its_shards(
    make_neural: Any,
) -> None:
    _, client = await make_neural(cpu_max_workers=2, shard_segments=50, chunk_segments=32)
    job_id = await run_job(client, corpus(130, offset=7), cache=False, review_below=1.0)
    job = await finished(client, job_id)
    # The tiny model is never sure: every translation is below 1.
    assert (job["status"], job["segments_to_review"]) == ("succeeded", 130)
    assert (await document(client, job_id))["review"] == list(range(130))


XLIFF_1 = b"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file source-language="en" datatype="plaintext" original="ui">
    <body>
      <trans-unit id="a"><source>The software is free.</source></trans-unit>
      <trans-unit id="b"><source>You may copy it.</source></trans-unit>
    </body>
  </file>
</xliff>
"""

XLIFF_2 = b"""<?xml version="1.0" encoding="UTF-8"?>
<xliff version="2.0" xmlns="urn:oasis:names:tc:xliff:document:2.0" srcLang="en">
  <file id="f1">
    <unit id="a"><segment><source>The software is free.</source></segment></unit>
    <unit id="b"><segment><source>You may copy it.</source></segment></unit>
  </file>
</xliff>
"""


async def file_job(
    client: httpx.AsyncClient, content: bytes, review_below: str
) -> tuple[dict[str, Any], etree._Element]:
    answer = await client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "fr", "review_below": review_below},
        files={"files": ("ui.xlf", content)},
    )
    assert answer.status_code == 202, answer.text
    job = await finished(client, answer.json()["id"])
    got = await client.get(f"/v1/jobs/{job['id']}/files/0")
    assert got.status_code == 200, got.text
    return await document(client, job["id"]), etree.fromstring(got.content)


async def test_xliff_1_2_marks_the_units_to_review_and_carries_origin_and_score(
    neural: Neural,
) -> None:
    _, client = neural
    # All below 1 to review; then the same file, from the cache, with none below 0.
    for threshold, state, origin in (
        ("1", "needs-review-translation", "mt"),
        ("0", "translated", "cache"),
    ):
        doc, root = await file_job(client, XLIFF_1, threshold)
        check_v12(root)
        assert doc["origins"] == [origin, origin]
        units = list(root.iter(f"{X1}trans-unit"))
        for unit, confidence in zip(units, doc["confidences"], strict=True):
            target = unit.find(f"{X1}target")
            assert target is not None
            assert (target.get("state"), target.get("state-qualifier")) == (state, "mt-suggestion")
            facts = {
                c.get("context-type"): c.text
                for c in unit.iterfind(f"{X1}context-group[@name='dragoman']/{X1}context")
            }
            assert facts == {
                "x-dragoman-origin": origin,
                "x-dragoman-confidence": f"{confidence:.4f}",
            }


async def test_xliff_2_says_review_in_the_substate_and_the_score_in_metadata(
    neural: Neural,
) -> None:
    _, client = neural
    doc, root = await file_job(client, XLIFF_2, "1")
    check_v2(root)
    segments = list(root.iter(f"{X2}segment"))
    assert [s.get("subState") for s in segments] == ["dragoman:review"] * 2
    for unit, confidence in zip(root.iter(f"{X2}unit"), doc["confidences"], strict=True):
        metas = unit.findall(f"{MDA}metadata/{MDA}metaGroup/{MDA}meta")
        assert {m.get("type"): m.text for m in metas} == {
            "segment": "1",
            "origin": "mt",
            "confidence": f"{confidence:.4f}",
        }


def test_a_model_is_named_by_its_package_version_where_it_has_one(models_dir: Path) -> None:
    engines = Engines([CTranslate2Engine(models_dir, cache=ModelCache(2**20))])
    unnamed = engines.model("ctranslate2", EN_FR)
    assert unnamed is not None and unnamed.startswith(f"{__version__}:")
    folder = models_dir / str(EN_FR) / "ctranslate2"
    manifest = Manifest(pair="en-fr", engine="ctranslate2", version="1.9", source="test")
    write_manifest(folder, manifest)
    assert engines.model("ctranslate2", EN_FR) == "1.9"
    write_manifest(folder, manifest.model_copy(update={"version": "local"}))
    assert engines.model("ctranslate2", EN_FR) == engines.resolve(EN_FR).version(EN_FR)
    assert engines.model("ctranslate2", EN_FR.__class__("en", "xx")) is None
