"""What the API answers, as the client reads it: typed views of its JSON bodies (times are
ISO 8601 strings)."""

from __future__ import annotations

from typing import Any, TypedDict


class ErrorBody(TypedDict):
    code: str
    message: str


class TargetView(TypedDict):
    """Where one target language of a job stands."""

    target_lang: str
    status: str
    segments_total: int
    segments_done: int


class JobView(TypedDict):
    """A job as ``GET /v1/jobs/{id}`` shows it. ``target_lang`` is its first target;
    ``target_langs`` every one, ``targets`` each one's progress."""

    id: str
    status: str
    pool: str
    priority: str
    source_lang: str
    target_lang: str
    target_langs: list[str]
    targets: list[TargetView]
    documents: int
    segments_total: int
    segments_done: int
    attempts: int
    created_at: str
    submitted_at: str | None
    started_at: str | None
    finished_at: str | None
    error: ErrorBody | None


class JobPage(TypedDict):
    jobs: list[JobView]
    next_cursor: str | None


class DocumentResult(TypedDict):
    name: str
    source_lang: str
    target_lang: str  # the language of its segments
    segments: list[str | None]  # None: not translated yet
    origins: list[str | None]  # "mt", "cache" or "tm"; None: not translated yet


class JobResult(TypedDict):
    """A job's translations: each document once per target language, target after
    target (only the target asked for, with ``target``)."""

    id: str
    status: str
    documents: list[DocumentResult]


def succeeded(job: JobView, target: str | None = None) -> bool:
    """Whether ``job`` succeeded, or with ``target``, whether its translation into
    ``target`` did: a job into several languages may end failed with some delivered."""
    if target is not None:
        for each in job.get("targets") or []:
            if each["target_lang"] == target:
                return each["status"] == "succeeded"
    return job["status"] == "succeeded"


def with_segments(job: JobView, data: dict[str, Any], told: dict[str, int]) -> JobView:
    """The job with the segments an event told counted in their target's progress. The
    stream tells each translated segment once (it starts with those done before it), so
    the count since it started is that target's ``segments_done``, never below what the
    job said last."""
    target = data.get("target_lang", job["target_lang"])
    told[target] = told.get(target, 0) + len(data["segments"])
    targets = list[TargetView]()
    for shown in job.get("targets", []):
        if shown["target_lang"] == target:
            done = min(shown["segments_total"], max(shown["segments_done"], told[target]))
            shown = {**shown, "segments_done": done}
        targets.append(shown)
    return {**job, "targets": targets}
