"""Downloads that survive a cut: the next link when one fails, HTTP ``Range`` to resume from
the bytes already kept, a read that stalls times out and is retried."""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

from dragoman import __version__
from dragoman.packages.errors import NoSpace, OfflineError, PackageError

log = logging.getLogger(__name__)

Progress = Callable[[int, int | None], None]  # bytes kept so far, bytes in all (None: unknown)
_CHUNK = 1 << 16


class _Retry(Exception):
    """This attempt failed in a way the next one may not: resume from what is kept."""


class _NextLink(Exception):
    """This link will not serve the file (404, 403...): try the next one."""


class Network:
    """How dragoman reaches package servers; with ``offline`` every attempt is an error."""

    def __init__(
        self,
        *,
        offline: bool = False,
        stall_timeout_s: float = 30.0,
        attempts: int = 3,
        backoff_s: float = 1.0,
    ) -> None:
        self.offline = offline
        self._timeout = httpx.Timeout(stall_timeout_s, connect=min(stall_timeout_s, 15.0))
        self._attempts = attempts
        self._backoff_s = backoff_s
        self._headers = {"User-Agent": f"dragoman/{__version__}"}

    def _client(self, url: str) -> httpx.Client:
        if self.offline:
            raise OfflineError(
                f"DRAGOMAN_OFFLINE is set, so {url} is not fetched;"
                " install from a file instead: dragoman models install --from PATH"
            )
        return httpx.Client(timeout=self._timeout, headers=self._headers, follow_redirects=True)

    def get_bytes(self, url: str, *, what: str) -> bytes:
        with self._client(url) as client:
            try:
                response = client.get(url)
            except httpx.HTTPError as exc:
                raise PackageError(f"cannot fetch {what} from {url}: {_reason(exc)}") from None
        if response.status_code != 200:
            raise PackageError(f"cannot fetch {what} from {url}: HTTP {response.status_code}")
        return response.content

    def head_size(self, links: Sequence[str]) -> int | None:
        """The size the first answering link announces, or ``None``."""
        for url in links:
            try:
                with self._client(url) as client:
                    response = client.head(url)
            except httpx.HTTPError:
                continue
            length = response.headers.get("content-length")
            if response.status_code == 200 and length and length.isdigit():
                return int(length)
        return None

    def download(
        self, links: Sequence[str], partial: Path, *, size: int | None, progress: Progress
    ) -> str:
        """Completes ``partial`` from the first link that serves it, resuming from the bytes
        it holds; returns that link. ``PackageError`` saying why each link failed."""
        failures = []
        for url in links:
            for attempt in range(self._attempts):
                try:
                    self._fetch(url, partial, size, progress)
                    return url
                except _NextLink as exc:
                    failures.append(f"{url}: {exc}")
                    break
                except _Retry as exc:
                    log.warning("download of %s: %s (attempt %d)", url, exc, attempt + 1)
                    if attempt + 1 == self._attempts:
                        failures.append(f"{url}: {exc}")
                    else:
                        time.sleep(self._backoff_s * 2**attempt)
        raise PackageError("download failed: " + "; ".join(failures))

    def _fetch(self, url: str, partial: Path, size: int | None, progress: Progress) -> None:
        have = partial.stat().st_size if partial.exists() else 0
        if size is not None and have > size:
            partial.unlink()
            have = 0
        if size is not None and have == size:
            return
        headers = {"Range": f"bytes={have}-"} if have else {}
        with self._client(url) as client:
            try:
                with client.stream("GET", url, headers=headers) as response:
                    have = self._start(response, partial, have)
                    total = _total(response, have)
                    with partial.open("ab") as out:
                        for chunk in response.iter_bytes(_CHUNK):
                            out.write(chunk)
                            have += len(chunk)
                            progress(have, total or size)
            except httpx.HTTPError as exc:
                raise _Retry(_reason(exc)) from None
            except OSError as exc:
                if exc.errno == errno.ENOSPC:
                    partial.unlink(missing_ok=True)  # give the room back
                    raise NoSpace(f"no space left on the device while downloading {url}") from None
                raise
        if total is not None and have < total:
            raise _Retry(f"connection closed after {have} of {total} bytes")

    @staticmethod
    def _start(response: httpx.Response, partial: Path, have: int) -> int:
        """Where the body starts; a server that ignores ``Range`` sends it all again."""
        status = response.status_code
        if status == 206:
            start = response.headers.get("content-range", "").removeprefix("bytes ").split("-")[0]
            if start == str(have):
                return have
            raise _NextLink(f"answered a range from byte {start or '?'}, not {have}")
        if status == 200:
            partial.write_bytes(b"")
            return 0
        if status == 416:
            partial.unlink(missing_ok=True)  # what is kept is not a prefix of this file
            raise _Retry("kept bytes do not match the file (HTTP 416); starting again")
        if status >= 500 or status == 429:
            raise _Retry(f"HTTP {status}")
        raise _NextLink(f"HTTP {status}")


def _total(response: httpx.Response, have: int) -> int | None:
    length = response.headers.get("content-length")
    return have + int(length) if length and length.isdigit() else None


def _reason(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "no data in time (the connection stalled)"
    return str(exc) or type(exc).__name__
