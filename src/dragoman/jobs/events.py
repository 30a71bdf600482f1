"""A job's events (``GET /v1/jobs/{id}/events``): its status, its progress and each
document's segments as they are committed, derived from the store, so that every API
process tells the same story whichever worker did the work.

An event's id is where the stream stands after it: the status, the segments done and the
positions already sent, as ranges (``running/12/0-7,10-13``). A client that reconnects
with ``Last-Event-ID`` gets what came after, from any process: segments not yet sent, then
the progress and the status if they changed. Positions come in order within a document
and chunks in order within a shard, so the ranges stay few.

Each change reads only what the stream has not told (``JobStore.translated_since``: the
translated segments outside the ranges sent, an index range after the first): a listener
of a 50,000-segment job reads a chunk's new segments, not the whole job again.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dragoman.errors import InvalidRequest
from dragoman.models import Job, JobStatus
from dragoman.store.results import NewSegment

if TYPE_CHECKING:
    from dragoman.jobs import BatchRequestsManager

KEEPALIVE_S = 15.0
KINDS = ("status", "progress", "segments")
_NONE = "none"  # no status told yet
ID_PATTERN = rf"^({'|'.join([_NONE, *JobStatus])})/(\d+)/((?:\d+(?:-\d+)?)(?:,\d+(?:-\d+)?)*)?$"
_ID = re.compile(ID_PATTERN)


@dataclass(frozen=True, slots=True)
class Event:
    """One server-sent event: ``kind`` is its ``event:`` field, ``data`` its JSON."""

    kind: str
    id: str
    data: dict[str, Any]
    job: Job | None = None  # a status event's: the API writes it as the Job


@dataclass(slots=True)
class Cursor:
    """Where a stream stands: the status and progress told, the positions sent."""

    status: JobStatus | None = None
    done: int = -1
    ranges: list[list[int]] = field(default_factory=list)  # sorted, disjoint [first, last]
    # What this stream last told of each target (not in the id: a reconnect tells it again).
    targets: tuple[tuple[str, str, int], ...] = ()

    @classmethod
    def parse(cls, text: str) -> Cursor:
        """A ``Last-Event-ID``; ``InvalidRequest`` for one this server did not write."""
        found = _ID.match(text.strip())
        status = found.group(1) if found else ""
        if not found:
            raise InvalidRequest(f"Last-Event-ID {text[:80]!r} is not an id of this job's events")
        cursor = cls(None if status == _NONE else JobStatus(status), int(found.group(2)))
        for part in filter(None, (found.group(3) or "").split(",")):
            first, _, last = part.partition("-")
            cursor.add_span(int(first), int(last or first))
        return cursor

    @classmethod
    def resumed(cls, last_event_id: str | None) -> Cursor:
        """Where a stream that last got ``last_event_id`` stands; from the start without
        one, or with one this server did not write (the client then gets the whole story
        again: nothing is lost)."""
        try:
            return cls.parse(last_event_id) if last_event_id is not None else cls()
        except InvalidRequest:
            return cls()

    def __str__(self) -> str:
        spans = (f"{a}" if a == b else f"{a}-{b}" for a, b in self.ranges)
        return f"{self.status or _NONE}/{max(self.done, 0)}/{','.join(spans)}"

    def sent(self, position: int) -> bool:
        at = bisect.bisect_right(self.ranges, [position, float("inf")]) - 1
        return at >= 0 and self.ranges[at][0] <= position <= self.ranges[at][1]

    def add(self, positions: Iterable[int]) -> None:
        for position in positions:
            if not self.sent(position):
                self.add_span(position, position)

    def add_span(self, first: int, last: int) -> None:
        """Positions ``first`` to ``last`` sent (none when ``last`` is before ``first``)."""
        if last < first:
            return
        bisect.insort(self.ranges, [first, last])
        merged: list[list[int]] = []
        for span in self.ranges:
            if merged and span[0] <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], span[1])
            else:
                merged.append(span)
        self.ranges = merged


async def follow(
    manager: BatchRequestsManager,
    job_id: str,
    tenant: str | None,
    *,
    cursor: Cursor | None = None,
    keepalive_s: float = KEEPALIVE_S,
    max_s: float = float("inf"),
) -> AsyncIterator[Event | None]:
    """The job's events after ``cursor`` (from the start without one) until its last
    status, or for ``max_s`` at most; ``None`` when nothing happened for ``keepalive_s``
    (the stream sends a comment, so proxies keep it open)."""
    cursor = cursor or Cursor()
    quiet_since = time.monotonic()
    ends_at = quiet_since + max_s
    while True:
        sent = [(first, last) for first, last in cursor.ranges]
        job, shapes, found = await manager.news(job_id, tenant, sent)
        told = False
        for event in _news(cursor, job, shapes, found):
            told = True
            yield event
        if job.status.finished:
            return
        if not told and time.monotonic() - quiet_since >= keepalive_s:
            told = True
            yield None
        if told:
            quiet_since = time.monotonic()
        left = ends_at - time.monotonic()
        if left <= 0:
            return  # the client takes up the stream again after its last event
        await manager.waits.until_moved(job, min(keepalive_s, left))


def _news(
    cursor: Cursor, job: Job, shapes: list[tuple[str, int]], found: list[NewSegment]
) -> Iterable[Event]:
    """What ``cursor`` has not told of ``job`` (``found``: its translated segments not sent
    yet, by position; ``shapes``: its documents' names and sizes): segments first, a
    ``segments`` event per document, then progress, then status, so that the last status
    comes after every segment."""
    per_copy = sum(count for _, count in shapes)
    starts = list(itertools.accumulate((count for _, count in shapes), initial=0))[:-1]
    place = functools.partial(_place, per_copy, starts)
    for (copy, index), group in itertools.groupby(found, key=lambda s: place(s.position)[:2]):
        new = list(group)
        cursor.add(segment.position for segment in new)
        told: dict[str, Any] = {
            "document": index,
            "name": shapes[index][0],
            "target_lang": job.target_langs[copy],
            "segments": [
                {"index": place(s.position)[2], "text": s.text, "origin": s.origin} for s in new
            ],
        }
        yield Event("segments", str(cursor), told)
    targets = tuple((t.target_lang, t.status.value, t.segments_done) for t in job.by_target)
    if job.segments_done != cursor.done or targets != cursor.targets:
        cursor.done, cursor.targets = job.segments_done, targets
        data: dict[str, Any] = {
            "segments_done": job.segments_done,
            "segments_total": job.segments_total,
        }
        if job.by_target:
            data["targets"] = [
                {
                    "target_lang": t.target_lang,
                    "status": t.status.value,
                    "segments_total": t.segments_total,
                    "segments_done": t.segments_done,
                }
                for t in job.by_target
            ]
        yield Event("progress", str(cursor), data)
    if job.status != cursor.status:
        cursor.status = job.status
        yield Event("status", str(cursor), {}, job)


def _place(per_copy: int, starts: list[int], position: int) -> tuple[int, int, int]:
    """A position's target copy, its document within the copy, and its index there."""
    copy, within = divmod(position, per_copy)
    index = bisect.bisect_right(starts, within) - 1
    return copy, index, within - starts[index]
