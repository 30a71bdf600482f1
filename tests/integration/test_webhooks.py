"""Signed notifications of jobs' ends, end to end: the embedded service over HTTP in process,
a real receiver on 127.0.0.1 that verifies every request with the standardwebhooks library,
and the store's delivery rows."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from aiohttp import web
from standardwebhooks.webhooks import Webhook

from dragoman.api.app import create_app
from dragoman.api.v1.job_out import JobOut
from dragoman.engines import Engines
from dragoman.models import Job, JobOptions, Pool
from dragoman.runtime import Runtime
from dragoman.services import EmbeddedService
from dragoman.store import JobStore
from dragoman.webhooks import DeliveryStatus, SqlDeliveries, WebhookDelivery
from dragoman.webhooks.notifier import Notifier
from tests.api.helpers import assert_error, finished, job_body
from tests.conftest import ScriptedEngine, wait_until
from tests.integration.server import free_port

pytestmark = pytest.mark.timeout(30)

SECRET = "whsec_" + base64.b64encode(b"dragoman-test-secret-0123456789").decode()
QUICK = "0.2,0.2,0.2"


@dataclass(frozen=True, slots=True)
class Received:
    path: str
    headers: dict[str, str]
    payload: dict[str, Any]
    at: float


class Receiver:
    """A webhook endpoint on 127.0.0.1: it verifies each request (an unverifiable one fails
    the test), records it, and answers the next status of its script, then 204."""

    def __init__(self, *answers: int | tuple[int, dict[str, str]], port: int = 0) -> None:
        self.script = list(answers)
        self.port = port
        self.received: list[Received] = []
        self.unverified: list[str] = []
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/dragoman"

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = dict(request.headers)
        try:
            payload = Webhook(SECRET).verify(body, headers)
        except Exception as exc:
            self.unverified.append(f"{type(exc).__name__}: {exc}")
            return web.Response(status=400)
        self.received.append(Received(request.path, headers, payload, time.monotonic()))
        answer = self.script.pop(0) if self.script else 204
        status, extra = answer if isinstance(answer, tuple) else (answer, {})
        return web.Response(status=status, headers=extra)

    async def start(self) -> Receiver:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def got(self, count: int, timeout_s: float = 10) -> list[Received]:
        async def enough() -> bool:
            return len(self.received) >= count

        await wait_until(enough, timeout_s)
        return self.received


@dataclass
class Running:
    service: EmbeddedService
    client: httpx.AsyncClient
    stopped: bool = False

    @property
    def store(self) -> JobStore:
        return self.service.store

    async def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            await self.client.aclose()
            await self.service.stop()


Make = Callable[..., Awaitable[Running]]
Receivers = Callable[..., Awaitable[Receiver]]


@pytest.fixture
async def receivers() -> AsyncIterator[Receivers]:
    started: list[Receiver] = []

    async def make(*answers: int | tuple[int, dict[str, str]], port: int = 0) -> Receiver:
        receiver = await Receiver(*answers, port=port).start()
        started.append(receiver)
        return receiver

    yield make
    for receiver in started:
        await receiver.stop()
    assert [r.unverified for r in started if r.unverified] == []


@pytest.fixture
async def make_service(make_settings: Any, scripted_engine: ScriptedEngine) -> AsyncIterator[Make]:
    running: list[Running] = []

    async def make(**overrides: Any) -> Running:
        base: dict[str, Any] = {
            "webhook_secret": SECRET,
            "webhook_allow_private": True,
            "webhook_retry_s": QUICK,
            "webhook_timeout_s": 2.0,
            "cpu_max_workers": 1,
            "max_attempts": 1,
        }
        service = EmbeddedService(
            make_settings(**{**base, **overrides}), engines=Engines([scripted_engine])
        )
        await service.start()
        app = create_app(service, manage_lifecycle=False)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
        running.append(Running(service, client))
        return running[-1]

    yield make
    scripted_engine.release.set()
    for each in running:
        await each.stop()


async def submit(running: Running, *segments: str, callback_url: str) -> str:
    response = await running.client.post(
        "/v1/jobs", json=job_body(*segments, callback_url=callback_url)
    )
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


async def settled(store: JobStore, job_id: str, status: DeliveryStatus) -> WebhookDelivery:
    """The job's one delivery, once it reached ``status``."""

    async def reached() -> bool:
        found = await SqlDeliveries(store.database).deliveries(job_id)
        return bool(found) and found[0].status is status

    await wait_until(reached)
    (delivery,) = await SqlDeliveries(store.database).deliveries(job_id)
    return delivery


# -- delivery -------------------------------------------------------------------------------


async def test_a_failed_delivery_is_retried_with_the_same_id_and_never_repeated_after_a_2xx(
    make_service: Make, receivers: Receivers
) -> None:
    receiver = await receivers(500)
    running = await make_service()
    job_id = await submit(running, "hello", "world", callback_url=receiver.url)
    first, retry = await receiver.got(2)
    delivery = await settled(running.store, job_id, DeliveryStatus.DELIVERED)
    await asyncio.sleep(0.6)  # many rounds of the notifier, past every retry delay
    assert len(receiver.received) == 2
    assert first.headers["webhook-id"] == retry.headers["webhook-id"] == delivery.id
    assert delivery.id.startswith("msg_") and len(delivery.id) == 36
    assert retry.at - first.at >= 0.2
    assert first.headers["Content-Type"] == "application/json"
    assert first.path == "/hooks/dragoman"
    assert (delivery.attempts, delivery.last_status, delivery.last_error) == (2, 204, None)
    job = (await running.client.get(f"/v1/jobs/{job_id}")).json()
    assert first.payload == retry.payload
    assert first.payload["type"] == "job.succeeded"
    assert first.payload["data"] == job
    assert first.payload["timestamp"] == job["finished_at"]


async def test_a_failed_job_is_announced_with_its_error(
    make_service: Make, receivers: Receivers
) -> None:
    receiver = await receivers()
    running = await make_service()
    job_id = await submit(running, "<explode>", callback_url=receiver.url)
    (received,) = await receiver.got(1)
    assert received.payload["type"] == "job.failed"
    data = received.payload["data"]
    assert (data["id"], data["status"], data["error"]["code"]) == (job_id, "failed", "engine_error")


async def test_a_job_failed_as_it_was_taken_is_announced_too(
    make_service: Make, receivers: Receivers
) -> None:
    """A document detected in the target language ends its job at once (``source_is_target``),
    and that end is notified like any other."""
    receiver = await receivers()
    running = await make_service()
    body = job_body(
        "El gato duerme en la casa de mi abuela todos los días.",
        callback_url=receiver.url,
        source_lang="auto",
    )
    response = await running.client.post("/v1/jobs", json=body)
    assert response.status_code == 202 and response.json()["status"] == "failed", response.text
    (received,) = await receiver.got(1)
    assert received.payload["type"] == "job.failed"
    data = received.payload["data"]
    assert (data["id"], data["error"]["code"]) == (response.json()["id"], "source_is_target")


async def test_a_cancelled_job_is_announced(
    make_service: Make,
    receivers: Receivers,
    scripted_engine: ScriptedEngine,
) -> None:
    receiver = await receivers()
    running = await make_service()
    scripted_engine.release.clear()  # the job stays running until it is cancelled
    job_id = await submit(running, "slow", callback_url=receiver.url)
    response = await running.client.delete(f"/v1/jobs/{job_id}")
    assert response.status_code == 200, response.text
    (received,) = await receiver.got(1)
    scripted_engine.release.set()
    assert received.payload["type"] == "job.cancelled"
    assert received.payload["data"]["status"] == "cancelled"


async def test_a_file_job_submitted_as_a_form_is_announced_too(
    make_service: Make, receivers: Receivers
) -> None:
    receiver = await receivers()
    running = await make_service()
    response = await running.client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "es", "callback_url": receiver.url},
        files=[("files", ("notes.txt", b"Hello world.\n"))],
    )
    assert response.status_code == 202, response.text
    job = await finished(running.client, response.json()["id"])
    (received,) = await receiver.got(1)
    assert received.payload["type"] == "job.succeeded"
    assert received.payload["data"] == job


async def test_a_job_without_a_callback_is_not_announced(
    make_service: Make, receivers: Receivers
) -> None:
    receiver = await receivers()
    running = await make_service()
    response = await running.client.post("/v1/jobs", json=job_body("quiet"))
    job_id = response.json()["id"]
    await finished(running.client, job_id)
    await submit(running, "loud", callback_url=receiver.url)
    await receiver.got(1)
    assert await SqlDeliveries(running.store.database).deliveries(job_id) == []
    assert job_id not in {r.payload["data"]["id"] for r in receiver.received}


async def test_a_job_that_will_miss_its_deadline_is_warned_once_before_its_end(
    make_service: Make, receivers: Receivers, scripted_engine: ScriptedEngine
) -> None:
    receiver = await receivers()
    running = await make_service()
    scripted_engine.release.clear()  # the job stays running, past its deadline
    overdue = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    body = job_body("late", callback_url=receiver.url, deadline=overdue)
    response = await running.client.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    (warning,) = await receiver.got(1)
    assert warning.payload["type"] == "job.at_risk"
    data = warning.payload["data"]
    assert (data["id"], data["at_risk"], data["finished_at"]) == (job_id, True, None)
    assert data["deadline"] == response.json()["deadline"]
    await asyncio.sleep(0.5)  # many rounds of the notifier: still one warning
    assert len(receiver.received) == 1
    scripted_engine.release.set()
    _, end = await receiver.got(2)
    assert end.payload["type"] == "job.succeeded"
    assert end.payload["data"]["at_risk"] is False
    assert end.headers["webhook-id"] != warning.headers["webhook-id"]
    events = {d.event for d in await SqlDeliveries(running.store.database).deliveries(job_id)}
    assert events == {"job.at_risk", "job.succeeded"}


async def test_a_pending_delivery_survives_a_restart(
    make_service: Make, receivers: Receivers
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/hooks/dragoman"  # nobody listens there yet
    before = await make_service(webhook_retry_s="0.2,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5")
    job_id = await submit(before, "hello", callback_url=url)

    async def refused_once() -> bool:
        found = await SqlDeliveries(before.store.database).deliveries(job_id)
        return bool(found) and found[0].attempts >= 1

    await wait_until(refused_once)
    await before.stop()
    receiver = await receivers(port=port)
    after = await make_service()
    (received,) = await receiver.got(1)
    delivery = await settled(after.store, job_id, DeliveryStatus.DELIVERED)
    assert received.headers["webhook-id"] == delivery.id
    assert received.payload["data"]["id"] == job_id
    assert delivery.attempts >= 2


# -- giving up ----------------------------------------------------------------------------


async def test_a_delivery_is_given_up_once_the_schedule_is_spent(
    make_service: Make, receivers: Receivers
) -> None:
    receiver = await receivers(500, 502, 500, 500, 500)
    running = await make_service(webhook_retry_s="0.1,0.1")
    job_id = await submit(running, "hello", callback_url=receiver.url)
    delivery = await settled(running.store, job_id, DeliveryStatus.FAILED)
    await asyncio.sleep(0.5)
    assert len(receiver.received) == 3
    assert (delivery.attempts, delivery.last_status) == (3, 500)
    assert "gave up after 3 attempts" in (delivery.last_error or "")


async def test_410_gone_stops_the_deliveries_at_once(
    make_service: Make, receivers: Receivers
) -> None:
    receiver = await receivers(410)
    running = await make_service()
    job_id = await submit(running, "hello", callback_url=receiver.url)
    delivery = await settled(running.store, job_id, DeliveryStatus.FAILED)
    await asyncio.sleep(0.5)
    assert len(receiver.received) == 1
    assert (delivery.attempts, delivery.last_status) == (1, 410)


async def test_a_redirect_is_a_failed_attempt_and_not_followed(
    make_service: Make, receivers: Receivers
) -> None:
    receiver = await receivers((307, {"Location": "/elsewhere"}))
    running = await make_service()
    job_id = await submit(running, "hello", callback_url=receiver.url)
    await settled(running.store, job_id, DeliveryStatus.DELIVERED)
    assert [r.path for r in receiver.received] == ["/hooks/dragoman", "/hooks/dragoman"]


async def test_retry_after_is_honoured_when_longer_than_the_schedule(
    make_service: Make, receivers: Receivers
) -> None:
    receiver = await receivers((503, {"Retry-After": "1"}))
    running = await make_service(webhook_retry_s="0.1")
    job_id = await submit(running, "hello", callback_url=receiver.url)
    first, retry = await receiver.got(2)
    await settled(running.store, job_id, DeliveryStatus.DELIVERED)
    assert retry.at - first.at >= 0.95


async def test_a_target_is_checked_again_before_each_attempt(
    make_settings: Any, receivers: Receivers
) -> None:
    # Accepted when private targets were allowed; refused once they no longer are.
    receiver = await receivers()
    settings = make_settings(webhook_secret=SECRET, webhook_allow_private=False)
    runtime = Runtime.from_settings(settings)
    await runtime.open(bus=False)
    try:
        job = Job(
            id="j1",
            tenant=None,
            source_lang="en",
            target_lang="es",
            engine="scripted",
            pool=Pool.CPU,
            documents=0,
            segments_total=0,
            options=JobOptions(callback_url=receiver.url),
        )
        await runtime.store.create(job, [])
        assert await runtime.store.cancel("j1", runtime.clock.now()) is not None
        notifier = Notifier(runtime, render=lambda job: JobOut.of(job).model_dump(mode="json"))
        await notifier.start()
        try:
            delivery = await settled(runtime.store, "j1", DeliveryStatus.FAILED)
        finally:
            await notifier.stop()
    finally:
        await runtime.close(bus=False)
    assert receiver.received == []
    assert delivery.attempts == 1 and delivery.last_status is None
    assert (delivery.last_error or "").startswith("target refused: callback_url: 127.0.0.1")


# -- refused targets ------------------------------------------------------------------------

REFUSED = [
    "http://127.0.0.1:9/x",
    "http://localhost/x",
    "http://10.1.2.3/x",
    "http://[::1]/x",
    "http://169.254.169.254/latest",
    "ftp://files.example.com/x",
    "https://user:secret@example.com/x",
]


@pytest.mark.parametrize("url", REFUSED)
async def test_a_private_or_odd_target_is_refused_with_422(make_service: Make, url: str) -> None:
    running = await make_service(webhook_allow_private=False)
    response = await running.client.post("/v1/jobs", json=job_body("hi", callback_url=url))
    assert_error(response, 422, "invalid_request")
    assert "callback_url" in response.json()["error"]["message"]


async def test_a_private_target_is_refused_in_a_form_too(make_service: Make) -> None:
    running = await make_service(webhook_allow_private=False)
    response = await running.client.post(
        "/v1/jobs",
        data={"source_lang": "en", "target_lang": "es", "callback_url": "http://10.1.2.3/x"},
        files=[("files", ("notes.txt", b"Hello.\n"))],
    )
    assert_error(response, 422, "invalid_request")


@pytest.mark.parametrize("url", REFUSED[:5])
async def test_private_targets_are_accepted_when_allowed(make_service: Make, url: str) -> None:
    # Their notifications go nowhere: each attempt gives up quickly.
    running = await make_service(webhook_allow_private=True, webhook_timeout_s=0.3)
    response = await running.client.post("/v1/jobs", json=job_body("hi", callback_url=url))
    assert response.status_code == 202, response.text


async def test_a_callback_is_refused_when_no_secret_is_configured(make_service: Make) -> None:
    running = await make_service(webhook_secret=None)
    response = await running.client.post(
        "/v1/jobs", json=job_body("hi", callback_url="http://127.0.0.1:9/x")
    )
    assert_error(response, 409, "conflict")
    assert "DRAGOMAN_WEBHOOK_SECRET" in response.json()["error"]["message"]


async def test_an_attempt_connects_to_the_address_it_checked_not_a_later_answer(
    make_service: Make, receivers: Receivers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # hooks.example answers the checks with the receiver's address (taken as public here),
    # then rebinds to an address where nothing listens: a client that resolved the name
    # again after the check would go there.
    import socket

    import dragoman.webhooks.targets as targets

    receiver = await receivers()
    real = socket.getaddrinfo
    answers = iter(["127.0.0.1", "127.0.0.1"])

    def resolve(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "hooks.example":
            return real(host, port, *args, **kwargs)
        address = next(answers, "127.0.0.9")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    monkeypatch.setattr(targets, "_refused", lambda address: str(address) != "127.0.0.1")
    running = await make_service(webhook_allow_private=False)
    url = f"http://hooks.example:{receiver.port}/hooks/dragoman"

    job_id = await submit(running, "hello", callback_url=url)

    (received,) = await receiver.got(1)
    delivery = await settled(running.store, job_id, DeliveryStatus.DELIVERED)
    assert delivery.attempts == 1
    assert received.headers["Host"] == f"hooks.example:{receiver.port}"
    assert next(answers, None) is None  # the submit's check and the attempt's: no third look


def test_a_pinned_https_target_keeps_its_name_for_tls_and_the_host_header() -> None:
    from dragoman.webhooks.targets import pin

    pinned = pin("https://hooks.example/x?a=1", "2001:db8::1")
    assert pinned.url == "https://[2001:db8::1]/x?a=1"
    assert pinned.headers == {"host": "hooks.example"}
    assert pinned.extensions == {"sni_hostname": "hooks.example"}
    assert pin("http://hooks.example:8080/x", "203.0.113.5").url == "http://203.0.113.5:8080/x"
    assert pin("http://hooks.example/x", None).url == "http://hooks.example/x"
