"""Files in, files out: a multipart ``POST /v1/jobs``, each translated file, the formats."""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.datastructures import FormData, UploadFile

from dragoman.api.deps import Service, Tenant
from dragoman.api.errors import error_responses
from dragoman.api.forms import multipart, text_field
from dragoman.api.schemas import (
    CALLBACK_URL,
    GLOSSARY_ID_PATTERN,
    MAX_CALLBACK_URL,
    MAX_MEMORIES,
    MEMORY_LIST_PATTERN,
    MEMORY_NAME_PATTERN,
    Absent,
    Language,
    SourceLanguage,
    form_schema,
    source_of,
)
from dragoman.errors import InvalidRequest, PayloadTooLarge
from dragoman.files import Upload
from dragoman.formats import FORMATS
from dragoman.languages import canonical
from dragoman.models import Job, Pair, Priority

router = APIRouter(tags=["files"])

_FIELDS = {
    "source_lang",
    "target_lang",
    "priority",
    "engine",
    "format",
    "segmentation",
    "callback_url",
    "memories",
    "glossary",
    "cache",
    "files",
}


def _format_names(schema: dict[str, Any]) -> None:
    # When the description is made, not at import: listing the formats loads them all.
    schema["enum"] = [f.name for f in FORMATS.all()]


class FilesJobIn(BaseModel):
    """The multipart form of ``POST /v1/jobs``: one or more files, one document each."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=form_schema)

    source_lang: SourceLanguage = Field(examples=["en"])
    target_lang: Language = Field(examples=["es"])
    files: list[bytes] = Field(
        min_length=1,
        description="Parts named 'files', each with a file name; its extension is its format",
        json_schema_extra={"items": {"type": "string", "format": "binary"}},
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


class FormatOut(BaseModel):
    name: str
    extensions: list[str]
    media_type: str


class FormatsOut(BaseModel):
    formats: list[FormatOut]


async def submit_files(request: Request, service: Service, tenant: Tenant) -> Job:
    """The job of a multipart submission; every mistake a 4xx naming the field or file."""
    limit = service.settings.max_files_per_job
    async with multipart(request, fields=_FIELDS, max_files=limit, max_part_size=2**20) as form:
        return await _submit(form, service, tenant)


async def _submit(form: FormData, service: Service, tenant: Tenant) -> Job:
    fields = {key: text_field(form, key) for key in _FIELDS - {"files"}}
    for required in ("source_lang", "target_lang"):
        if not fields[required]:
            raise InvalidRequest(f"{required}: field required")
    segmentation = fields["segmentation"] or "srx"
    if segmentation not in ("srx", "none"):
        raise InvalidRequest("segmentation: must be 'srx' or 'none'")
    priority = fields["priority"] or Priority.NORMAL.value
    if priority not in {p.value for p in Priority}:
        raise InvalidRequest("priority: must be one of low, normal, high")
    uploads = [await _upload(part, fields["format"], service) for part in form.getlist("files")]
    return await service.files.submit(
        tenant=tenant,
        pair=Pair(source_of(fields["source_lang"] or ""), canonical(fields["target_lang"] or "")),
        uploads=uploads,
        priority=Priority(priority),
        engine=fields["engine"] or None,
        segmentation=segmentation == "srx",
        callback_url=fields["callback_url"] or None,
        memories=_memories(fields["memories"]),
        glossary=_glossary(fields["glossary"]),
        use_cache=_flag("cache", fields["cache"], default=True),
    )


def _memories(value: str | None) -> tuple[str, ...]:
    names = tuple(name.strip() for name in (value or "").split(",") if name.strip())
    for name in names:
        if not re.fullmatch(MEMORY_NAME_PATTERN, name):
            raise InvalidRequest(f"memories: {name!r} is not a memory name")
    if len(names) > MAX_MEMORIES:
        raise InvalidRequest(f"memories: at most {MAX_MEMORIES} names")
    return names


def _glossary(value: str | None) -> str | None:
    if value and not re.fullmatch(GLOSSARY_ID_PATTERN, value):
        raise InvalidRequest(f"glossary: {value!r} is not a glossary id")
    return value or None


def _flag(key: str, value: str | None, *, default: bool) -> bool:
    if not value:
        return default
    if value.lower() not in ("true", "false"):
        raise InvalidRequest(f"{key}: must be 'true' or 'false'")
    return value.lower() == "true"


async def _upload(part: Any, declared: str | None, service: Service) -> Upload:
    if not isinstance(part, UploadFile) or not part.filename:
        raise InvalidRequest("files: each part must be a file with a file name")
    limit = service.settings.max_file_bytes
    content = await part.read(limit + 1)
    if len(content) > limit:
        raise PayloadTooLarge(
            f"{part.filename}: larger than the limit of {limit} bytes per file "
            "(DRAGOMAN_MAX_FILE_BYTES)"
        )
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in part.filename):
        raise InvalidRequest(f"files: the file name {part.filename!r} has a control character")
    return Upload(part.filename, content, declared or None)


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
    partial: Annotated[bool, Query(description="The units translated so far")] = False,
) -> Response:
    """The n-th uploaded file, translated; 409 ``not_finished`` until the job succeeded."""
    found = await service.files.download(job_id, n, tenant, partial=partial)
    disposition = f'attachment; filename="{_ascii(found.filename)}"'
    if not found.filename.isascii():
        disposition += f"; filename*=UTF-8''{quote(found.filename)}"
    return Response(
        found.content,
        media_type=found.media_type,
        headers={"Content-Disposition": disposition},
    )


def _ascii(name: str) -> str:
    return "".join(c if " " <= c <= "~" and c not in '"\\' else "_" for c in name)


@router.get("/v1/formats", response_model=FormatsOut, responses=error_responses(401))
async def list_formats(_: Tenant) -> FormatsOut:
    """The file formats a job takes, by the extensions that name them."""
    return FormatsOut(
        formats=[
            FormatOut(name=f.name, extensions=list(f.extensions), media_type=f.media_type)
            for f in FORMATS.all()
        ]
    )
