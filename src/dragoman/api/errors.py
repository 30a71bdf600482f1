"""The one place where errors become HTTP responses, always ``{"error": {code, message}}``."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import Match, compile_path

from dragoman.api.v1.schemas import ErrorOut
from dragoman.errors import ClientError, DragomanError, TooManyRequests, TransientError

log = logging.getLogger(__name__)

_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


_WHEN = {
    400: "A form field, query string or text file is not valid in its charset (bad_encoding)",
    401: "API keys are configured and the request carries no valid one",
    403: "The key is valid but not an operator's (DRAGOMAN_OPERATOR_TENANTS)",
    404: "No such job for the caller's tenant",
    409: "The job has already finished",
    415: "A file's extension (or its 'format' field) is not a supported format",
    413: "The body, a segment or the number of segments is over its limit",
    422: "The request breaks the schema or a rule of the server",
    429: (
        "The tenant's requests per minute (rate_limited) or characters this month "
        "(quota_exceeded) are spent; retry after Retry-After seconds"
    ),
    500: "The engine failed or gave no output in time (engine_error, engine_timeout)",
    503: "A dependency does not answer; retry after Retry-After seconds",
}
_RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before retrying",
        "required": True,
        "schema": {"type": "integer", "minimum": 0},
    }
}


def error_responses(
    *statuses: int, when: Mapping[int, str] | None = None
) -> dict[int | str, dict[str, object]]:
    """The OpenAPI ``responses`` of a route that can answer ``statuses`` with the error body;
    ``when`` says, for some of them, what they mean on this route."""
    responses: dict[int | str, dict[str, object]] = {}
    for status in statuses:
        description = (when or {}).get(status, _WHEN[status])
        response: dict[str, object] = {"model": ErrorOut, "description": description}
        if status in (429, 503):
            response["headers"] = copy.deepcopy(_RETRY_AFTER)
        responses[status] = response
    return responses


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


def allowed_methods(request: Request) -> list[str]:
    """Every method the path of ``request`` answers, from the OpenAPI description and the
    undocumented routes (``/docs``). Starlette's own 405 names only the methods of the
    first route whose path matched."""
    app: FastAPI = request.app
    path = request.scope["path"]
    root = request.scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    methods: set[str] = set()
    for template, operations in app.openapi().get("paths", {}).items():
        if compile_path(template)[0].match(path):
            methods.update(method.upper() for method in operations)
    for route in app.router.routes:
        route_methods = getattr(route, "methods", None)
        if route_methods and route.matches(request.scope)[0] is not Match.NONE:
            methods.update(route_methods)
    if "GET" in methods:
        methods.add("HEAD")
    return sorted(methods)


def answer_to(exc: DragomanError) -> JSONResponse:
    """The response of one of ``errors.py``'s errors."""
    if isinstance(exc, TooManyRequests):
        headers = {"Retry-After": str(exc.retry_after_s)}
        return error_response(exc.status, exc.code, exc.message, headers)
    if isinstance(exc, ClientError):
        return error_response(exc.status, exc.code, exc.message)
    if isinstance(exc, TransientError):
        headers = {"Retry-After": str(exc.retry_after_s)}
        return error_response(503, exc.code, exc.message, headers)
    log.error("request failed: %s", exc.message)
    return error_response(500, exc.code, exc.message)


def install_error_handlers(app: FastAPI) -> None:
    async def dragoman_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, DragomanError)
        return answer_to(exc)

    async def validation_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(422, "invalid_request", _validation_message(exc))

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        headers = dict(exc.headers) if exc.headers else {}
        message = str(exc.detail)
        if exc.status_code == 400 and isinstance(exc.__cause__, ValueError):
            # FastAPI's answer to a body it cannot decode (not UTF-8): as malformed JSON is.
            return error_response(422, "invalid_request", f"body: not valid JSON ({exc.__cause__})")
        if exc.status_code == 405:
            allowed = allowed_methods(request)
            if allowed:
                headers["Allow"] = ", ".join(allowed)
            message = (
                f"method {request.method} is not allowed on {request.url.path}; "
                f"allowed: {headers.get('Allow', 'none')}"
            )
        return error_response(exc.status_code, code, message, headers or None)

    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return error_response(500, "internal_error", "internal error; see the server log")

    app.add_exception_handler(DragomanError, dragoman_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
