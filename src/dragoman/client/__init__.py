"""A typed client of the dragoman HTTP API: what ``dragoman translate`` and ``dragoman jobs``
call, and what scripts (``bench/``) can reuse.

Every call either returns the decoded answer or raises one of the exceptions below, never an
``httpx`` error:

- ``InvalidServerURL``: the server URL is not an ``http://`` or ``https://`` URL.
- ``ServerUnreachable``: no dragoman answered: nothing listens there, or (its subclasses)
  ``UnknownHost``, ``ServerTimedOut``, ``ConnectionLost`` (reset midway), ``NotHTTP``
  (something that does not speak HTTP) and ``NotADragoman`` (an HTTP server whose answer is
  not the API's JSON).
- ``ServerRefused``: the API answered with its ``{"error": {code, message}}`` and a 4xx or
  5xx; ``ServiceUnavailable`` is its 503 (retry after ``retry_after_s``).
- ``JobUnsuccessful``: a followed job ended failed or cancelled.

These are not ``dragoman.errors``: those are the server's own errors, which become the HTTP
answers this client reads. They live in ``errors.py``; ``views.py`` types the answers;
``sse.py`` reads the job's events that ``Client.follow`` follows.

A job may go into several target languages at once: ``submit`` and ``submit_files`` take a
list of them where they take one, and ``result``, ``file`` and ``files_zip`` take the
``target`` to read.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, cast

import httpx

from dragoman.client.errors import (
    ApiCallError,
    ConnectionLost,
    InvalidServerURL,
    JobUnsuccessful,
    NotADragoman,
    NotHTTP,
    ServerRefused,
    ServerTimedOut,
    ServerUnreachable,
    ServiceUnavailable,
    UnknownHost,
)
from dragoman.client.sse import server_events
from dragoman.client.views import (
    DocumentResult,
    JobPage,
    JobResult,
    JobView,
    TargetView,
    succeeded,
    with_segments,
)
from dragoman.formats import translated_name
from dragoman.models import FINISHED, JobStatus

__all__ = [
    "DEFAULT_SERVER",
    "DEFAULT_TIMEOUT_S",
    "ApiCallError",
    "Client",
    "ConnectionLost",
    "DocumentResult",
    "InvalidServerURL",
    "JobPage",
    "JobResult",
    "JobUnsuccessful",
    "JobView",
    "NotADragoman",
    "NotHTTP",
    "ServerRefused",
    "ServerTimedOut",
    "ServerUnreachable",
    "ServiceUnavailable",
    "TargetView",
    "Targets",
    "UnknownHost",
    "output_path",
    "server_url",
    "succeeded",
]

DEFAULT_SERVER = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT_S = 60.0
POLL_INTERVAL_S = 0.2

# A job's target language, or several (a list or a tuple): one job into each.
Targets = str | Sequence[str]


# --- the client --------------------------------------------------------------------------


def server_url(server: str) -> str:
    """The server URL as given, without a trailing slash; ``InvalidServerURL`` unless it is an
    ``http://`` or ``https://`` URL with a host."""
    try:
        url = httpx.URL(server)
    except (httpx.InvalidURL, TypeError):
        raise InvalidServerURL(server) from None
    if url.scheme not in {"http", "https"} or not url.host:
        raise InvalidServerURL(server)
    return server.rstrip("/")


def output_path(path: Path, target: str) -> Path:
    """``a.txt`` translated to ``es`` is written as ``a.es.txt`` (as the server names it)."""
    return path.with_name(translated_name(path.name, target))


class Client:
    """The calls to one dragoman API. ``timeout_s`` bounds each request (default
    ``DEFAULT_TIMEOUT_S``); ``transport`` is httpx's, for an app in process."""

    def __init__(
        self,
        server: str = DEFAULT_SERVER,
        api_key: str | None = None,
        *,
        timeout_s: float | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.server = server_url(server)
        self.api_key = api_key
        self.timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            base_url=self.server, headers=headers, timeout=self.timeout_s, transport=transport
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def submit(
        self,
        source_lang: str,
        target_lang: Targets,
        documents: Sequence[tuple[str, Sequence[str]]],
        *,
        priority: str = "normal",
        engine: str | None = None,
        mark_unknown: bool = False,
        idempotency_key: str | None = None,
        deadline: str | None = None,
        review_below: float | None = None,
    ) -> JobView:
        """``POST /v1/jobs``: one job of ``(name, segments)`` documents into ``target_lang``,
        or into each of several (``["es", "fr"]``). With ``idempotency_key``, sending it
        again (a retry) gives the same job; ``deadline`` is an RFC 3339 date-time, and
        ``review_below`` the confidence (0 to 1) under which a segment is to review."""
        targets: dict[str, str | list[str]] = (
            {"target_lang": target_lang}
            if isinstance(target_lang, str)
            else {"target_langs": list(target_lang)}
        )
        body: dict[str, Any] = {
            "source_lang": source_lang,
            **targets,
            "documents": [{"name": name, "segments": list(segs)} for name, segs in documents],
            "priority": priority,
        }
        if mark_unknown:
            body["mark_unknown"] = True
        if engine is not None:
            body["engine"] = engine
        body.update(_scheduled(deadline, review_below))
        headers = _keyed(idempotency_key)
        return cast(JobView, self._call("POST", "/v1/jobs", json=body, headers=headers))

    def submit_files(
        self,
        source_lang: str,
        target_lang: Targets,
        files: Sequence[tuple[str, bytes]],
        *,
        priority: str = "normal",
        engine: str | None = None,
        segmentation: str = "srx",
        mark_unknown: bool = False,
        idempotency_key: str | None = None,
        deadline: str | None = None,
        review_below: float | None = None,
    ) -> JobView:
        """``POST /v1/jobs`` as multipart: one job of ``(file name, bytes)`` files; the
        targets, ``idempotency_key``, ``deadline`` and ``review_below`` as ``submit``'s."""
        fields = {
            "source_lang": source_lang,
            **(
                {"target_lang": target_lang}
                if isinstance(target_lang, str)
                else {"target_langs": ",".join(target_lang)}
            ),
            "priority": priority,
            "segmentation": segmentation,
        }
        if mark_unknown:
            fields["mark_unknown"] = "true"
        if engine is not None:
            fields["engine"] = engine
        fields.update(
            {name: str(value) for name, value in _scheduled(deadline, review_below).items()}
        )
        parts = [("files", (name, content)) for name, content in files]
        headers = _keyed(idempotency_key)
        return cast(
            JobView, self._call("POST", "/v1/jobs", data=fields, files=parts, headers=headers)
        )

    def file(
        self, job_id: str, n: int, target: str | None = None, *, partial: bool = False
    ) -> bytes:
        """``GET /v1/jobs/{id}/files/{n}``: the n-th file of a job, translated (into
        ``target``: required when the job has several)."""
        return self._bytes(f"/v1/jobs/{job_id}/files/{n}", target, partial)

    def files_zip(self, job_id: str, target: str | None = None, *, partial: bool = False) -> bytes:
        """``GET /v1/jobs/{id}/files.zip``: every file of a job, translated, in a zip with a
        folder per target language (``target``'s only, with one)."""
        return self._bytes(f"/v1/jobs/{job_id}/files.zip", target, partial)

    def _bytes(self, path: str, target: str | None, partial: bool) -> bytes:
        params = _query(target=target, partial="true" if partial else None)
        response = self._send("GET", path, params=params)
        if not response.is_success:
            self._decoded(response)  # raises the server's error
        return response.content

    def job(self, job_id: str) -> JobView:
        return cast(JobView, self._call("GET", f"/v1/jobs/{job_id}"))

    def result(self, job_id: str, target: str | None = None) -> JobResult:
        """``GET /v1/jobs/{id}/result``: translations so far, every target's documents, or
        ``target``'s only."""
        params = _query(target=target)
        return cast(JobResult, self._call("GET", f"/v1/jobs/{job_id}/result", params=params))

    def cancel(self, job_id: str) -> JobView:
        return cast(JobView, self._call("DELETE", f"/v1/jobs/{job_id}"))

    def jobs(
        self, *, status: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> JobPage:
        query = _query(status=status, limit=limit, cursor=cursor)
        return cast(JobPage, self._call("GET", "/v1/jobs", params=query))

    def languages(self) -> dict[str, Any]:
        return cast(dict[str, Any], self._call("GET", "/v1/languages"))

    def follow(
        self,
        job: JobView,
        on_update: Callable[[JobView], None] | None = None,
        *,
        poll_s: float = POLL_INTERVAL_S,
    ) -> JobView:
        """Follows the job's events until it has finished (whatever the outcome) and
        returns it; polls a server that has no events."""
        if JobStatus(job["status"]) not in FINISHED:
            job = self._events(job, on_update or (lambda _: None))
        while JobStatus(job["status"]) not in FINISHED:
            time.sleep(poll_s)
            job = self.job(job["id"])
            if on_update is not None:
                on_update(job)
        return job

    def _events(self, job: JobView, on_update: Callable[[JobView], None]) -> JobView:
        """The job's events until it has finished; a stream the server ends sooner is taken
        up again after its last event. Where there are none, the caller polls."""
        timeout = httpx.Timeout(self.timeout_s, read=max(self.timeout_s, 60.0))
        last: dict[str, str] = {}
        told: dict[str, int] = {}  # segments told per target language
        try:
            while JobStatus(job["status"]) not in FINISHED:
                path = f"/v1/jobs/{job['id']}/events"
                with self._http.stream("GET", path, headers=last, timeout=timeout) as r:
                    if not r.headers.get("content-type", "").startswith("text/event-stream"):
                        return job
                    for event in server_events(r.iter_lines()):
                        last = {"Last-Event-ID": event.id} if event.id else last
                        if event.event in ("status", "progress"):
                            job = cast(JobView, {**job, **json.loads(event.data)})
                        elif event.event == "segments":
                            job = with_segments(job, json.loads(event.data), told)
                        else:
                            continue
                        on_update(job)
        except httpx.TransportError:
            pass  # polled from here
        return job

    def translation(self, job: JobView, target: str | None = None) -> JobResult:
        """The result of a finished job (``target``'s only, with one); ``JobUnsuccessful``
        unless it (or ``target``, in a job that ended with another target failed)
        succeeded."""
        if not succeeded(job, target):
            raise JobUnsuccessful(self.server, job)
        return self.result(job["id"], target)

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._decoded(self._send(method, path, **kwargs))

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return self._http.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            if isinstance(exc, httpx.ConnectTimeout):
                raise ServerUnreachable(self.server, "connection timed out") from None
            raise ServerTimedOut(self.server, self.timeout_s) from None
        except httpx.ConnectError as exc:
            if _caused_by(exc, socket.gaierror):
                raise UnknownHost(self.server, _reason(exc)) from None
            raise ServerUnreachable(self.server, _reason(exc)) from None
        except (httpx.RemoteProtocolError, httpx.DecodingError) as exc:
            raise NotHTTP(self.server, _reason(exc)) from None
        except (httpx.ReadError, httpx.WriteError) as exc:
            raise ConnectionLost(self.server, _reason(exc)) from None
        except httpx.TransportError as exc:  # proxies, ...
            raise ServerUnreachable(self.server, _reason(exc)) from None

    def _decoded(self, response: httpx.Response) -> Any:
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.is_success:
            if body is None:
                raise NotADragoman(self.server, response.status_code, response.reason_phrase)
            return body
        error = body.get("error") if isinstance(body, dict) else None
        if not (
            isinstance(error, dict)
            and isinstance(error.get("code"), str)
            and isinstance(error.get("message"), str)
        ):
            raise NotADragoman(self.server, response.status_code, response.reason_phrase)
        code, message = error["code"], error["message"]
        if response.status_code == 503:
            retry_after = response.headers.get("Retry-After", "")
            seconds = float(retry_after) if retry_after.isdigit() else None
            raise ServiceUnavailable(self.server, code, message, seconds)
        raise ServerRefused(self.server, response.status_code, code, message)


def _scheduled(deadline: str | None, review_below: float | None) -> dict[str, str | float]:
    """The job's optional ``deadline`` and ``review_below`` fields, as given."""
    fields: dict[str, str | float] = {}
    if deadline is not None:
        fields["deadline"] = deadline
    if review_below is not None:
        fields["review_below"] = review_below
    return fields


def _query(**params: str | int | None) -> dict[str, str | int]:
    """Query parameters, those that are None left out."""
    return {key: value for key, value in params.items() if value is not None}


def _keyed(idempotency_key: str | None) -> dict[str, str]:
    return {"Idempotency-Key": idempotency_key} if idempotency_key else {}


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _reason(exc: Exception) -> str:
    """What the connection hit, without errno noise: "Connection refused", ..."""
    text = str(exc) or type(exc).__name__
    if text.startswith("[Errno") and "] " in text:
        text = text.split("] ", 1)[1]
    return text
