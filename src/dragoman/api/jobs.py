"""``/v1/jobs``: submit, follow, list, fetch results, cancel."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from dragoman.api.deps import Service, Tenant
from dragoman.api.schemas import (
    DocumentResult,
    ErrorOut,
    JobIn,
    JobList,
    JobOut,
    JobResult,
)
from dragoman.engines import Pair
from dragoman.errors import InvalidRequest
from dragoman.languages import canonical
from dragoman.models import Document, JobStatus

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

_ERRORS: dict[int | str, dict[str, object]] = {
    code: {"model": ErrorOut} for code in (401, 404, 409, 413, 422, 503)
}


@router.post("", status_code=202, response_model=JobOut, responses=_ERRORS)
async def submit_job(body: JobIn, response: Response, service: Service, tenant: Tenant) -> JobOut:
    """Accepts a job; translation happens in the background."""
    job = await service.manager.submit(
        tenant=tenant,
        pair=Pair(canonical(body.source_lang), canonical(body.target_lang)),
        documents=[Document(doc.name, doc.segments) for doc in body.documents],
        priority=body.priority,
        engine=body.engine,
    )
    response.headers["Location"] = f"/v1/jobs/{job.id}"
    return JobOut.of(job)


@router.get("", response_model=JobList, responses=_ERRORS)
async def list_jobs(
    service: Service,
    tenant: Tenant,
    status: JobStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: str | None = None,
) -> JobList:
    """The caller's jobs, newest first, a page at a time."""
    if cursor is not None and not cursor.isdigit():
        raise InvalidRequest("cursor must be a value returned as next_cursor")
    jobs, next_cursor = await service.store.list_jobs(
        tenant=tenant, status=status, limit=limit, cursor=cursor
    )
    return JobList(jobs=[JobOut.of(job) for job in jobs], next_cursor=next_cursor)


@router.get("/{job_id}", response_model=JobOut, responses=_ERRORS)
async def get_job(job_id: str, service: Service, tenant: Tenant) -> JobOut:
    return JobOut.of(await service.manager.get(job_id, tenant))


@router.get("/{job_id}/result", response_model=JobResult, responses=_ERRORS)
async def get_result(job_id: str, service: Service, tenant: Tenant) -> JobResult:
    """Translations so far: ``null`` marks a segment not translated yet."""
    job = await service.manager.get(job_id, tenant)
    documents = await service.store.results(job.id)
    return JobResult(
        id=job.id,
        status=job.status,
        documents=[DocumentResult(name=name, segments=segs) for name, segs in documents],
    )


@router.delete("/{job_id}", response_model=JobOut, responses=_ERRORS)
async def cancel_job(job_id: str, service: Service, tenant: Tenant) -> JobOut:
    """Cancels a queued, submitted or running job; 409 once it has finished."""
    return JobOut.of(await service.manager.cancel(job_id, tenant))
