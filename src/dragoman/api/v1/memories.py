"""``/v1/memories``: a tenant's translation memories, imported from TMX 1.4."""

from __future__ import annotations

import re
from datetime import datetime

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field
from starlette.datastructures import FormData, UploadFile

from dragoman.api.deps import Service, Tenant
from dragoman.api.errors import error_responses
from dragoman.api.multipart import multipart
from dragoman.api.v1.schemas import MEMORY_NAME_PATTERN, ErrorOut
from dragoman.errors import InvalidRequest, PayloadTooLarge
from dragoman.models import MemoryInfo

router = APIRouter(prefix="/v1/memories", tags=["memories"])

_MISSING: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorOut, "description": "The tenant has no memory of that name"}
}


class MemoryOut(BaseModel):
    name: str
    units: int = Field(description="Translation units read from the file")
    languages: list[str] = Field(description="Base language codes of the units' variants")
    source_lang: str | None = Field(description="The file's srclang; null: *all*")
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, info: MemoryInfo) -> MemoryOut:
        return cls(
            name=info.name,
            units=info.units,
            languages=list(info.languages),
            source_lang=info.source_lang,
            created_at=info.created_at,
            updated_at=info.updated_at,
        )


class MemoryCreated(MemoryOut):
    replaced: bool = Field(description="True when a memory of this name was replaced")
    skipped: int = Field(
        description="<tu> left out: fewer than two languages, or none in the header's srclang"
    )


class MemoryList(BaseModel):
    memories: list[MemoryOut]


_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["name", "file"],
                    "properties": {
                        "name": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": 128,
                            "pattern": MEMORY_NAME_PATTERN,
                        },
                        "file": {
                            "type": "string",
                            "format": "binary",
                            "minLength": 1,
                            "description": "A TMX 1.4 file (422 invalid_file when it is not)",
                        },
                    },
                }
            }
        },
    }
}


@router.post(
    "",
    status_code=201,
    response_model=MemoryCreated,
    responses=error_responses(
        400,
        401,
        413,
        422,
        503,
        when={
            422: "A missing, repeated or unknown field, a bad name, an empty file "
            "(invalid_request), or a file that is not TMX 1.4 (invalid_file)"
        },
    ),
    openapi_extra=_BODY,
)
async def import_memory(request: Request, service: Service, tenant: Tenant) -> MemoryCreated:
    """Imports a TMX 1.4 file as the memory ``name``; a memory of that name is replaced."""
    limit = service.settings.max_file_bytes
    async with multipart(
        request, fields=("name", "file"), max_files=1, max_part_size=2**20
    ) as form:
        name, file = _fields(form)
        data = await file.read(limit + 1)
    filename = file.filename or "memory.tmx"
    if len(data) > limit:
        raise PayloadTooLarge(
            f"{filename}: larger than the limit of {limit} bytes (DRAGOMAN_MAX_FILE_BYTES)"
        )
    if not data:
        raise InvalidRequest(f"{filename}: the file is empty")
    info, replaced, skipped = await service.memories.import_tmx(tenant, name, data, filename)
    return MemoryCreated(**MemoryOut.of(info).model_dump(), replaced=replaced, skipped=skipped)


def _fields(form: FormData) -> tuple[str, UploadFile]:
    names, files = form.getlist("name"), form.getlist("file")
    if len(names) != 1 or not isinstance(names[0], str):
        raise InvalidRequest("name: give the memory's name once, as a plain field")
    if not re.fullmatch(MEMORY_NAME_PATTERN, names[0]):
        raise InvalidRequest(
            f"name: {names[0]!r} is not a memory name (letters, digits, '.', '_', '-')"
        )
    if len(files) != 1 or not isinstance(files[0], UploadFile):
        raise InvalidRequest("file: send one TMX file as a part named 'file'")
    return names[0], files[0]


@router.get("", response_model=MemoryList, responses=error_responses(401, 503))
async def list_memories(service: Service, tenant: Tenant) -> MemoryList:
    """The caller's memories, by name."""
    found = await service.memories.listing(tenant)
    return MemoryList(memories=[MemoryOut.of(info) for info in found])


@router.delete(
    "/{name}",
    status_code=204,
    response_class=Response,
    responses={**error_responses(401, 503), **_MISSING},
)
async def delete_memory(service: Service, tenant: Tenant, name: str) -> Response:
    """Deletes a memory; jobs already submitted keep what they took from it."""
    await service.memories.delete(tenant, name)
    return Response(status_code=204)
