"""The v1 API's bodies of jobs: a job's status, a page of jobs, a job's result."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from dragoman.api.v1.schemas import ErrorBody
from dragoman.models import Job, JobStatus, Origin, Pool, Priority, utcnow


class TargetOut(BaseModel):
    target_lang: str
    status: JobStatus
    segments_total: int
    segments_done: int


class JobOut(BaseModel):
    id: str
    status: JobStatus
    pool: Pool
    priority: Priority
    source_lang: str
    target_lang: str = Field(description="Its target language; with several, the first")
    target_langs: list[str] = Field(description="Every target language, target_lang first")
    targets: list[TargetOut] = Field(
        description="Where each target language stands (one entry for a job of one target)"
    )
    documents: int
    segments_total: int
    segments_done: int
    attempts: int
    created_at: datetime
    submitted_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    error: ErrorBody | None
    review_below: float | None = Field(description="The job's threshold; null: none")
    segments_to_review: int | None = Field(
        description="Translated segments whose confidence is below review_below, so far; "
        "null without a threshold"
    )
    deadline: datetime | None = Field(description="As submitted, in UTC; null: none")
    eta_seconds: int | None = Field(
        description="Seconds until it should end, predicted from its pool's measured speed "
        "and the work queued ahead of it; null once it ended, or while nothing is measured"
    )
    at_risk: bool = Field(
        description="true while it has not ended and will miss its deadline: the deadline "
        "passed, or the job should end after it"
    )

    @classmethod
    def of(cls, job: Job, *, now: datetime | None = None) -> JobOut:
        """``job`` as the API shows it; its ETA counted from ``now`` (the clock's time)."""
        now = now or utcnow()
        eta = job.eta_s(now)
        return cls(
            id=job.id,
            status=job.status,
            pool=job.pool,
            priority=job.options.priority,
            source_lang=job.source_lang,
            target_lang=job.target_lang,
            target_langs=list(job.target_langs),
            targets=_targets(job),
            documents=job.documents,
            segments_total=job.segments_total,
            segments_done=job.segments_done,
            attempts=job.attempts,
            created_at=job.created_at,
            submitted_at=job.submitted_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
            error=ErrorBody(code=job.error.code, message=job.error.message) if job.error else None,
            review_below=job.options.review_below,
            segments_to_review=None if job.options.review_below is None else job.segments_to_review,
            deadline=job.options.deadline,
            eta_seconds=None if eta is None else math.ceil(eta),
            at_risk=job.at_risk(now),
        )


def _targets(job: Job) -> list[TargetOut]:
    """Each target's progress: its shards' (read with the job), or the job's own."""
    if job.by_target:
        return [
            TargetOut(
                target_lang=t.target_lang,
                status=t.status,
                segments_total=t.segments_total,
                segments_done=t.segments_done,
            )
            for t in job.by_target
        ]
    share = job.segments_per_target
    done = job.segments_done // len(job.target_langs)
    return [
        TargetOut(target_lang=t, status=job.status, segments_total=share, segments_done=done)
        for t in job.target_langs
    ]


class JobList(BaseModel):
    jobs: list[JobOut]
    next_cursor: str | None


class DocumentResult(BaseModel):
    name: str
    source_lang: str = Field(description="The job's source, or the detected one with 'auto'")
    target_lang: str = Field(description="The language of its segments")
    segments: list[str | None]
    origins: list[Origin | None] = Field(
        description="Where each translation came from: mt, cache or tm (null: not yet)"
    )
    engines: list[str | None] = Field(
        description="The engine that made each translation (null: a memory match, or not yet)"
    )
    models: list[str | None] = Field(
        description="Its model: the installed package's version (as /v1/models lists it), "
        "else the engine's version of the pair (null: a memory match, or not yet)"
    )
    glossary_terms: list[bool | None] = Field(
        description="Whether the job's glossary had terms in each segment (null: not yet)"
    )
    confidences: list[Annotated[float, Field(ge=0, le=1)] | None] = Field(
        description="The model's confidence in each translation: the mean probability of "
        "its tokens, 0 to 1 (null: an engine that gives none, a memory match, or not yet)"
    )
    review: list[int] | None = Field(
        description="The indexes in segments of the translations below the job's "
        "review_below, in order (null: the job has no threshold)"
    )


class JobResult(BaseModel):
    id: str
    status: JobStatus
    documents: list[DocumentResult]
