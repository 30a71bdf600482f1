"""The routes of DeepL's API v2 under ``/v2``, so that DeepL's SDKs and plugins (deepl-python
``Translator(key, server_url=...)``, Weblate's DeepL backend, DeepLX-aware clients) work
unchanged against dragoman.

Each route authenticates the caller (``deepl_request.tenant_of``), reads its parameters as
DeepL does, calls the same translator, engines and file jobs as ``/v1``, and answers in
DeepL's shapes; refusals are ``{"message": "..."}`` with DeepL's status codes. Every
translation request is charged to the tenant's usage before any work (a document through
its file job). Glossaries (``glossary_id`` here, their routes in ``deepl_glossaries``) are
dragoman's own, shared with ``/v1``. Any other path under ``/v2`` is DeepL's 404, so this
router must stay the last one to route ``/v2``. The routes stay out of ``/openapi.json``,
which describes the v1 contract.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request, Response

from dragoman.api.compat.deepl_documents import (
    check_output_format,
    document_of,
    new_key,
    not_ready,
    status_of,
)
from dragoman.api.compat.deepl_glossaries import glossary_id_of, glossary_terms
from dragoman.api.compat.deepl_languages import (
    check_pair,
    deepl_code,
    dragoman_code,
    source_languages,
    target_languages,
)
from dragoman.api.compat.deepl_request import DeepLError, DeepLParams, handle
from dragoman.api.compat.deepl_text import (
    characters,
    check_formality,
    text_options,
    translate_texts,
)
from dragoman.api.compat.lt_translate import file_pair, installed
from dragoman.api.deps import ApiParts, Service
from dragoman.batcher import Asker
from dragoman.formats import for_file
from dragoman.jobs.files import Upload
from dragoman.models import JobOptions, JobStatus, Pair

router = APIRouter(tags=["deepl"], include_in_schema=False)

NO_LIMIT = 1_000_000_000_000  # DeepL's character_limit for "no limit"
_READ = ["GET", "POST"]
_ANY = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def _languages(params: DeepLParams) -> tuple[str | None, str]:
    """The request's source (None: detect) and target, as canonical codes."""
    target = dragoman_code(params.required("target_lang"), "target_lang")
    given = params.text("source_lang")
    return (dragoman_code(given, "source_lang") if given else None), target


def _check_limits(service: ApiParts, texts: list[str]) -> None:
    count, chars = service.settings.sync_max_segments, service.settings.max_segment_chars
    if len(texts) > count:
        raise DeepLError(f"Too many texts: {len(texts)}; the limit is {count}", 413)
    longest = max(len(text) for text in texts)
    if longest > chars:
        raise DeepLError(f"A text has {longest} characters; the limit is {chars}", 413)


@router.api_route("/v2/translate", methods=_READ)
async def deepl_translate(request: Request, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        texts = params.texts()
        source, target = _languages(params)
        options = text_options(params)
        check_formality(params)
        glossary = glossary_id_of(params, source)
        check_pair(installed(service), source, target)
        _check_limits(service, texts)
        terms = await glossary_terms(service, glossary, tenant, Pair(source or target, target))
        await service.usage.charge(tenant, characters(texts))
        out, detected = await translate_texts(
            service, texts, source, target, options, terms, Asker(tenant)
        )
        return {
            "translations": [
                {
                    "detected_source_language": deepl_code(language),
                    "text": text,
                    "billed_characters": len(given),
                }
                for given, text, language in zip(texts, out, detected, strict=True)
            ]
        }

    return await handle(request, use)


@router.api_route("/v2/languages", methods=_READ)
async def deepl_languages(request: Request, service: Service) -> Response:
    async def use(params: DeepLParams, _: str | None) -> Any:
        kind = params.choice("type", ("source", "target"), "source")
        pairs = installed(service)
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
        for_file(name)  # an unknown extension is refused before the upload is read
        check_output_format(params, name)
        check_pair(installed(service), source, target)
        if source == target:
            raise DeepLError("Source and target language are equal.")
        await glossary_terms(service, glossary, tenant, Pair(source or target, target))
        limit = service.settings.max_file_bytes
        content = await part.read(limit + 1)
        if len(content) > limit:
            raise DeepLError(f"{name} is larger than {limit} bytes", 413)
        pair = (
            Pair(source, target)
            if source
            else await file_pair(service, "auto", target, name, content)
        )
        key = new_key()
        upload = Upload(name, content)
        options = JobOptions(document_key=key, glossary=glossary)
        job = await service.files.submit(tenant, pair, [upload], options)
        return {"document_id": job.id, "document_key": key}

    return await handle(request, use)


@router.api_route("/v2/document/{document_id}", methods=_READ)
async def deepl_document_status(request: Request, document_id: str, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        job = await document_of(service, document_id, params, tenant)
        return await status_of(service, job)

    return await handle(request, use)


@router.api_route("/v2/document/{document_id}/result", methods=_READ)
async def deepl_document_result(request: Request, document_id: str, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        job = await document_of(service, document_id, params, tenant)
        if job.status is not JobStatus.SUCCEEDED:
            raise not_ready(job)
        found = await service.files.download(job.id, 0, tenant)
        plain = "".join(c if " " <= c <= "~" and c not in '"\\' else "_" for c in found.filename)
        disposition = f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(found.filename)}"
        return Response(
            found.content, media_type=found.media_type, headers={"Content-Disposition": disposition}
        )

    return await handle(request, use)


@router.api_route("/v2/{rest:path}", methods=_ANY)
async def deepl_not_found(rest: str) -> Response:
    return DeepLError(f"Not found: /v2/{rest}", 404).response()
