"""Deadlines over HTTP: accepted as RFC 3339 in JSON and in a form, echoed in UTC, refused
with a 422 naming the field otherwise; and a status that tells a job's ETA and whether it
will miss its deadline, from the pool's measured speed and the work ahead of it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from dragoman.api.app import create_app
from dragoman.engines import Engines
from dragoman.models import Pool
from dragoman.services import EmbeddedService
from tests.api.helpers import assert_error, finished, job_body
from tests.conftest import ScriptedEngine, stop_service, wait_until

pytestmark = pytest.mark.timeout(60)


def soon(**delta: float) -> str:
    return (datetime.now(UTC) + timedelta(**delta)).isoformat()


async def test_a_deadline_is_echoed_in_utc_and_absent_is_null(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/jobs", json=job_body("Hello.", deadline="2099-12-01T17:00:00.25+02:00")
    )
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["deadline"] == "2099-12-01T15:00:00.250000Z"
    assert job["at_risk"] is False
    assert (await client.get(f"/v1/jobs/{job['id']}")).json()["deadline"] == job["deadline"]
    plain = (await client.post("/v1/jobs", json=job_body("Hello."))).json()
    assert (plain["deadline"], plain["at_risk"]) == (None, False)
    assert "eta_seconds" in plain
    done = await finished(client, plain["id"])
    assert (done["eta_seconds"], done["at_risk"]) == (None, False)


async def test_a_deadline_already_past_is_accepted_and_at_risk_at_once(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/v1/jobs", json=job_body("Hello.", deadline=soon(hours=-1)))
    assert response.status_code == 202, response.text
    assert response.json()["at_risk"] is True


@pytest.mark.parametrize(
    ("deadline", "says"),
    [
        ("2026-12-01T17:00:00", "time zone offset"),  # naive: no moment at all
        ("2026-12-01", "RFC 3339"),
        ("tomorrow", "RFC 3339"),
        ("2026-12-01 17:00:00Z", "RFC 3339"),
        ("2026-02-30T17:00:00Z", "datetime"),
        (1796144400, "RFC 3339"),  # a Unix time is no RFC 3339 string
        (True, "RFC 3339"),
        ({"at": "2026-12-01T17:00:00Z"}, "RFC 3339"),
    ],
)
async def test_a_bad_deadline_is_a_422_that_names_it(
    client: httpx.AsyncClient, deadline: Any, says: str
) -> None:
    response = await client.post("/v1/jobs", json=job_body("Hello.", deadline=deadline))
    assert_error(response, 422, "invalid_request")
    message = response.json()["error"]["message"]
    assert message.startswith("deadline: "), message
    assert says in message


async def test_a_file_job_takes_a_deadline_as_a_form_field(client: httpx.AsyncClient) -> None:
    form = {"source_lang": "en", "target_lang": "es"}
    files = [("files", ("a.txt", b"Hello.\n"))]
    response = await client.post(
        "/v1/jobs", data={**form, "deadline": "2099-01-02T03:04:05-01:00"}, files=files
    )
    assert response.status_code == 202, response.text
    assert response.json()["deadline"] == "2099-01-02T04:04:05Z"
    naive = await client.post(
        "/v1/jobs", data={**form, "deadline": "2099-01-02T03:04:05"}, files=files
    )
    assert_error(naive, 422, "invalid_request")
    assert naive.json()["error"]["message"].startswith("deadline: ")


# -- ETAs from the measured speed -------------------------------------------------------------


@pytest.fixture
async def scripted(
    make_settings: Any,
) -> AsyncIterator[tuple[httpx.AsyncClient, ScriptedEngine, EmbeddedService]]:
    engine = ScriptedEngine()
    engine.delay_s = 0.02  # 10 segments a call: about 500 segments a second
    settings = make_settings(cpu_max_workers=1, chunk_segments=10, batch_jobs=1)
    service = EmbeddedService(settings, engines=Engines([engine]))
    await service.start()
    app = create_app(service, manage_lifecycle=False)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
    yield client, engine, service
    engine.release.set()
    await client.aclose()
    await stop_service(service)


async def submit(
    client: httpx.AsyncClient, segments: int, tag: str, **extra: Any
) -> dict[str, Any]:
    body = job_body(*(f"{tag} {n}" for n in range(segments)), **extra)
    response = await client.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    job: dict[str, Any] = response.json()
    return job


async def predicted(client: httpx.AsyncClient, job_id: str) -> dict[str, Any]:
    """The job once the watchdog's forecast has given it an ETA."""
    found: dict[str, Any] = {}

    async def has_eta() -> bool:
        found.update((await client.get(f"/v1/jobs/{job_id}")).json())
        return found["eta_seconds"] is not None

    await wait_until(has_eta)
    return found


async def test_a_tight_deadline_behind_a_long_job_is_at_risk_with_its_eta(
    scripted: tuple[httpx.AsyncClient, ScriptedEngine, EmbeddedService],
) -> None:
    client, engine, service = scripted
    engine.release.clear()
    first = await submit(client, 20, "first")
    await wait_until(lambda: _true(bool(engine.calls)))
    for _ in range(5):  # sweeps, and no speed measured yet: no ETA is better than a guess
        await service.watchdog.sweep()
    assert (await client.get(f"/v1/jobs/{first['id']}")).json()["eta_seconds"] is None
    engine.release.set()
    await finished(client, (await submit(client, 300, "warm-up"))["id"])
    assert (await finished(client, first["id"]))["status"] == "succeeded"
    await wait_until(lambda: _true(service.watchdog.forecast.speeds[Pool.CPU].rate is not None))

    engine.release.clear()  # the long job stays where it is: 5,000 segments to go
    long = await submit(client, 5000, "long")
    await wait_until(lambda: _true(bool(engine.calls) and engine.calls[-1][0] == "long 0"))
    tight = await submit(client, 20, "tight", deadline=soon(seconds=3))
    loose = await submit(client, 20, "loose", deadline=soon(hours=6))
    plain = await submit(client, 20, "plain")

    rate = service.watchdog.forecast.speeds[Pool.CPU].rate
    assert rate is not None
    shown = {job["id"]: await predicted(client, job["id"]) for job in (tight, loose, plain)}
    at_risk = {job_id: job["at_risk"] for job_id, job in shown.items()}
    assert at_risk == {tight["id"]: True, loose["id"]: False, plain["id"]: False}
    # Behind the long job's 5,000 segments on the pool's one worker.
    assert shown[tight["id"]]["eta_seconds"] > 3 and shown[loose["id"]]["eta_seconds"] > 3
    assert (await predicted(client, long["id"]))["at_risk"] is False  # no deadline
    listed = (await client.get("/v1/jobs?status=queued")).json()["jobs"]
    assert {job["id"]: job["at_risk"] for job in listed} == at_risk
    fleet = (await client.get("/v1/fleet")).json()
    (cpu,) = [pool for pool in fleet["pools"] if pool["pool"] == "cpu"]
    assert cpu["jobs"]["at_risk"] == 1
    await client.delete(f"/v1/jobs/{long['id']}")


async def _true(value: bool) -> bool:
    return value
