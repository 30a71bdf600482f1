"""``/v1/jobs``: submit, follow, list, fetch results, cancel."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, ValidationError

from dragoman.api.deps import ApiParts, Service, Tenant
from dragoman.api.downloads import attachment
from dragoman.api.errors import error_responses
from dragoman.api.responses import written
from dragoman.api.v1.files import submit_files
from dragoman.api.v1.job_out import DocumentResult, JobList, JobOut, JobResult
from dragoman.api.v1.schemas import JobIn, target_query
from dragoman.formats.tmx import MEDIA_TYPE as TMX_MEDIA_TYPE
from dragoman.jobs import CURSOR_PATTERN
from dragoman.jobs.events import ID_PATTERN, KINDS, Cursor, Event, follow
from dragoman.models import Document, Job, JobStatus, Translated, to_review

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])
MAX_WAIT_S = 60

_SUBMITTED: dict[int | str, dict[str, object]] = {
    202: {
        "description": "The job, queued",
        "headers": {
            "Location": {
                "description": "The job's URL, /v1/jobs/{id}",
                "required": True,
                "schema": {"type": "string"},
            }
        },
    }
}


_BODIES = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/JobIn"}},
            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/FilesJobIn"}},
        },
    }
}


# What a valid body can still be refused for: what the schema cannot know (the tenant's
# glossaries and memories, this server's notifications, whether a file's bytes are its
# format).
_REFUSED = {
    400: "A form field is not valid in its charset (bad_encoding), or with source_lang "
    "'auto' a document was detected in a language that no installed pair translates into "
    "the target (detected_language_unsupported)",
    404: "A glossary or memory the job names is not one of the tenant's (not_found)",
    409: "callback_url while this server sends no notifications (no DRAGOMAN_WEBHOOK_SECRET)",
    413: "The body, a file, the number of files, a segment or the number of segments is "
    "over its limit (payload_too_large; see /v1/limits)",
    415: "A file's extension (or the 'format' field) is not a supported format "
    "(unsupported_format)",
    422: "The request breaks the schema or a rule of the server (invalid_request, "
    "unsupported_language_pair, invalid_segment), or a file's bytes are not its format "
    "(invalid_file)",
}


@router.post(
    "",
    status_code=202,
    response_model=JobOut,
    responses={
        **_SUBMITTED,
        **error_responses(400, 401, 404, 409, 413, 415, 422, 429, 503, when=_REFUSED),
    },
    openapi_extra=_BODIES,
)
async def submit_job(request: Request, service: Service, tenant: Tenant) -> Response:
    """Accepts a job of segments (JSON) or of files (multipart); translation happens in the
    background."""
    content_type = request.headers.get("content-type", "")
    # Set by the Idempotency-Key middleware: the job keeps it, so a retry finds it.
    key: str | None = request.scope.get("state", {}).get("idempotency_key")
    if content_type.startswith(("multipart/form-data", "application/x-www-form-urlencoded")):
        job = await submit_files(request, service, tenant, idempotency_key=key)
    else:
        body = await _job_in(request)
        documents = [Document(doc.name, doc.segments) for doc in body.documents]
        options = replace(body.options(), idempotency_key=key)
        job = await service.manager.submit(tenant, body.pair(), documents, options, body.targets())
    return written(_out(job, service), status_code=202, headers={"Location": f"/v1/jobs/{job.id}"})


def _out(job: Job, service: ApiParts) -> JobOut:
    return JobOut.of(job, now=service.manager.now())


async def _job_in(request: Request) -> JobIn:
    try:
        return JobIn.model_validate_json(await request.body())
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        raise RequestValidationError(errors) from None


@router.get("", response_model=JobList, responses=error_responses(401, 422, 503))
async def list_jobs(
    service: Service,
    tenant: Tenant,
    status: JobStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[
        str | None,
        Query(
            description="A next_cursor from an earlier page, as is",
            json_schema_extra={"pattern": CURSOR_PATTERN},
        ),
    ] = None,
) -> JobList:
    """The caller's jobs, newest first, a page at a time."""
    jobs, next_cursor = await service.manager.list_jobs(
        tenant, status=status, limit=limit, cursor=cursor
    )
    now = service.manager.now()
    return JobList(jobs=[JobOut.of(job, now=now) for job in jobs], next_cursor=next_cursor)


@router.get("/{job_id}", response_model=JobOut, responses=error_responses(401, 404, 422, 503))
async def get_job(
    job_id: str,
    service: Service,
    tenant: Tenant,
    wait: Annotated[
        float,
        Query(
            ge=0,
            le=MAX_WAIT_S,
            description="Seconds to wait for the status or progress to change (a long "
            "poll); a finished job is answered at once. 0: answer now",
        ),
    ] = 0,
) -> Response:
    if wait:
        return written(_out(await service.manager.get_moved(job_id, tenant, wait), service))
    return written(_out(await service.manager.get(job_id, tenant), service))


# One event of the stream (OpenAPI 3.1: the schema of an event stream is each event's).
_EVENT = {
    "type": "object",
    "required": ["event", "id", "data"],
    "properties": {
        "event": {"type": "string", "enum": list(KINDS)},
        "id": {"type": "string", "pattern": ID_PATTERN},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "description": "status: the Job; progress: segments_done and segments_total "
            "(and targets, as in the Job, for several target languages); segments: "
            "document, name, target_lang and the segments committed (index, text, origin)",
        },
    },
}


@router.get(
    "/{job_id}/events",
    responses={
        200: {
            "description": "Server-Sent Events: status, progress and segments, until the "
            "job's last status",
            "content": {"text/event-stream": {"schema": _EVENT}},
        },
        **error_responses(401, 404, 422, 503),
    },
    response_class=StreamingResponse,
    openapi_extra={
        "parameters": [
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "description": "The id of the last event received: the stream resumes "
                "after it (an id this server did not write: from the start)",
                "schema": {"type": "string"},
            }
        ]
    },
)
async def job_events(
    job_id: str,
    service: Service,
    tenant: Tenant,
    request: Request,
) -> StreamingResponse:
    """The job's events as they happen (see docs/api.md, Events)."""
    await service.manager.get(job_id, tenant)  # 404 before the stream starts
    cursor = Cursor.resumed(request.headers.get("last-event-id"))
    max_s = service.settings.events_max_s
    stream = follow(service.manager, job_id, tenant, cursor=cursor, max_s=max_s)
    return StreamingResponse(
        _server_sent(stream),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _server_sent(events: AsyncIterator[Event | None]) -> AsyncIterator[bytes]:
    yield b"retry: 2000\n\n"
    async for event in events:
        if event is None:
            yield b": keep-alive\n\n"
            continue
        if event.job is not None:
            job = JobOut.of(event.job)
            data = job.__pydantic_serializer__.to_json(job, by_alias=True)
        else:
            data = json.dumps(event.data, ensure_ascii=False, separators=(",", ":")).encode()
        yield b"id: %s\nevent: %s\ndata: %s\n\n" % (event.id.encode(), event.kind.encode(), data)


# ``?target=``: one target language of a job into several.
Target = Annotated[
    str | None,
    target_query(
        "One of the job's target_langs: its translations only; absent: every target's, "
        "target after target"
    ),
]


@router.get(
    "/{job_id}/result", response_model=JobResult, responses=error_responses(401, 404, 422, 503)
)
async def get_result(
    job_id: str, service: Service, tenant: Tenant, target: Target = None
) -> Response:
    """Translations so far: ``null`` marks a segment not translated yet. A job into several
    languages has each document once per target language."""
    job, documents = await service.manager.result(job_id, tenant, target=target)
    result = JobResult(
        id=job.id,
        status=job.status,
        documents=[_document_result(job, doc) for doc in documents],
    )
    return written(result)


def _document_result(job: Job, doc: Translated) -> DocumentResult:
    threshold = job.options.review_below
    review = None
    if threshold is not None:
        review = [i for i, c in enumerate(doc.confidences) if to_review(c, threshold)]
    return DocumentResult(
        name=doc.name,
        source_lang=doc.source_lang or job.source_lang,
        target_lang=doc.target_lang or job.target_lang,
        segments=doc.targets,
        origins=doc.origins,
        engines=doc.engines,
        models=doc.models,
        glossary_terms=doc.terms,
        confidences=doc.confidences,
        review=review,
    )


@router.get(
    "/{job_id}/tmx",
    response_class=Response,
    responses={
        200: {
            "description": "TMX 1.4: one unit per translated segment (and target language)",
            "content": {TMX_MEDIA_TYPE: {"schema": {"type": "string"}}},
        },
        **error_responses(401, 404, 422, 503),
    },
)
async def get_tmx(job_id: str, service: Service, tenant: Tenant, target: Target = None) -> Response:
    """The job's translations so far as TMX 1.4, to review and import as a memory."""
    job, content = await service.manager.tmx(job_id, tenant, target)
    return attachment(content, TMX_MEDIA_TYPE, f"{job.id}.tmx")


class DocumentSources(BaseModel):
    name: str
    format: str | None = Field(description="The file's format; null for a JSON document")
    segments: list[str]


class JobSources(BaseModel):
    id: str
    documents: list[DocumentSources]


@router.get(
    "/{job_id}/sources", response_model=JobSources, responses=error_responses(401, 404, 503)
)
async def get_sources(job_id: str, service: Service, tenant: Tenant) -> JobSources:
    """Each document's source segments, in the order of ``/result``'s translations (for a
    file, its sentences, inline codes written ``<g1>``…``</g1>`` as in its translations)."""
    job = await service.manager.get(job_id, tenant)
    # Every target has the same sources: the first one's.
    _, documents = await service.manager.result(
        job_id, tenant, sources=True, target=job.target_lang
    )
    return JobSources(
        id=job.id,
        documents=[
            DocumentSources(name=doc.name, format=doc.format, segments=doc.sources or [])
            for doc in documents
        ],
    )


@router.delete("/{job_id}", response_model=JobOut, responses=error_responses(401, 404, 409, 503))
async def cancel_job(job_id: str, service: Service, tenant: Tenant) -> Response:
    """Cancels a queued, submitted or running job; 409 once it has finished."""
    return written(_out(await service.manager.cancel(job_id, tenant), service))
