"""LibreTranslate's refusals: ``{"error": "message"}`` with its status codes, from dragoman's
one error tree. Every exception of a route is answered here, in this shape."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from fastapi import Response
from fastapi.responses import JSONResponse

from dragoman.errors import (
    ClientError,
    DragomanError,
    PayloadTooLarge,
    TooManyRequests,
    TransientError,
    Unauthorized,
    UnknownLanguage,
    UnsupportedPair,
)
from dragoman.languages import english_name

log = logging.getLogger(__name__)


class LtRefusal(ClientError):
    """A refusal worded by this API; 400 unless said otherwise."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


async def answer(work: Awaitable[Any]) -> Response:
    """The route's result as JSON (a ``Response`` as it is), or its refusal."""
    try:
        result = await work
    except Exception as exc:  # every error of a route is answered here, in this shape
        return refusal(exc)
    return result if isinstance(result, Response) else JSONResponse(result)


def refusal(exc: Exception) -> JSONResponse:
    status, headers = 500, None
    if isinstance(exc, ClientError):
        status = 403 if isinstance(exc, Unauthorized) else exc.status
        status = status if status in (403, 404, 409, 429) else 400
    if isinstance(exc, TooManyRequests | TransientError):
        status = 429 if isinstance(exc, TooManyRequests) else 503
        headers = {"Retry-After": str(exc.retry_after_s)}
    if status == 500:
        _log(exc)
    return JSONResponse({"error": message(exc)}, status_code=status, headers=headers)


def message(exc: Exception) -> str:
    """LibreTranslate's wording where it has its own."""
    if isinstance(exc, Unauthorized):
        return "Invalid API key"
    if isinstance(exc, UnknownLanguage):
        return f"{exc.language} is not supported"
    if isinstance(exc, UnsupportedPair) and exc.missing is not None:
        return f"{exc.source if exc.missing == 'source' else exc.target} is not supported"
    if isinstance(exc, UnsupportedPair) and exc.source and exc.target:
        source, target = exc.source, exc.target
        return (
            f"{english_name(target)} ({target}) is not available as a target language from "
            f"{english_name(source)} ({source})"
        )
    if isinstance(exc, PayloadTooLarge) and exc.unit is not None:
        return f"Invalid request: request ({exc.count}) exceeds text limit ({exc.limit})"
    if isinstance(exc, DragomanError):
        return exc.message
    return "Internal error; see the server log"


def _log(exc: Exception) -> None:
    if isinstance(exc, DragomanError):
        log.error("request failed: %s", exc.message)
    else:
        log.error("unexpected error", exc_info=exc)
