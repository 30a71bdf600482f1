"""``Idempotency-Key`` on the POSTs that create something: jobs (JSON and files),
glossaries and memories. The use case is ``dragoman.idempotency``; this middleware finds
the tenant and the request's fingerprint, and keeps or gives again the answer.

The fingerprint is the method, the path, the query, the media type and the body: a JSON
body as its canonical form (a client that orders its keys another way on a retry sends
the same request), a multipart body with its boundary left out (each encoding of a form
draws a new one).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dragoman.api.auth import key_in_header, tenant_for
from dragoman.api.deps import ApiParts
from dragoman.api.errors import answer_to
from dragoman.api.limits import replaying
from dragoman.api.v1.glossaries import GlossaryOut
from dragoman.api.v1.job_out import JobOut
from dragoman.errors import DragomanError, InvalidRequest, Unauthorized
from dragoman.idempotency import Answer, Claimed, Recover

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
KEY_PATTERN = r"^[\x20-\x7e]{1,255}$"
PATHS = frozenset({"/v1/jobs", "/v1/glossaries", "/v1/memories"})
# Answers a retry should not get again: the same request may be answered otherwise later.
_NOT_KEPT = frozenset({408, 409, 425, 429})
_KEY = re.compile(KEY_PATTERN)


class IdempotentPosts:
    """Gives the first answer again to a retry of a POST with the same ``Idempotency-Key``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = _key_of(scope)
        if key is None:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            tenant = tenant_for(request, key_in_header(request))
        except Unauthorized:
            await self.app(scope, receive, send)  # the route says 401 in its own words
            return
        body = await request.body()
        service: ApiParts = request.app.state.service
        try:
            if not _KEY.match(key):
                raise InvalidRequest(
                    f"{HEADER}: 1 to 255 printable ASCII characters (got {len(key)} characters)"
                )
            recover = _RECOVERED[scope["path"]](service, tenant, key)
            held = await service.idempotency.begin(tenant, key, fingerprint(scope, body), recover)
        except DragomanError as exc:
            await answer_to(exc)(scope, receive, send)
            return
        if isinstance(held, Answer):
            await _replay(held)(scope, receive, send)
            return
        scope.setdefault("state", {})["idempotency_key"] = key
        await self._first(held, scope, replaying(body, receive), send, service)

    async def _first(
        self, held: Claimed, scope: Scope, receive: Receive, send: Send, service: ApiParts
    ) -> None:
        """Handles the request that claimed the key, and keeps its answer."""
        start: Message = {}
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, capture)
        except BaseException:
            await _quietly(service.idempotency.release(held))
            raise
        status = int(start.get("status", 500))
        if status >= 500 or status in _NOT_KEPT:
            await _quietly(service.idempotency.release(held))
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in start["headers"]}
        answer = Answer(
            status, headers.get("content-type"), headers.get("location"), b"".join(chunks)
        )
        # Not kept (the store failing now): the key stays claimed, and a retry after
        # idempotency_lease_s recovers a job from the store or runs the request again.
        await _quietly(service.idempotency.finish(held, answer))


def _key_of(scope: Scope) -> str | None:
    if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in PATHS:
        return None
    for name, value in scope["headers"]:
        if name == b"idempotency-key":
            return str(value.decode("latin-1"))
    return None


def fingerprint(scope: Scope, body: bytes) -> str:
    """What makes two requests with one key the same request (see the module's doc)."""
    content_type = ""
    for name, value in scope["headers"]:
        if name == b"content-type":
            content_type = value.decode("latin-1")
    media_type, _, parameters = content_type.partition(";")
    media_type = media_type.strip().lower()
    if media_type == "application/json":
        # Not JSON: the route refuses it, and its bytes are its fingerprint.
        with contextlib.suppress(ValueError):
            body = json.dumps(
                json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False
            ).encode()
    elif media_type == "multipart/form-data":
        boundary = re.search(r'boundary="?([^";]+)"?', parameters)
        if boundary:
            body = body.replace(b"--" + boundary.group(1).encode("latin-1"), b"--")
    digest = hashlib.sha256()
    query = scope.get("query_string", b"").decode("latin-1")
    for part in (scope["method"], scope["path"], query, media_type):
        digest.update(part.encode() + b"\0")
    digest.update(body)
    return digest.hexdigest()


def _job_answer(service: ApiParts, tenant: str | None, key: str) -> Recover:
    """The answer of a job submitted with ``key``, rebuilt from the store."""

    async def recover() -> Answer | None:
        job_id = await service.idempotency.job_of(tenant, key)
        if job_id is None:
            return None
        job = await service.manager.get(job_id, tenant)
        body = JobOut.of(job, now=service.manager.now())
        content = body.__pydantic_serializer__.to_json(body, by_alias=True)
        return Answer(202, "application/json", f"/v1/jobs/{job.id}", content)

    return recover


def _glossary_answer(service: ApiParts, tenant: str | None, key: str) -> Recover:
    """The answer of a glossary created with ``key``, rebuilt from the store."""

    async def recover() -> Answer | None:
        glossary = await service.terminology.created_with(tenant, key)
        if glossary is None:
            return None
        body = GlossaryOut.of(glossary)
        content = body.__pydantic_serializer__.to_json(body, by_alias=True)
        return Answer(201, "application/json", f"/v1/glossaries/{glossary.id}", content)

    return recover


def _memory_answer(service: ApiParts, tenant: str | None, key: str) -> Recover | None:
    """None: an import replaces the memory of its name, so running it again after a crash
    gives the same memory, never a second one."""
    return None


_RECOVERED: dict[str, Callable[[ApiParts, str | None, str], Recover | None]] = {
    "/v1/jobs": _job_answer,
    "/v1/glossaries": _glossary_answer,
    "/v1/memories": _memory_answer,
}


def _replay(answer: Answer) -> Response:
    headers = {REPLAYED: "true"}
    if answer.location:
        headers["Location"] = answer.location
    return Response(
        answer.body, status_code=answer.status, headers=headers, media_type=answer.content_type
    )


async def _quietly(step: Awaitable[None]) -> None:
    try:
        await step
    except Exception:
        log.exception("an Idempotency-Key's answer could not be kept or given back")
