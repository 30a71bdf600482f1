"""``/v1/glossaries``: a tenant's term lists, sent as JSON entries or a CSV/TSV file.

A glossary here has one language pair. One made with several (DeepL's ``/v3/glossaries``)
shows its first dictionary here, the one added first: its pair, entry count and entries;
``/v1/translate`` and jobs use its dictionary of their own pair, and a deletion here takes
the whole glossary."""

from __future__ import annotations

from datetime import datetime
from pathlib import PurePath
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.datastructures import UploadFile

from dragoman.api.deps import Service, Tenant
from dragoman.api.errors import error_responses
from dragoman.api.multipart import multipart, required_field, text_field
from dragoman.api.v1.schemas import Absent, Language, form_schema
from dragoman.errors import InvalidRequest, UnsupportedFormat
from dragoman.glossaries.entries import FORMATS, from_json
from dragoman.models import Glossary

router = APIRouter(prefix="/v1/glossaries", tags=["glossaries"])

_FIELDS = {"name", "source_lang", "target_lang", "format", "file"}


# What ``dragoman.glossaries.entries`` takes for a term or a name, stripped of outer whitespace:
# something left, and no control character, line break or noncharacter (nor a lone
# surrogate, which no pattern can name: regex engines refuse the range). Documented, not
# enforced by the models: the server's own check names the entry or line.
_CONTROL = r"\x00-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff"
TERM_PATTERN = rf"^[^{_CONTROL}]*[^\s{_CONTROL}][^{_CONTROL}]*$"


def _term(description: str, example: str) -> Any:
    return Field(
        examples=[example],
        description=description,
        json_schema_extra={"minLength": 1, "pattern": TERM_PATTERN},
    )


class EntryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = _term("A term, matched as whole words; no control character", "server")
    target: str = _term("What it becomes; equal to the source, the term is kept", "servidor")


class GlossaryIn(BaseModel):
    """A glossary as JSON: one language pair and its entries."""

    model_config = ConfigDict(extra="forbid")

    name: str = _term("Not blank; no control character", "product terms")
    source_lang: Language = Field(examples=["en"])
    target_lang: Language = Field(examples=["es"])
    entries: list[EntryIn] = Field(
        description="At least one; no source twice", json_schema_extra={"minItems": 1}
    )


class GlossaryFileIn(BaseModel):
    """A glossary as a multipart form with a TSV or CSV file (DeepL's glossary formats)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=form_schema)

    name: str = _term("Not blank; no control character", "product terms")
    source_lang: Language = Field(examples=["en"])
    target_lang: Language = Field(examples=["es"])
    file: bytes = Field(
        description="source<TAB>target (.tsv) or source,target (.csv) lines",
        json_schema_extra={"format": "binary"},
    )
    format: str | Absent = Field(
        None,
        description="tsv or csv, in any case; absent: from the file's extension",
        json_schema_extra={"pattern": "^(?:[Tt][Ss][Vv]|[Cc][Ss][Vv])$"},
    )


class GlossaryOut(BaseModel):
    id: str
    name: str
    source_lang: str
    target_lang: str
    entry_count: int
    created_at: datetime

    @classmethod
    def of(cls, glossary: Glossary) -> GlossaryOut:
        return cls(
            id=glossary.id,
            name=glossary.name,
            source_lang=glossary.source_lang,
            target_lang=glossary.target_lang,
            entry_count=glossary.entry_count,
            created_at=glossary.created_at,
        )


class EntryOut(BaseModel):
    source: str
    target: str


class GlossaryWithEntries(GlossaryOut):
    entries: list[EntryOut]


class GlossaryList(BaseModel):
    glossaries: list[GlossaryOut]


_BODIES = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/GlossaryIn"}},
            "multipart/form-data": {"schema": {"$ref": "#/components/schemas/GlossaryFileIn"}},
        },
    }
}
_CREATED: dict[int | str, dict[str, Any]] = {
    201: {
        "description": "The glossary",
        "headers": {
            "Location": {
                "description": "The glossary's URL, /v1/glossaries/{id}",
                "required": True,
                "schema": {"type": "string"},
            }
        },
    }
}


_WHEN = {
    400: "A form field or the file is not text in its charset (bad_encoding)",
    404: "No such glossary for the caller's tenant",
    409: "The tenant has as many glossaries as allowed",
    415: "The file is neither .tsv nor .csv, and 'format' does not say which (unsupported_format)",
    422: "The request breaks the schema or a rule of the server (invalid_request, "
    "unsupported_language_pair): entries a glossary cannot have, or a line of the file "
    "that does not parse",
}


def _responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``error_responses``, told of glossaries rather than jobs."""
    return error_responses(*statuses, when=_WHEN)


@router.post(
    "",
    status_code=201,
    response_model=GlossaryOut,
    responses={**_CREATED, **_responses(400, 401, 409, 413, 415, 422, 503)},
    openapi_extra=_BODIES,
)
async def create_glossary(
    request: Request, response: Response, service: Service, tenant: Tenant
) -> GlossaryOut:
    """Creates a glossary from JSON entries or an uploaded TSV or CSV file."""
    terminology = service.terminology
    content_type = request.headers.get("content-type", "")
    if content_type.startswith(("multipart/form-data", "application/x-www-form-urlencoded")):
        name, source, target, content, fmt = await _from_form(request, service)
        pair = terminology.pair_of(source, target)
        rows = terminology.rows_of_table(content, fmt, pair)
    else:
        body = await _json_in(request)
        name, pair = body.name, terminology.pair_of(body.source_lang, body.target_lang)
        rows = from_json((entry.source, entry.target) for entry in body.entries)
    key: str | None = request.scope.get("state", {}).get("idempotency_key")
    glossary = await terminology.create(
        tenant=tenant, name=name, dictionaries=[(pair, rows)], idempotency_key=key
    )
    response.headers["Location"] = f"/v1/glossaries/{glossary.id}"
    return GlossaryOut.of(glossary)


async def _json_in(request: Request) -> GlossaryIn:
    try:
        return GlossaryIn.model_validate_json(await request.body())
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]
        raise RequestValidationError(errors) from None


async def _from_form(request: Request, service: Service) -> tuple[str, str, str, bytes, str]:
    """The name, languages, table and table format of a multipart glossary."""
    async with multipart(request, fields=_FIELDS, max_files=1, max_part_size=2**16) as form:
        name, source, target = (
            required_field(form, key) for key in ("name", "source_lang", "target_lang")
        )
        part = form.get("file")
        if not isinstance(part, UploadFile):
            raise InvalidRequest("file: a part named 'file' with the entries is required")
        fmt = _format(text_field(form, "format"), part.filename or "")
        content = await part.read(service.settings.glossary_max_file_bytes + 1)
        return name, source, target, content, fmt


def _format(declared: str | None, filename: str) -> str:
    fmt = (declared or PurePath(filename).suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        what = f"format {declared!r}" if declared else f"the file {filename!r}"
        raise UnsupportedFormat(f"{what}: glossaries are read from tsv or csv")
    return fmt


@router.get("", response_model=GlossaryList, responses=_responses(401, 503))
async def list_glossaries(service: Service, tenant: Tenant) -> GlossaryList:
    """The caller's glossaries, oldest first (without their entries)."""
    found = await service.terminology.list_glossaries(tenant)
    return GlossaryList(glossaries=[GlossaryOut.of(g) for g in found])


@router.get(
    "/{glossary_id}", response_model=GlossaryWithEntries, responses=_responses(401, 404, 503)
)
async def get_glossary(glossary_id: str, service: Service, tenant: Tenant) -> GlossaryWithEntries:
    """One of the caller's glossaries, with its entries in their order."""
    glossary, entries = await service.terminology.entries(glossary_id, tenant)
    return GlossaryWithEntries(
        **GlossaryOut.of(glossary).model_dump(),
        entries=[EntryOut(source=e.source, target=e.target) for e in entries],
    )


@router.delete(
    "/{glossary_id}",
    status_code=204,
    response_class=Response,
    responses=_responses(401, 404, 503),
)
async def delete_glossary(glossary_id: str, service: Service, tenant: Tenant) -> Response:
    """Deletes a glossary; jobs that named it already still keep its terms."""
    await service.terminology.delete(glossary_id, tenant)
    return Response(status_code=204)
