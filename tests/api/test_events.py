"""``GET /v1/jobs/{id}/events``: a job's status, progress and segments as Server-Sent
Events, resumable with ``Last-Event-ID``; in process with the real Apertium engine."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from dragoman.errors import InvalidRequest
from dragoman.jobs.events import Cursor
from dragoman.models import JobStatus
from tests.api.helpers import assert_error, finished

BODY = {
    "source_lang": "en",
    "target_lang": "es",
    "documents": [
        {"name": "a.txt", "segments": ["Hello world.", "The cat sleeps.", "Good morning."]},
        {"name": "b.txt", "segments": ["Where is the station?", ""]},
    ],
}


def parsed(text: str) -> list[dict[str, Any]]:
    """The events of a stream: each with its id, event and JSON data (comments skipped)."""
    events = []
    for block in text.split("\n\n"):
        fields: dict[str, Any] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            if name in ("id", "event", "data"):
                fields[name] = json.loads(value) if name == "data" else value
        if "event" in fields:
            events.append(fields)
    return events


async def events_of(client: httpx.AsyncClient, job_id: str, **headers: str) -> list[Any]:
    response = await client.get(f"/v1/jobs/{job_id}/events", headers=headers, timeout=60)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return parsed(response.text)


def segments_told(events: list[dict[str, Any]]) -> dict[tuple[int, int], str]:
    told: dict[tuple[int, int], str] = {}
    for event in events:
        if event["event"] == "segments":
            for segment in event["data"]["segments"]:
                key = (event["data"]["document"], segment["index"])
                assert key not in told, f"segment {key} told twice"
                told[key] = segment["text"]
    return told


async def test_a_job_streams_its_segments_progress_and_last_status_then_ends(
    client: httpx.AsyncClient,
) -> None:
    job_id = (await client.post("/v1/jobs", json=BODY)).json()["id"]
    events = await events_of(client, job_id)
    assert events[-1]["event"] == "status" and events[-1]["data"]["status"] == "succeeded"
    assert events[-1]["data"]["id"] == job_id  # a status event is the Job
    result = (await client.get(f"/v1/jobs/{job_id}/result")).json()
    expected = {
        (d, i): text
        for d, doc in enumerate(result["documents"])
        for i, text in enumerate(doc["segments"])
    }
    assert segments_told(events) == expected
    progress = [e["data"] for e in events if e["event"] == "progress"]
    assert progress[-1] == {"segments_done": 5, "segments_total": 5}
    assert [e["data"]["segments_done"] for e in events if e["event"] == "progress"] == sorted(
        p["segments_done"] for p in progress
    )
    # Every event has an id a reconnect can give back, and the last status comes last.
    assert all(Cursor.parse(e["id"]) for e in events)
    last_segments = max(i for i, e in enumerate(events) if e["event"] == "segments")
    assert last_segments < len(events) - 1


async def test_a_reconnect_with_last_event_id_resumes_after_that_event(
    client: httpx.AsyncClient,
) -> None:
    job_id = (await client.post("/v1/jobs", json=BODY)).json()["id"]
    await finished(client, job_id)
    events = await events_of(client, job_id)
    first = next(e for e in events if e["event"] == "segments")
    rest = await events_of(client, job_id, **{"Last-Event-ID": first["id"]})
    assert not set(segments_told([first])) & set(segments_told(rest))
    assert {**segments_told([first]), **segments_told(rest)} == segments_told(events)
    assert rest[-1]["event"] == "status" and rest[-1]["data"]["status"] == "succeeded"
    # After the last event, nothing is left but nothing is lost: the stream just ends.
    assert await events_of(client, job_id, **{"Last-Event-ID": events[-1]["id"]}) == []


@pytest.mark.parametrize("last", ["", "nonsense", "running/x/0-3", "paused/0/", "done/1/2-"])
async def test_a_last_event_id_this_server_did_not_write_starts_the_stream_over(
    client: httpx.AsyncClient, last: str
) -> None:
    job_id = (await client.post("/v1/jobs", json=BODY)).json()["id"]
    await finished(client, job_id)
    assert segments_told(await events_of(client, job_id, **{"Last-Event-ID": last})) == (
        segments_told(await events_of(client, job_id))
    )
    with pytest.raises(InvalidRequest):
        Cursor.parse(last)


async def test_an_unknown_job_has_no_events(client: httpx.AsyncClient) -> None:
    assert_error(await client.get("/v1/jobs/nope/events"), 404, "not_found")


def test_a_cursor_keeps_what_was_sent_as_few_ranges() -> None:
    cursor = Cursor(JobStatus.RUNNING, 7)
    cursor.add([0, 1, 2, 5, 6, 3, 10])
    assert str(cursor) == "running/7/0-3,5-6,10"
    again = Cursor.parse(str(cursor))
    assert str(again) == str(cursor)
    assert [p for p in range(12) if again.sent(p)] == [0, 1, 2, 3, 5, 6, 10]
    again.add([4])
    assert str(again) == "running/7/0-6,10"
    assert str(Cursor()) == "none/0/" and Cursor.parse("none/0/").status is None
    # A range is kept as a range, however long, and a reversed one is nothing.
    huge = Cursor.parse("running/0/0-99999999999999,5-3")
    assert str(huge) == "running/0/0-99999999999999"
