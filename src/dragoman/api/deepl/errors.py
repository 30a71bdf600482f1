"""DeepL's refusals: ``{"message": "..."}`` (what deepl-python puts in its exceptions, with
a ``detail`` where one is given) with DeepL's status codes — 400 bad input, 403 key, 404,
413 too large, 429 with Retry-After, 456 quota spent, 503 with Retry-After — from
dragoman's one error tree. Every exception of a route is answered here, in this shape;
FastAPI's error body is never sent."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from fastapi import Response
from fastapi.responses import JSONResponse

from dragoman.errors import (
    ClientError,
    DragomanError,
    Forbidden,
    GlossaryMismatch,
    NotFound,
    PayloadTooLarge,
    QuotaExceeded,
    TooManyRequests,
    TransientError,
    Unauthorized,
    UnknownDictionary,
    UnknownGlossary,
    UnsupportedPair,
)

log = logging.getLogger(__name__)

QUOTA_EXCEEDED = 456  # DeepL's status for a spent character quota


class DeepLRefusal(ClientError):
    """A refusal worded by this API; 400 unless said otherwise."""

    def __init__(
        self,
        message: str,
        status: int = 400,
        retry_after_s: int | None = None,
        *,
        detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s
        self.detail = detail


def unsupported(name: str) -> DeepLRefusal:
    return DeepLRefusal(f"Value for '{name}' not supported.")


async def answer(work: Awaitable[Any]) -> Response:
    """The route's result as JSON (a ``Response`` as it is), or its refusal."""
    try:
        result = await work
    except Exception as exc:  # every error of a route is answered here, in this shape
        return response(refusal(exc))
    return result if isinstance(result, Response) else JSONResponse(result)


def response(refused: DeepLRefusal) -> JSONResponse:
    retry = refused.retry_after_s
    headers = None if retry is None else {"Retry-After": str(retry)}
    body = {"message": refused.message}
    if refused.detail is not None:
        body["detail"] = refused.detail
    return JSONResponse(body, status_code=refused.status, headers=headers)


def refusal(exc: Exception) -> DeepLRefusal:
    """dragoman's errors with DeepL's wording and status codes."""
    if isinstance(exc, DeepLRefusal):
        return exc
    if isinstance(exc, TooManyRequests):
        status = QUOTA_EXCEEDED if isinstance(exc, QuotaExceeded) else 429
        return DeepLRefusal(exc.message, status, exc.retry_after_s)
    if isinstance(exc, ClientError):
        return DeepLRefusal(_worded(exc), _status(exc))
    if isinstance(exc, TransientError):
        return DeepLRefusal(exc.message, 503, exc.retry_after_s)
    if isinstance(exc, DragomanError):
        log.error("request failed: %s", exc.message)
        return DeepLRefusal(exc.message, 500)
    log.error("unexpected error", exc_info=exc)
    return DeepLRefusal("Internal error; see the server log", 500)


def _status(exc: ClientError) -> int:
    kinds = ((NotFound, 404), (PayloadTooLarge, 413), (Forbidden, 403), (Unauthorized, 403))
    for kind, status in kinds:
        if isinstance(exc, kind):
            return status
    return 400


def _worded(exc: ClientError) -> str:
    if isinstance(exc, Unauthorized):
        return "Authorization failure: the auth key is missing or not valid"
    if isinstance(exc, UnknownGlossary):
        return "Glossary not found"
    if isinstance(exc, UnknownDictionary):
        return "Dictionary not found"
    if isinstance(exc, GlossaryMismatch):
        return "Language pair of the glossary doesn't match the language pair of the request"
    if isinstance(exc, UnsupportedPair) and exc.missing is not None:
        return f"Value for '{exc.missing}_lang' not supported."
    if isinstance(exc, UnsupportedPair) and exc.source and exc.target:
        return (
            f"No translation from {exc.source.upper()} into {exc.target.upper()} is "
            "installed on this server."
        )
    if isinstance(exc, PayloadTooLarge) and exc.unit == "segments":
        return f"Too many texts: {exc.count}; the limit is {exc.limit}"
    if isinstance(exc, PayloadTooLarge) and exc.unit == "characters":
        return f"A text has {exc.count} characters; the limit is {exc.limit}"
    return exc.message
