"""The client's reading of Server-Sent Events, as the format defines it."""

from __future__ import annotations

from dragoman.client.sse import ServerEvent, server_events


def test_events_are_read_field_by_field_up_to_a_blank_line() -> None:
    lines = [
        "retry: 2000",
        "",
        ": keep-alive",
        "",
        "id: running/0/",
        "event: status",
        'data: {"status": "running"}',
        "",
        "data: one",
        "data:two",
        "",
        "id: x",
        "event: progress",
    ]
    assert list(server_events(lines)) == [
        ServerEvent("status", "running/0/", '{"status": "running"}'),
        ServerEvent("message", "running/0/", "one\ntwo"),
    ]
