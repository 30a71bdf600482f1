"""The routes of LibreTranslate 1.9, at the root beside ``/v1``, so that its clients
(libretranslatepy, libretranslate-aio, deep-translator, Weblate) work unchanged.

Each route reads its parameters as LibreTranslate does (``params``), calls the same use
cases as ``/v1`` (``translation`` for texts, file jobs for files), and answers in
LibreTranslate's shapes, its errors ``{"error": "message"}`` with its status codes
(``errors``). Bad input is a 400, a missing or
unknown ``api_key`` (when keys are configured) a 403, never a 5xx. The routes stay out of
``/openapi.json``, which describes the v1 contract.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from dragoman.api.deps import Service
from dragoman.api.downloads import attachment
from dragoman.api.libretranslate.errors import LtRefusal, answer
from dragoman.api.libretranslate.params import LtParams, read_params, tenant_of
from dragoman.errors import DragomanError
from dragoman.formats import FORMATS, for_file, translated_name
from dragoman.jobs.auto import SAME_LANGUAGE
from dragoman.jobs.files import Upload
from dragoman.languages import english_name
from dragoman.models import JobStatus
from dragoman.translation import TextRequest

router = APIRouter(tags=["libretranslate"], include_in_schema=False)

FILE_WAIT_S = 600.0  # how long /translate_file waits for its job before answering
_POLL_S = 0.2
_FINAL = {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED}


async def _with_params(request: Request, use: Callable[[LtParams], Awaitable[Any]]) -> Response:
    """``use`` of the request's parameters, answered as ``errors.answer`` does."""

    async def run() -> Any:
        params = await read_params(request)
        try:
            return await use(params)
        finally:
            await params.close()

    return await answer(run())


@router.post("/translate")
async def lt_translate(request: Request, service: Service) -> Response:
    async def use(params: LtParams) -> Any:
        tenant = tenant_of(request, params)
        q = params.texts()
        texts = [q] if isinstance(q, str) else q
        fmt = params.text("format") or "text"
        if fmt not in ("text", "html"):
            raise LtRefusal(f"Invalid request: format {fmt} is not text or html")
        result = await service.translation.translate(
            TextRequest(
                tenant=tenant,
                source=params.required("source"),
                target=params.required("target"),
                texts=texts,
                kind="html" if fmt == "html" else "plain",
            )
        )
        one = isinstance(q, str)
        body: dict[str, Any] = {"translatedText": result.texts[0] if one else result.texts}
        if result.detected is not None:
            found = [{"confidence": d.confidence, "language": d.language} for d in result.detected]
            body["detectedLanguage"] = found[0] if one else found
        if _positive(params.text("alternatives")):
            body["alternatives"] = [] if one else [[] for _ in texts]
        return body

    return await _with_params(request, use)


def _positive(value: str | None) -> bool:
    try:
        return value is not None and int(value) > 0
    except ValueError:
        raise LtRefusal("Invalid request: alternatives must be an integer") from None


@router.get("/languages")
async def lt_languages(service: Service) -> Response:
    targets: dict[str, list[str]] = {}
    for pair in sorted(service.translation.pairs()):
        targets.setdefault(pair.source, []).append(pair.target)
        targets.setdefault(pair.target, [])
    return JSONResponse(
        [
            {"code": c, "name": english_name(c), "targets": sorted(t)}
            for c, t in sorted(targets.items())
        ]
    )


@router.post("/detect")
async def lt_detect(request: Request, service: Service) -> Response:
    async def use(params: LtParams) -> Any:
        q = params.texts()
        text = q if isinstance(q, str) else "\n".join(q)
        found = await service.translation.identify(tenant_of(request, params), text)
        if found is None:
            return []
        return [{"confidence": found.confidence, "language": found.language}]

    return await _with_params(request, use)


@router.post("/translate_file")
async def lt_translate_file(request: Request, service: Service) -> Response:
    async def use(params: LtParams) -> Any:
        tenant = tenant_of(request, params)
        part = params.file("file")
        source, target = params.required("source"), params.required("target")
        pair = service.translation.upload_pair(source, target)
        name = part.filename or "file"
        for_file(name)  # an unknown extension too
        limit = service.settings.max_file_bytes
        content = await part.read(limit + 1)
        if len(content) > limit:
            raise LtRefusal(f"Invalid request: {name} is larger than {limit} bytes")
        job = await service.files.submit(tenant, pair, [Upload(name, content)])
        await _wait(service, job.id, tenant)
        url = f"{str(request.base_url).rstrip('/')}/download_file/{job.id}/"
        return {"translatedFileUrl": url + quote(translated_name(name, pair.target))}

    return await _with_params(request, use)


async def _wait(service: Service, job_id: str, tenant: str | None) -> None:
    """Until the job has ended or ``FILE_WAIT_S`` has passed (then the URL is answered
    anyway, and serves the file once the job has finished)."""
    deadline = time.monotonic() + FILE_WAIT_S
    while time.monotonic() < deadline:
        job = await service.manager.get(job_id, tenant)
        if job.status in _FINAL:
            if job.error is not None and job.error.code == SAME_LANGUAGE.code:
                raise LtRefusal(f"Invalid request: {job.error.message}")
            if job.status is not JobStatus.SUCCEEDED:
                why = job.error.message if job.error else str(job.status)
                raise DragomanError(f"the file could not be translated: {why}")
            return
        await asyncio.sleep(_POLL_S)


@router.get("/download_file/{job_id}/{name}")
async def lt_download_file(request: Request, job_id: str, name: str, service: Service) -> Response:
    """The URL is the capability, as in LibreTranslate: a job id is 128 random bits, and
    the name must be the translated file's. A key, when given, must be valid."""

    async def use(params: LtParams) -> Any:
        given = params.text("api_key") or request.headers.get("authorization")
        tenant = tenant_of(request, params) if given else None
        found = await service.files.download(job_id, 0, tenant)
        if found.filename != name:
            raise LtRefusal("Not found", 404)
        return attachment(found.content, found.media_type, found.filename)

    return await _with_params(request, use)


@router.get("/frontend/settings")
async def lt_frontend_settings(request: Request, service: Service) -> Response:
    keyed = bool(request.app.state.tenants_by_key)
    pairs = sorted(service.translation.pairs())
    target = pairs[0].target if pairs else "en"
    return JSONResponse(
        {
            "charLimit": service.settings.max_segment_chars,
            "frontendTimeout": 500,
            "apiKeys": keyed,
            "keyRequired": keyed,
            "suggestions": False,
            "filesTranslation": True,
            "supportedFilesFormat": [ext for f in FORMATS.all() for ext in f.extensions],
            "language": {
                "source": {"code": "auto", "name": "Auto Detect"},
                "target": {"code": target, "name": english_name(target)},
            },
        }
    )


@router.get("/health")
async def lt_health() -> Response:
    return JSONResponse({"status": "ok"})
