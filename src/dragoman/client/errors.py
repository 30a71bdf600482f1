"""What can go wrong in a call to a dragoman API (see ``dragoman.client``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dragoman.models import JobStatus

if TYPE_CHECKING:
    from dragoman.client import JobView


class ApiCallError(Exception):
    """A call to a dragoman server gave no answer to use."""

    def __init__(self, server: str, message: str) -> None:
        super().__init__(message)
        self.server = server
        self.message = message


class InvalidServerURL(ApiCallError):
    def __init__(self, server: str) -> None:
        super().__init__(server, f"{server!r} is not an http:// or https:// URL")


class ServerUnreachable(ApiCallError):
    """Nothing answered at the server URL (``reason`` says what the connection hit)."""

    def __init__(self, server: str, reason: str, message: str | None = None) -> None:
        super().__init__(server, message or f"no dragoman at {server} ({reason})")
        self.reason = reason


class ServerTimedOut(ServerUnreachable):
    def __init__(self, server: str, timeout_s: float) -> None:
        super().__init__(server, "timeout", f"{server} did not answer within {timeout_s:g} s")
        self.timeout_s = timeout_s


class UnknownHost(ServerUnreachable):
    """The URL's host name does not resolve."""

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(server, reason, f"the host of {server} is unknown ({reason})")


class ConnectionLost(ServerUnreachable):
    """The connection broke before the answer came (reset, closed midway)."""

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(server, reason, f"{server} broke the connection ({reason})")


class NotHTTP(ServerUnreachable):
    """Something listens at the URL, but what it says is not HTTP."""

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(server, reason, f"{server} does not speak HTTP ({reason})")


class NotADragoman(ServerUnreachable):
    """An HTTP server answered, but not with the API's JSON (a web server, a proxy's page)."""

    def __init__(self, server: str, status: int, reason_phrase: str) -> None:
        answer = f"HTTP {status} {reason_phrase}".strip()
        super().__init__(server, answer, f"{server} is not a dragoman API (it answered {answer})")
        self.status = status


class ServerRefused(ApiCallError):
    """The API answered a 4xx or 5xx with its error body."""

    def __init__(self, server: str, status: int, code: str, message: str) -> None:
        super().__init__(server, f"{message} ({code})")
        self.status = status
        self.code = code
        self.detail = message


class ServiceUnavailable(ServerRefused):
    """503: a dependency of the service (its store, its broker) is down for now."""

    def __init__(self, server: str, code: str, message: str, retry_after_s: float | None) -> None:
        super().__init__(server, 503, code, message)
        self.retry_after_s = retry_after_s


class JobUnsuccessful(ApiCallError):
    """The job ended ``failed`` or ``cancelled``."""

    def __init__(self, server: str, job: JobView) -> None:
        error = job["error"]
        if job["status"] == JobStatus.CANCELLED:
            message = f"job {job['id']} was cancelled"
        elif error is not None:
            message = f"job {job['id']} {job['status']}: {error['message']} ({error['code']})"
        else:
            message = f"job {job['id']} {job['status']}"
        super().__init__(server, message)
        self.job = job
