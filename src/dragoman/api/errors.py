"""The one place where errors become HTTP responses, always ``{"error": {code, message}}``."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from dragoman.errors import ClientError, DragomanError, TransientError

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        parts.append(f"{where or 'body'}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def install_error_handlers(app: FastAPI) -> None:
    async def dragoman_error(_: Request, exc: Exception) -> JSONResponse:
        if isinstance(exc, ClientError):
            return error_response(exc.status, exc.code, exc.message)
        if isinstance(exc, TransientError):
            headers = {"Retry-After": str(exc.retry_after_s)}
            return error_response(503, exc.code, exc.message, headers)
        assert isinstance(exc, DragomanError)
        log.error("request failed: %s", exc.message)
        return error_response(500, exc.code, exc.message)

    async def validation_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(422, "invalid_request", _validation_message(exc))

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        headers = dict(exc.headers) if exc.headers else None
        return error_response(exc.status_code, code, str(exc.detail), headers)

    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return error_response(500, "internal_error", "internal error; see the server log")

    app.add_exception_handler(DragomanError, dragoman_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
