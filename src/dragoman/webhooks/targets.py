"""Where a notification may be sent: an http(s) URL whose host resolves to public addresses
only, unless private targets are allowed (``DRAGOMAN_WEBHOOK_ALLOW_PRIVATE``).

A callback URL is a request the server makes on a caller's behalf; without this check any
tenant could reach the loopback interface, the cluster's private network or a cloud's
metadata address through it. It is checked when a job is submitted and again before each
attempt, since a name may resolve elsewhere later.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

from dragoman.errors import InvalidRequest

MAX_URL_CHARS = 2048


class UnresolvedTarget(InvalidRequest):
    """The host does not resolve (now): refused at submit, retried later by the notifier."""


def _refused(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


async def check_target(url: str, *, allow_private: bool) -> None:
    """Raises ``InvalidRequest`` (a 422) unless ``url`` may receive notifications."""
    if len(url) > MAX_URL_CHARS:
        raise InvalidRequest(f"callback_url is longer than {MAX_URL_CHARS} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidRequest(f"callback_url is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidRequest("callback_url must be an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        raise InvalidRequest("callback_url must not carry credentials")
    if allow_private:
        return
    host = parts.hostname
    try:
        infos = await asyncio.to_thread(
            socket.getaddrinfo, host, port or 443, type=socket.SOCK_STREAM
        )
    except (socket.gaierror, UnicodeError):
        raise UnresolvedTarget(f"callback_url: the host {host!r} does not resolve") from None
    for *_, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if _refused(address):
            raise InvalidRequest(
                f"callback_url: {host} resolves to {address}, a loopback, private or reserved "
                "address; set DRAGOMAN_WEBHOOK_ALLOW_PRIVATE=true to allow such targets"
            )
