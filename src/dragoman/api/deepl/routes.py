"""The routes of DeepL's API v2 under ``/v2``, so that DeepL's SDKs and plugins (deepl-python
``Translator(key, server_url=...)``, Weblate's DeepL backend, DeepLX-aware clients) work
unchanged against dragoman.

Each route authenticates the caller (``params.tenant_of``), reads its parameters as
DeepL does, calls the same use cases as ``/v1`` (``translation``, file jobs), and answers in
DeepL's shapes; refusals (``errors``) are ``{"message": "..."}`` with DeepL's status codes. Every
translation request is charged to the tenant's usage before any work (a document through
its file job). Glossaries (``glossary_id`` here, their routes in ``glossaries``) are
dragoman's own, shared with ``/v1``. Any other path under ``/v2`` is DeepL's 404, so this
router must stay the last one to route ``/v2``. The routes stay out of ``/openapi.json``,
which describes the v1 contract.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request, Response

from dragoman.api.deepl.documents import (
    INVALID_FILE_DATA,
    check_output_format,
    document_id_of,
    document_of,
    file_data,
    new_key,
    not_ready,
    status_of,
)
from dragoman.api.deepl.errors import DeepLRefusal, response
from dragoman.api.deepl.glossaries import glossary_id_of, glossary_terms
from dragoman.api.deepl.languages import (
    deepl_code,
    dragoman_code,
    source_languages,
    target_languages,
)
from dragoman.api.deepl.memories import memory_named
from dragoman.api.deepl.params import DeepLParams, handle
from dragoman.api.deepl.text import (
    check_formality,
    model_type_used,
    text_options,
    translate_texts,
)
from dragoman.api.deps import ApiParts, Service
from dragoman.api.downloads import attachment
from dragoman.detection import AUTO
from dragoman.formats import for_file
from dragoman.jobs.files import Upload
from dragoman.models import Job, JobOptions, JobStatus, Pair

router = APIRouter(tags=["deepl"], include_in_schema=False)

NO_LIMIT = 1_000_000_000_000  # DeepL's character_limit for "no limit"
_READ = ["GET", "POST"]
_ANY = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def _languages(params: DeepLParams) -> tuple[str | None, str]:
    """The request's source (None: detect) and target, as canonical codes."""
    target = dragoman_code(params.required("target_lang"), "target_lang")
    given = params.text("source_lang")
    return (dragoman_code(given, "source_lang") if given else None), target


@router.api_route("/v2/translate", methods=_READ)
async def deepl_translate(request: Request, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        texts = params.texts()
        languages = _languages(params)
        options = text_options(params)
        check_formality(params)
        glossary = glossary_id_of(params, languages[0])
        memory = await memory_named(service, params, tenant)
        memories = (memory[1],) if memory else ()
        out, detected = await translate_texts(
            service, tenant, texts, languages, options, glossary, memories
        )
        used = model_type_used(options)
        return {
            "translations": [
                {
                    "detected_source_language": deepl_code(language),
                    "text": text,
                    "billed_characters": len(given),
                    **({"model_type_used": used} if used else {}),
                }
                for given, text, language in zip(texts, out, detected, strict=True)
            ]
        }

    return await handle(request, use)


@router.api_route("/v2/languages", methods=_READ)
async def deepl_languages(request: Request, service: Service) -> Response:
    async def use(params: DeepLParams, _: str | None) -> Any:
        kind = params.choice("type", ("source", "target"), "source")
        pairs = service.translation.pairs()
        return target_languages(pairs) if kind == "target" else source_languages(pairs)

    return await handle(request, use)


@router.api_route("/v2/usage", methods=_READ)
async def deepl_usage(request: Request, service: Service) -> Response:
    async def use(_: DeepLParams, tenant: str | None) -> Any:
        report = await service.usage.report(tenant)
        return {
            "character_count": report.characters,
            "character_limit": report.character_limit or NO_LIMIT,
            "start_time": report.period_start.isoformat().replace("+00:00", "Z"),
            "end_time": report.period_end.isoformat().replace("+00:00", "Z"),
        }

    return await handle(request, use)


@router.post("/v2/document")
async def deepl_document(request: Request, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        part = params.file("file")
        source, target = _languages(params)
        check_formality(params)
        glossary = glossary_id_of(params, source)
        name = params.text("filename") or part.filename or "document.txt"
        with file_data():
            for_file(name)  # an unknown extension is refused before the upload is read
        check_output_format(params, name)
        if source == target:
            raise DeepLRefusal("Source and target language are equal.")
        pair = service.translation.upload_pair(source or AUTO, target)
        await glossary_terms(service, glossary, tenant, Pair(source or target, target))
        memory = await memory_named(service, params, tenant)
        limit = service.settings.max_file_bytes
        content = await part.read(limit + 1)
        if len(content) > limit:
            raise DeepLRefusal(f"{name} is larger than {limit} bytes", 413)
        if not content:
            raise DeepLRefusal(INVALID_FILE_DATA, detail=f"{name}: the file is empty")
        key = new_key()
        upload = Upload(name, content)
        memories = (memory[0],) if memory else ()
        options = JobOptions(document_key=key, glossary=glossary, memories=memories)
        with file_data():
            job = await service.files.submit(tenant, pair, [upload], options)
        return {"document_id": document_id_of(job), "document_key": key}

    return await handle(request, use)


@router.api_route("/v2/document/{document_id}", methods=_READ)
async def deepl_document_status(request: Request, document_id: str, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        job = await document_of(service, document_id, params, tenant)
        return await status_of(service, await _ended(service, job, tenant))

    return await handle(request, use)


async def _ended(service: ApiParts, job: Job, tenant: str | None) -> Job:
    """``job`` once it has ended, or as it is after ``deepl_status_wait_s``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + service.settings.deepl_status_wait_s
    while not job.status.finished and (left := deadline - loop.time()) > 0:
        await service.manager.waits.until_moved(job, left)
        job = await service.manager.get(job.id, tenant)
    return job


@router.api_route("/v2/document/{document_id}/result", methods=_READ)
async def deepl_document_result(request: Request, document_id: str, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        job = await document_of(service, document_id, params, tenant)
        if job.status is not JobStatus.SUCCEEDED:
            raise not_ready(job)
        found = await service.files.download(job.id, 0, tenant)
        return attachment(found.content, found.media_type, found.filename)

    return await handle(request, use)


@router.api_route("/v2/{rest:path}", methods=_ANY)
async def deepl_not_found(rest: str) -> Response:
    return response(DeepLRefusal(f"Not found: /v2/{rest}", 404))
