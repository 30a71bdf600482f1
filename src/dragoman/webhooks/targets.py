"""Where a notification may be sent: an http(s) URL whose host resolves to public addresses
only, unless private targets are allowed (``DRAGOMAN_WEBHOOK_ALLOW_PRIVATE``).

A callback URL is a request the server makes on a caller's behalf; without this check any
tenant could reach the loopback interface, the cluster's private network or a cloud's
metadata address through it. It is checked when a job is submitted and again before each
attempt, since a name may resolve elsewhere later; each attempt then connects to the address
it checked (``Pinned``), so the name cannot resolve elsewhere between the check and the
connection (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

from dragoman.errors import InvalidRequest

MAX_URL_CHARS = 2048


class UnresolvedTarget(InvalidRequest):
    """The host does not resolve (now): refused at submit, retried later by the notifier."""


def _refused(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


@dataclass(frozen=True, slots=True)
class Pinned:
    """How to send to a checked target: the URL with the checked address in place of the
    host name, the ``Host`` header and the TLS server name that keep the name's meaning."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    extensions: dict[str, str] = field(default_factory=dict)


def pin(url: str, address: str | None) -> Pinned:
    """``url`` to be reached at ``address`` (``None``: as it is, resolved by the client)."""
    parts = urlsplit(url)
    if address is None or parts.hostname is None:
        return Pinned(url)
    ip = ipaddress.ip_address(address)
    literal = f"[{ip}]" if ip.version == 6 else str(ip)
    netloc = literal if parts.port is None else f"{literal}:{parts.port}"
    pinned = SplitResult(parts.scheme, netloc, parts.path, parts.query, parts.fragment)
    host = parts.netloc.rpartition("@")[2]  # the name (and port) as the caller wrote it
    extensions = {"sni_hostname": parts.hostname} if parts.scheme == "https" else {}
    return Pinned(pinned.geturl(), {"host": host}, extensions)


async def check_target(url: str, *, allow_private: bool) -> Pinned:
    """Raises ``InvalidRequest`` (a 422) unless ``url`` may receive notifications; else how
    to reach the address that was checked."""
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
        return Pinned(url)
    host = parts.hostname
    try:
        infos = await asyncio.to_thread(
            socket.getaddrinfo, host, port or 443, type=socket.SOCK_STREAM
        )
    except (socket.gaierror, UnicodeError):
        raise UnresolvedTarget(f"callback_url: the host {host!r} does not resolve") from None
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    for address in addresses:
        if _refused(address):
            raise InvalidRequest(
                f"callback_url: {host} resolves to {address}, a loopback, private or reserved "
                "address; set DRAGOMAN_WEBHOOK_ALLOW_PRIVATE=true to allow such targets"
            )
    return pin(url, str(addresses[0]))
