"""The notifier: turns each finished job with a ``callback_url`` into a delivery and sends it,
signed as Standard Webhooks specify, until a 2xx answers or the retry schedule runs out. A
job that will miss its deadline (``Job.at_risk``, from the watchdog's forecast) is warned
once before it ends, the same way (``job.at_risk``).

One runs in a cluster, beside the active watchdog. Deliveries are rows in the store, so a
restarted or new notifier sends what the last one left pending; its ``webhook-id`` stays the
same on every attempt, which is what receivers deduplicate on. Delivery is at least once: an
attempt cut short by a stop is sent again with the same id.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from standardwebhooks.webhooks import Webhook

from dragoman import __version__
from dragoman.errors import InvalidRequest, TransientError
from dragoman.models import Job, JobStatus
from dragoman.runtime import Runtime
from dragoman.tasks import cancel_and_wait
from dragoman.webhooks.store import (
    AT_RISK,
    Deliveries,
    DeliveryStatus,
    SqlDeliveries,
    WebhookDelivery,
)
from dragoman.webhooks.targets import UnresolvedTarget, check_target

log = logging.getLogger(__name__)

Render = Callable[[Job], dict[str, Any]]
"""A job as ``GET /v1/jobs/{id}`` shows it (the API's schema lives a layer above)."""

EVENTS = {
    JobStatus.SUCCEEDED: "job.succeeded",
    JobStatus.FAILED: "job.failed",
    JobStatus.CANCELLED: "job.cancelled",
}
BATCH = 100  # jobs turned into deliveries, and deliveries started, per round at most
MAX_SENDING = 16  # attempts in flight at once: one slow receiver must not hold up the rest
JITTER = 0.1  # a retry waits up to 10 % longer, so that failures do not retry in step
MAX_RETRY_AFTER_S = 86_400.0
MAX_ERROR_CHARS = 500
STOP_GRACE_S = 5.0
THROTTLED = frozenset({429, 503})


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt comes to, as ``Deliveries.record_attempt`` records it."""

    status: DeliveryStatus
    last_status: int | None = None
    last_error: str | None = None
    next_attempt_at: datetime | None = None


def isoformat(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``, as the API writes its times."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def retry_after(response: httpx.Response, now: datetime) -> float | None:
    """The seconds a ``Retry-After`` header asks for (a number or an HTTP date), if any."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


class Notifier:
    """Creates and sends the deliveries of jobs' ends; ``start`` and ``stop`` it with the
    watchdog. ``render`` gives a job's ``data`` in the payload."""

    def __init__(self, runtime: Runtime, *, render: Render) -> None:
        self._settings = runtime.settings
        self._store: Deliveries = SqlDeliveries(runtime.database)
        self._clock = runtime.clock
        self._render = render
        secret = runtime.settings.webhook_secret
        self._signer = Webhook(secret) if secret else None
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.Task[None] | None = None
        self._sending: dict[str, asyncio.Task[None]] = {}

    # -- creating deliveries --------------------------------------------------------------

    async def enqueue(self) -> int:
        """Turns finished, unnotified jobs, and jobs newly at risk of missing their
        deadline, into deliveries; returns how many were made."""
        made = 0
        ended = [self.delivery_of(job) for job in await self._store.unnotified(BATCH)]
        at_risk = await self._store.at_risk(self._clock.now(), BATCH)
        for delivery in [*ended, *(self.delivery_of(job, AT_RISK) for job in at_risk)]:
            if delivery is not None and await self._store.add_delivery(delivery):
                made += 1
                log.info(
                    "job %s: %s notification %s created",
                    delivery.job_id,
                    delivery.event,
                    delivery.id,
                )
        return made

    def delivery_of(self, job: Job, event: str | None = None) -> WebhookDelivery | None:
        """The delivery announcing the end of ``job`` (or ``event``, ``AT_RISK``); None if
        it has nothing to announce."""
        event = event or EVENTS.get(job.status)
        if event is None or job.options.callback_url is None:
            return None
        now = self._clock.now()
        # An end is dated when it happened; a warning, when it was found.
        moment = now if event == AT_RISK else job.finished_at or now
        payload = {"type": event, "timestamp": isoformat(moment), "data": self._render(job)}
        return WebhookDelivery(
            id=f"msg_{uuid.uuid4().hex}",
            job_id=job.id,
            tenant=job.tenant,
            url=job.options.callback_url,
            event=event,
            payload=json.dumps(payload, separators=(",", ":"), ensure_ascii=False),
            next_attempt_at=now,
            created_at=now,
        )

    # -- sending --------------------------------------------------------------------------

    async def attempt(self, delivery: WebhookDelivery) -> Outcome | None:
        """Sends the next attempt of a pending delivery and records it; None when another
        notifier recorded that attempt first."""
        number = delivery.attempts + 1
        outcome = await self._send(delivery, number)
        recorded = await self._store.record_attempt(
            delivery.id,
            number,
            outcome.status,
            next_attempt_at=outcome.next_attempt_at,
            last_status=outcome.last_status,
            last_error=outcome.last_error,
            now=self._clock.now(),
        )
        self._log(delivery, number, outcome)
        return outcome if recorded else None

    async def _send(self, delivery: WebhookDelivery, number: int) -> Outcome:
        try:
            # Checked again before every attempt: the name may resolve elsewhere now.
            target = await check_target(
                delivery.url, allow_private=self._settings.webhook_allow_private
            )
        except UnresolvedTarget as exc:  # perhaps a passing DNS failure: try again later
            return self._retry(number, None, exc.message)
        except InvalidRequest as exc:
            return Outcome(DeliveryStatus.FAILED, last_error=f"target refused: {exc.message}")
        if self._signer is None or self._client is None:
            return self._retry(number, None, "notifications are off (no webhook secret)")
        now = self._clock.now()
        headers = {
            **target.headers,
            "webhook-id": delivery.id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": self._signer.sign(delivery.id, now, delivery.payload),
            "content-type": "application/json",
        }
        try:
            async with asyncio.timeout(self._settings.webhook_timeout_s):
                # Streamed and never read: a receiver's body is of no use and of any size.
                async with self._client.stream(
                    "POST",
                    target.url,
                    content=delivery.payload.encode(),
                    headers=headers,
                    extensions=target.extensions,
                ) as response:
                    return self._judge(number, response)
        except TimeoutError:
            return self._retry(number, None, f"no answer in {self._settings.webhook_timeout_s}s")
        except httpx.HTTPError as exc:
            return self._retry(number, None, f"{type(exc).__name__}: {exc}")

    def _judge(self, number: int, response: httpx.Response) -> Outcome:
        code = response.status_code
        if response.is_success:
            return Outcome(DeliveryStatus.DELIVERED, last_status=code)
        if code == 410:
            return Outcome(
                DeliveryStatus.FAILED,
                last_status=code,
                last_error="HTTP 410 Gone: the receiver wants no more deliveries",
            )
        hint = retry_after(response, self._clock.now()) if code in THROTTLED else None
        return self._retry(number, code, f"HTTP {code} {response.reason_phrase}".strip(), hint)

    def _retry(
        self, number: int, code: int | None, error: str, hint: float | None = None
    ) -> Outcome:
        """Attempt ``number`` failed: the next one after its delay, or none when the
        schedule is spent."""
        error = error[:MAX_ERROR_CHARS]
        delays = self._settings.webhook_delays
        if number > len(delays):
            return Outcome(
                DeliveryStatus.FAILED,
                last_status=code,
                last_error=f"{error} (gave up after {number} attempts)",
            )
        delay = delays[number - 1] * (1 + random.uniform(0, JITTER))
        if hint is not None:
            delay = max(delay, min(hint, MAX_RETRY_AFTER_S))
        next_at = self._clock.now() + timedelta(seconds=delay)
        return Outcome(DeliveryStatus.PENDING, code, error, next_at)

    @staticmethod
    def _log(delivery: WebhookDelivery, number: int, outcome: Outcome) -> None:
        answer = outcome.last_status if outcome.last_status is not None else "no answer"
        if outcome.status is DeliveryStatus.DELIVERED:
            log.info(
                "notification %s of job %s delivered (attempt %d, HTTP %s)",
                delivery.id,
                delivery.job_id,
                number,
                answer,
            )
        elif outcome.status is DeliveryStatus.FAILED:
            log.warning(
                "notification %s of job %s given up (attempt %d): %s",
                delivery.id,
                delivery.job_id,
                number,
                outcome.last_error,
            )
        else:
            log.info(
                "notification %s of job %s: attempt %d failed (%s), next at %s",
                delivery.id,
                delivery.job_id,
                number,
                outcome.last_error,
                outcome.next_attempt_at,
            )

    # -- the loop -------------------------------------------------------------------------

    async def step(self) -> None:
        """One round: new deliveries, then an attempt for each due one not in flight."""
        await self.enqueue()
        room = MAX_SENDING - len(self._sending)
        if room <= 0:
            return
        due = await self._store.due_deliveries(self._clock.now(), room + len(self._sending))
        for delivery in due:
            if delivery.id in self._sending or len(self._sending) >= MAX_SENDING:
                continue
            task = asyncio.create_task(self._attempt_fresh(delivery), name=f"notify-{delivery.id}")
            self._sending[delivery.id] = task
            task.add_done_callback(functools.partial(self._sent, delivery.id))

    def _sent(self, delivery_id: str, _: asyncio.Task[None]) -> None:
        self._sending.pop(delivery_id, None)

    async def _attempt_fresh(self, delivery: WebhookDelivery) -> None:
        # The row may have been read just before the previous attempt's record committed:
        # read it again, so that attempt is not sent twice.
        current = next(
            (d for d in await self._store.deliveries(delivery.job_id) if d.id == delivery.id),
            None,
        )
        if current is None or current.attempts != delivery.attempts:
            return
        if current.status is not DeliveryStatus.PENDING:
            return
        try:
            await self.attempt(current)
        except TransientError as exc:
            log.warning("notification %s: attempt not recorded: %s", delivery.id, exc)
        except Exception:
            log.exception("notification %s: attempt failed; will retry", delivery.id)

    async def _run_forever(self) -> None:
        while True:
            try:
                await self.step()
            except TransientError as exc:
                log.warning("notifications paused: %s", exc)
            except Exception:
                log.exception("notifications round failed; will retry")
            await asyncio.sleep(self._settings.sweep_interval_s)

    async def start(self) -> None:
        if self._signer is None:
            log.info("job notifications are off: DRAGOMAN_WEBHOOK_SECRET is not set")
            return
        self._client = httpx.AsyncClient(
            follow_redirects=False,  # a redirect is a failure (Standard Webhooks)
            timeout=self._settings.webhook_timeout_s,
            headers={"user-agent": f"dragoman/{__version__} (webhooks)"},
        )
        self._loop = asyncio.create_task(self._run_forever(), name="notifier")

    async def stop(self) -> None:
        # The loop first, so no attempt starts; attempts in flight get a short grace, since
        # one cut short is sent again after the next start.
        if self._loop is not None:
            await cancel_and_wait(self._loop)
            self._loop = None
        sending = list(self._sending.values())
        if sending:
            _, late = await asyncio.wait(sending, timeout=STOP_GRACE_S)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
            self._client = None
