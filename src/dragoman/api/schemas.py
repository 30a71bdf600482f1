"""Request and response bodies of the v1 API."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from dragoman.models import Job, JobStatus, Pool, Priority


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentIn(_Strict):
    name: str = Field(min_length=1, max_length=1024, examples=["a.txt"])
    segments: list[str] = Field(examples=[["Hello.", "How are you?"]])


class JobIn(_Strict):
    source_lang: str = Field(examples=["en"])
    target_lang: str = Field(examples=["es"])
    documents: list[DocumentIn] = Field(min_length=1)
    priority: Priority = Priority.NORMAL
    engine: str | None = Field(None, description="Engine to use; the pair's default if absent")


class TranslateIn(_Strict):
    source_lang: str = Field(examples=["en"])
    target_lang: str = Field(examples=["es"])
    segments: list[str] = Field(min_length=1, examples=[["Hello world."]])
    engine: str | None = None


class TranslateOut(BaseModel):
    translations: list[str]


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorOut(BaseModel):
    error: ErrorBody


class JobOut(BaseModel):
    id: str
    status: JobStatus
    pool: Pool
    priority: Priority
    source_lang: str
    target_lang: str
    documents: int
    segments_total: int
    segments_done: int
    attempts: int
    created_at: datetime
    submitted_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    error: ErrorBody | None

    @classmethod
    def of(cls, job: Job) -> JobOut:
        return cls(
            id=job.id,
            status=job.status,
            pool=job.pool,
            priority=job.priority,
            source_lang=job.source_lang,
            target_lang=job.target_lang,
            documents=job.documents,
            segments_total=job.segments_total,
            segments_done=job.segments_done,
            attempts=job.attempts,
            created_at=job.created_at,
            submitted_at=job.submitted_at,
            started_at=job.started_at,
            finished_at=job.finished_at,
            error=ErrorBody(code=job.error.code, message=job.error.message) if job.error else None,
        )


class JobList(BaseModel):
    jobs: list[JobOut]
    next_cursor: str | None


class DocumentResult(BaseModel):
    name: str
    segments: list[str | None]


class JobResult(BaseModel):
    id: str
    status: JobStatus
    documents: list[DocumentResult]


class PairOut(BaseModel):
    source: str
    target: str
    engines: list[str]


class LanguagesOut(BaseModel):
    pairs: list[PairOut]
