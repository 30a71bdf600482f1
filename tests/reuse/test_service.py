"""Reuse through the embedded service with a scripted engine, whose calls can be counted and
held: what reaches the engine, what the cache keeps, and a job found whole notified."""

from __future__ import annotations

from typing import Any

from dragoman.models import Pair
from dragoman.reuse.keys import cache_key
from dragoman.reuse.store import CacheWrite, SqlCacheRows
from dragoman.webhooks import DeliveryStatus
from tests.api.helpers import finished, job_body
from tests.conftest import ScriptedEngine, wait_until
from tests.integration.test_webhooks import (  # noqa: F401  (fixtures)
    Make,
    Receivers,
    Running,
    make_service,
    receivers,
    settled,
)


async def run(running: Running, *segments: str, **extra: Any) -> dict[str, Any]:
    answer = await running.client.post("/v1/jobs", json=job_body(*segments, **extra))
    assert answer.status_code == 202, answer.text
    job = await finished(running.client, answer.json()["id"])
    got = await running.client.get(f"/v1/jobs/{job['id']}/result")
    return {"job": job, **got.json()["documents"][0]}


def sent(engine: ScriptedEngine) -> list[str]:
    return [segment for call in engine.calls for segment in call]


async def test_a_job_found_whole_never_reaches_the_engine_and_is_notified(
    make_service: Make,  # noqa: F811
    receivers: Receivers,  # noqa: F811
    scripted_engine: ScriptedEngine,
) -> None:
    receiver = await receivers()
    running = await make_service()
    await run(running, "one", "two")
    calls = len(scripted_engine.calls)
    answer = await running.client.post(
        "/v1/jobs", json=job_body("two", "one", callback_url=receiver.url)
    )
    assert answer.json()["status"] == "succeeded"
    (received,) = await receiver.got(1)
    assert received.payload["type"] == "job.succeeded"
    assert received.payload["data"]["id"] == answer.json()["id"]
    await settled(running.store, answer.json()["id"], DeliveryStatus.DELIVERED)
    assert len(scripted_engine.calls) == calls


async def test_another_engine_version_misses(
    make_service: Make,  # noqa: F811
    scripted_engine: ScriptedEngine,
) -> None:
    running = await make_service()
    await run(running, "alpha")
    assert (await run(running, "alpha"))["origins"] == ["cache"]
    scripted_engine.version_tag = "2"
    again = await run(running, "alpha")
    assert again["origins"] == ["mt"]
    assert sent(scripted_engine) == ["alpha", "alpha"]


async def test_failed_work_is_not_cached(
    make_service: Make,  # noqa: F811
    scripted_engine: ScriptedEngine,
) -> None:
    running = await make_service()
    failed = await run(running, "alpha", "<explode>")
    assert failed["job"]["status"] == "failed"
    assert (await run(running, "alpha"))["origins"] == ["mt"]


async def test_a_cancelled_jobs_output_is_not_cached(
    make_service: Make,  # noqa: F811
    scripted_engine: ScriptedEngine,
) -> None:
    running = await make_service()
    scripted_engine.release.clear()
    answer = (await running.client.post("/v1/jobs", json=job_body("held"))).json()

    async def engine_has_it() -> bool:
        return bool(scripted_engine.calls)

    await wait_until(engine_has_it)
    assert (await running.client.delete(f"/v1/jobs/{answer['id']}")).status_code == 200
    await finished(running.client, answer["id"])
    scripted_engine.release.set()
    assert (await run(running, "held"))["origins"] == ["mt"]


async def test_the_first_stored_output_wins_over_a_later_writer(
    make_service: Make,  # noqa: F811
    scripted_engine: ScriptedEngine,
) -> None:
    running = await make_service()
    scripted_engine.release.clear()
    answer = (await running.client.post("/v1/jobs", json=job_body("race"))).json()

    async def engine_has_it() -> bool:
        return bool(scripted_engine.calls)

    await wait_until(engine_has_it)
    key = cache_key(
        tenant=None,
        engine="scripted",
        version="scripted-1:edges",  # Engines.version: the engine's own, trimmed outputs
        pair=Pair("en", "es"),
        glossary=None,
        markup=False,
        segment="race",
    )
    # Another worker stored its output first (a non-deterministic engine may differ).
    write = CacheWrite(key, "EARLIER", answer["id"], 1)
    await SqlCacheRows(running.store.database).cache_put([write], running.service.clock.now())
    scripted_engine.release.set()
    await finished(running.client, answer["id"])
    result = (await running.client.get(f"/v1/jobs/{answer['id']}/result")).json()
    assert result["documents"][0]["segments"] == ["EARLIER"]


async def test_the_cleaners_trim_keeps_the_cache_under_its_bound(
    make_service: Make,  # noqa: F811
    scripted_engine: ScriptedEngine,
) -> None:
    running = await make_service(cache_max_segments=2)
    await run(running, "a", "b", "c", "d")
    assert await running.service.reuse.trim() == 2
    again = await run(running, "a", "b", "c", "d")
    assert sorted(again["origins"]) == ["cache", "cache", "mt", "mt"]
