"""Read-only routes the web UI needs beyond the core contract: the limits a page checks
before sending, and a job's source texts to show beside its translations."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from dragoman.api.deps import Service, Tenant
from dragoman.api.errors import error_responses

router = APIRouter(prefix="/v1")


class LimitsOut(BaseModel):
    max_segment_chars: int = Field(description="Characters per segment (jobs and sync)")
    sync_max_segments: int = Field(description="Segments per POST /v1/translate")
    max_segments_per_job: int
    max_files_per_job: int
    max_file_bytes: int
    max_request_bytes: int


class DocumentSources(BaseModel):
    name: str
    format: str | None = Field(description="The file's format; null for a JSON document")
    segments: list[str]


class JobSources(BaseModel):
    id: str
    documents: list[DocumentSources]


@router.get("/limits", response_model=LimitsOut, responses=error_responses(401), tags=["translate"])
async def limits(service: Service, _: Tenant) -> LimitsOut:
    """The size limits this server enforces (see the Limits section of the API docs)."""
    settings = service.settings
    return LimitsOut(
        max_segment_chars=settings.max_segment_chars,
        sync_max_segments=settings.sync_max_segments,
        max_segments_per_job=settings.max_segments_per_job,
        max_files_per_job=settings.max_files_per_job,
        max_file_bytes=settings.max_file_bytes,
        max_request_bytes=settings.max_request_bytes,
    )


@router.get(
    "/jobs/{job_id}/sources",
    response_model=JobSources,
    responses=error_responses(401, 404, 503),
    tags=["jobs"],
)
async def sources(job_id: str, service: Service, tenant: Tenant) -> JobSources:
    """Each document's source segments, in the order of ``/result``'s translations (for a
    file, its sentences, inline codes written ``<g1>``…``</g1>`` as in its translations)."""
    job = await service.manager.get(job_id, tenant)
    return JobSources(
        id=job.id,
        documents=[
            DocumentSources(name=doc.name, format=doc.format, segments=doc.sources or [])
            for doc in await service.store.documents(job.id, sources=True)
        ],
    )
