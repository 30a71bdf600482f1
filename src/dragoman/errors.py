"""One small tree of errors, grouped by who handles them.

- ``ClientError``: the caller's fault; mapped to a 4xx in ``api/errors.py`` and nowhere else.
- ``TransientError``: a dependency is unavailable; retry later (HTTP 503 with Retry-After).
- ``FatalError``: the work cannot succeed as asked; the job fails with a reason.
"""

from __future__ import annotations


class DragomanError(Exception):
    code = "internal_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ClientError(DragomanError):
    status = 400
    code = "bad_request"


class InvalidRequest(ClientError):
    status = 422
    code = "invalid_request"


class UnknownLanguage(InvalidRequest):
    """A language code that is not ISO 639 (``language``: as given)."""

    def __init__(self, message: str, *, language: str) -> None:
        super().__init__(message)
        self.language = language


class GlossaryMismatch(InvalidRequest):
    """A glossary named for a translation of another language pair."""


class BadEncoding(ClientError):
    """Bytes of a form, a query string or a file that are not text in the charset in force."""

    status = 400
    code = "bad_encoding"


class UnsupportedPair(ClientError):
    """No installed engine translates ``source`` into ``target``; ``missing`` names the
    side (``"source"`` or ``"target"``) that no installed pair has at all, if one is."""

    status = 422
    code = "unsupported_language_pair"

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        target: str | None = None,
        missing: str | None = None,
    ) -> None:
        super().__init__(message)
        self.source = source
        self.target = target
        self.missing = missing


class UnroutedLanguage(UnsupportedPair):
    """A language detected in a text or a document (``source``) that no installed pair,
    direct or through a pivot, translates into ``target``. A 400, where a pair asked for
    is a 422: the caller never named the language, so the answer names it, and the target."""

    status = 400
    code = "detected_language_unsupported"


class InvalidSegment(ClientError):
    status = 422
    code = "invalid_segment"


class InvalidFile(ClientError):
    """An uploaded file that is not what its format says; the message names the file."""

    status = 422
    code = "invalid_file"


class UnsupportedFormat(ClientError):
    status = 415
    code = "unsupported_format"


class PayloadTooLarge(ClientError):
    """More than a limit allows: ``count`` of ``unit`` (``"segments"``, ``"characters"``)
    against ``limit``, when the limit is one of those."""

    status = 413
    code = "payload_too_large"

    def __init__(
        self, message: str, *, count: int = 0, limit: int = 0, unit: str | None = None
    ) -> None:
        super().__init__(message)
        self.count = count
        self.limit = limit
        self.unit = unit


class Unauthorized(ClientError):
    status = 401
    code = "unauthorized"


class Forbidden(ClientError):
    """A valid key that may not do this (the fleet's figures need an operator's key)."""

    status = 403
    code = "forbidden"


class NotFound(ClientError):
    status = 404
    code = "not_found"


class Conflict(ClientError):
    status = 409
    code = "conflict"


class UnknownGlossary(NotFound):
    """A glossary id that is not one of the caller's."""


class UnknownDictionary(NotFound):
    """A language pair that one of the caller's glossaries has no dictionary for."""


class NotFinished(Conflict):
    code = "not_finished"


class IdempotencyKeyReused(InvalidRequest):
    """An Idempotency-Key already used for another request (another body or path)."""

    code = "idempotency_key_reused"


class IdempotencyKeyInUse(Conflict):
    """The first request with this Idempotency-Key is still being handled."""

    code = "idempotency_key_in_use"


class TransientError(DragomanError):
    code = "unavailable"
    retry_after_s = 5


class StoreUnavailable(TransientError):
    code = "store_unavailable"


class BusUnavailable(TransientError):
    code = "broker_unavailable"


class FatalError(DragomanError):
    code = "fatal"


class EngineError(FatalError):
    code = "engine_error"


class EngineTimeout(EngineError):
    code = "engine_timeout"


class TooManyRequests(ClientError):
    """Refused for now: retry after ``retry_after_s`` seconds."""

    status = 429
    code = "too_many_requests"

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = max(1, retry_after_s)


class RateLimited(TooManyRequests):
    code = "rate_limited"


class QuotaExceeded(TooManyRequests):
    """The tenant's characters for the period are spent; retry when the next one starts."""

    code = "quota_exceeded"
