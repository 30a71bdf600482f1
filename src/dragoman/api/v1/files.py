"""Files in, files out: a multipart ``POST /v1/jobs``, each translated file, the formats."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from starlette.datastructures import FormData, UploadFile

from dragoman.api.deps import Service, Tenant
from dragoman.api.downloads import attachment
from dragoman.api.errors import error_responses
from dragoman.api.multipart import multipart, text_field
from dragoman.api.v1.schemas import (
    CALLBACK_URL,
    DEADLINE,
    GLOSSARY_ID_PATTERN,
    LANGUAGE_PATTERN,
    MAX_CALLBACK_URL,
    MAX_MEMORIES,
    MAX_TARGETS,
    MEMORY_LIST_PATTERN,
    MEMORY_NAME_PATTERN,
    REVIEW_BELOW,
    TARGET_LANGS,
    TARGET_LIST_PATTERN,
    Absent,
    Language,
    Moment,
    SourceLanguage,
    one_of_targets,
    one_target_form,
    some_target,
    source_of,
    target_query,
)
from dragoman.errors import InvalidRequest
from dragoman.formats import FORMATS
from dragoman.jobs.files import Upload
from dragoman.models import Job, JobOptions, Pair, Priority

router = APIRouter(tags=["files"])


def _format_names(schema: dict[str, Any]) -> None:
    # When the description is made, not at import: listing the formats loads them all.
    schema["enum"] = [f.name for f in FORMATS.all()]


def _no_null(schema: dict[str, Any]) -> None:
    """A form field's schema without its null branch: a form has no null."""
    branches = [branch for branch in schema.pop("anyOf", []) if branch.get("type") != "null"]
    schema.update(branches[0] if branches else {})


class FilesForm(BaseModel):
    """The fields of the multipart form of ``POST /v1/jobs``, checked as the JSON body is:
    one definition of each constraint. A form has no null: an empty field is left out."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=one_target_form)

    source_lang: SourceLanguage = Field(examples=["en"])
    target_lang: Language | Absent = Field(None, examples=["es"])
    target_langs: str | Absent = Field(
        None,
        description=f"{TARGET_LANGS}; comma-separated",
        examples=["es,fr,de"],
        json_schema_extra={"pattern": TARGET_LIST_PATTERN},
    )
    priority: Priority = Priority.NORMAL
    engine: Annotated[str, Field(min_length=1)] | Absent = Field(
        None, description="An engine /v1/languages lists for the pair; absent: its default"
    )
    format: str | Absent = Field(
        None,
        description="A name from /v1/formats, for every file (415 for another)",
        json_schema_extra=_format_names,
    )
    segmentation: str = Field(
        "srx",
        description="'srx': split paragraphs into sentences; 'none': one segment per unit",
        json_schema_extra={"enum": ["srx", "none"]},
    )
    callback_url: Annotated[str, Field(max_length=MAX_CALLBACK_URL)] | Absent = Field(
        None, description=CALLBACK_URL
    )
    memories: str | Absent = Field(
        None,
        description=(
            f"Comma-separated names of the tenant's translation memories, at most {MAX_MEMORIES}"
        ),
        examples=["product,legal"],
        json_schema_extra={"pattern": MEMORY_LIST_PATTERN},
    )
    glossary: Annotated[str, Field(pattern=GLOSSARY_ID_PATTERN)] | Absent = Field(
        None, description="The id of one of the tenant's glossaries for this pair"
    )
    cache: str = Field(
        "true",
        description="'false': every segment goes to the engine, and nothing is reused later",
        json_schema_extra={"enum": ["true", "false"]},
    )
    mark_unknown: str = Field(
        "false",
        description="'true': words the engine does not know come back marked ('*word')",
        json_schema_extra={"enum": ["true", "false"]},
    )
    review_below: Annotated[float, Field(ge=0, le=1)] | Absent = Field(
        None, description=REVIEW_BELOW
    )
    # Nullable rather than ``Absent``: one clean error for a bad value, not one per branch.
    deadline: Moment | None = Field(
        None,
        description=DEADLINE,
        examples=["2026-12-01T17:00:00Z"],
        json_schema_extra=_no_null,
    )

    @field_validator("segmentation")
    @classmethod
    def _one_of_two(cls, value: str) -> str:
        if value not in ("srx", "none"):
            raise ValueError("must be 'srx' or 'none'")
        return value

    @field_validator("memories")
    @classmethod
    def _memory_names(cls, value: str | None) -> str | None:
        names = _names(value)
        for name in names:
            if not re.fullmatch(MEMORY_NAME_PATTERN, name):
                raise ValueError(f"{name!r} is not a memory name")
        if len(names) > MAX_MEMORIES:
            raise ValueError(f"at most {MAX_MEMORIES} names")
        return value

    @field_validator("cache", "mark_unknown")
    @classmethod
    def _flag(cls, value: str) -> str:
        if value.lower() not in ("true", "false"):
            raise ValueError("must be 'true' or 'false'")
        return value.lower()

    @field_validator("target_langs")
    @classmethod
    def _target_list(cls, value: str | None) -> str | None:
        codes = _names(value)
        if value is not None and not codes:
            raise ValueError("name at least one language")
        for code in codes:
            if not re.fullmatch(LANGUAGE_PATTERN, code):
                raise ValueError(f"{code!r} is not a language code")
        if len(codes) > MAX_TARGETS:
            raise ValueError(f"at most {MAX_TARGETS} languages")
        return value

    @model_validator(mode="after")
    def _some_target(self) -> FilesForm:
        some_target(self.target_lang, self.target_langs)
        return self

    def targets(self) -> tuple[str, ...]:
        listed = _names(self.target_langs) if self.target_langs is not None else None
        return one_of_targets(self.target_lang, list(listed) if listed is not None else None)

    def pair(self) -> Pair:
        return Pair(source_of(self.source_lang), self.targets()[0])

    def options(self) -> JobOptions:
        return JobOptions(
            priority=self.priority,
            engine=self.engine,
            callback_url=self.callback_url,
            memories=_names(self.memories),
            glossary=self.glossary,
            use_cache=self.cache == "true",
            mark_unknown=self.mark_unknown == "true",
            review_below=self.review_below,
            deadline=self.deadline,
        )


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(name.strip() for name in (value or "").split(",") if name.strip())


class FilesJobIn(FilesForm):
    """The multipart form of ``POST /v1/jobs``: one or more files, one document each (for
    the OpenAPI document: the files are read apart, see ``submit_files``)."""

    files: list[bytes] = Field(
        min_length=1,
        description="Parts named 'files', each with a file name; its extension is its format",
        json_schema_extra={"items": {"type": "string", "format": "binary"}},
    )


_FIELDS = set(FilesJobIn.model_fields)


class FormatOut(BaseModel):
    name: str
    extensions: list[str]
    media_type: str
    max_bytes: int = Field(description="The largest file of this format a job takes (413 above)")


class FormatsOut(BaseModel):
    formats: list[FormatOut]


async def submit_files(
    request: Request, service: Service, tenant: Tenant, *, idempotency_key: str | None = None
) -> Job:
    """The job of a multipart submission; every mistake a 4xx naming the field or file."""
    limit = service.settings.max_files_per_job
    async with multipart(request, fields=_FIELDS, max_files=limit, max_part_size=2**20) as form:
        return await _submit(form, service, tenant, idempotency_key)


async def _submit(
    form: FormData, service: Service, tenant: Tenant, idempotency_key: str | None
) -> Job:
    given = {key: text_field(form, key) for key in _FIELDS - {"files"}}
    try:
        fields = FilesForm.model_validate({key: v for key, v in given.items() if v})
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        raise RequestValidationError(errors) from None
    uploads = [await _upload(part, fields.format, service) for part in form.getlist("files")]
    segmentation = fields.segmentation == "srx"
    options = replace(fields.options(), idempotency_key=idempotency_key)
    return await service.files.submit(
        tenant, fields.pair(), uploads, options, segmentation=segmentation, targets=fields.targets()
    )


async def _upload(part: Any, declared: str | None, service: Service) -> Upload:
    """The part's bytes, at most one past the limit (``FileJobs`` refuses a larger file)."""
    if not isinstance(part, UploadFile) or not part.filename:
        raise InvalidRequest("files: each part must be a file with a file name")
    content = await part.read(service.settings.max_file_bytes + 1)
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in part.filename):
        raise InvalidRequest(f"files: the file name {part.filename!r} has a control character")
    return Upload(part.filename, content, declared)


Partial = Annotated[bool, Query(description="The units translated so far")]


@router.get(
    "/v1/jobs/{job_id}/files/{n}",
    response_class=Response,
    responses={
        200: {
            "description": "The file, translated, in its own format",
            "content": {"application/octet-stream": {"schema": {"type": "string"}}},
            "headers": {
                "Content-Disposition": {
                    "description": 'attachment; filename="<stem>.<target><ext>"',
                    "required": True,
                    "schema": {"type": "string"},
                }
            },
        },
        **error_responses(401, 404, 409, 422, 503),
    },
)
async def get_file(
    job_id: str,
    n: Annotated[int, Path(ge=0, le=2**31 - 1, description="The file's place, from 0")],
    service: Service,
    tenant: Tenant,
    partial: Partial = False,
    target: Annotated[
        str | None, target_query("One of the job's target_langs; required when it has several")
    ] = None,
) -> Response:
    """The n-th uploaded file, translated; 409 ``not_finished`` until the job (or, with
    several targets, that target) succeeded."""
    found = await service.files.download(job_id, n, tenant, partial=partial, target=target)
    return attachment(found.content, found.media_type, found.filename)


@router.get(
    "/v1/jobs/{job_id}/files.zip",
    response_class=Response,
    responses={
        200: {
            "description": "Every file, translated into each target language: "
            "<target>/<stem>.<target><ext>",
            "content": {"application/zip": {"schema": {"type": "string"}}},
        },
        **error_responses(401, 404, 409, 422, 503),
    },
)
async def get_files_zip(
    job_id: str,
    service: Service,
    tenant: Tenant,
    partial: Partial = False,
    target: Annotated[
        str | None,
        target_query("One of the job's target_langs: its files only; absent: every target's"),
    ] = None,
) -> Response:
    """The job's files in one zip, a folder per target language; 409 ``not_finished`` until
    each target in it succeeded."""
    job, content = await service.files.archive(job_id, tenant, partial=partial, target=target)
    return attachment(content, "application/zip", f"{job.id}.zip")


@router.get("/v1/formats", response_model=FormatsOut, responses=error_responses(401))
async def list_formats(service: Service, _: Tenant) -> FormatsOut:
    """The file formats a job takes, by the extensions that name them, and how big."""
    return FormatsOut(
        formats=[
            FormatOut(
                name=f.name,
                extensions=list(f.extensions),
                media_type=f.media_type,
                max_bytes=service.files.limit(f.name)[0],
            )
            for f in FORMATS.all()
        ]
    )
