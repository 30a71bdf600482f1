"""Server-Sent Events read from a stream of lines (the client's side of
``GET /v1/jobs/{id}/events``): each event as its ``event`` name, ``id`` and ``data``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerEvent:
    event: str
    id: str | None
    data: str


def server_events(lines: Iterable[str]) -> Iterator[ServerEvent]:
    """The events of ``lines`` as the SSE format defines them: fields up to a blank line,
    ``data`` lines joined with newlines, comments (``:``) skipped."""
    event, event_id, data = "message", None, list[str]()
    for line in lines:
        if not line:
            if data:
                yield ServerEvent(event, event_id, "\n".join(data))
            event, data = "message", []
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
        elif name == "id":
            event_id = value
