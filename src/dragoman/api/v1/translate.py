"""``/v1/translate`` (small, synchronous, dynamically batched), ``/v1/languages`` and
``/v1/limits`` (what a client checks before sending)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from dragoman.api.deps import Service, Tenant
from dragoman.api.errors import error_responses
from dragoman.api.responses import written
from dragoman.api.v1.catalogue import LanguagesOut, ModelOut, ModelsOut, PairOut
from dragoman.api.v1.schemas import (
    DetectedLanguage,
    TranslateIn,
    TranslateOut,
    UsageOut,
)
from dragoman.translation import TextRequest

router = APIRouter(prefix="/v1", tags=["translate"])


@router.post(
    "/translate",
    response_model=TranslateOut,
    response_model_exclude_none=True,
    responses=error_responses(
        400,
        401,
        404,
        413,
        422,
        429,
        500,
        when={
            400: "With source_lang 'auto', a segment was detected in a language that no "
            "installed pair translates into the target (detected_language_unsupported)",
            404: "The glossary named is not one of the tenant's (not_found)",
            413: "Too many segments (use a job) or a segment too long (payload_too_large; "
            "see /v1/limits)",
        },
    ),
)
async def translate(body: TranslateIn, service: Service, tenant: Tenant) -> Response:
    """Translates a few segments now; larger work belongs in a job. With ``source_lang``
    ``auto``, each segment is detected on its own and translated from its language. With
    ``glossary``, every term of the tenant's glossary comes out as its target (with
    ``auto``, in the segments detected in the glossary's source language). With
    ``mark_unknown``, words the engine does not know come back marked. A segment detected
    in the target language comes back as it is."""
    request = TextRequest(
        tenant=tenant,
        source=body.source_lang,
        target=body.target_lang,
        texts=body.segments,
        engine=body.engine,
        glossary=body.glossary,
        mark_unknown=body.mark_unknown,
    )
    result = await service.translation.translate(request)
    found = result.detected
    return written(
        TranslateOut(
            translations=result.texts,
            detected_languages=None
            if found is None
            else [DetectedLanguage(language=d.language, confidence=d.confidence) for d in found],
        ),
        exclude_none=True,
    )


@router.get("/usage", response_model=UsageOut, responses=error_responses(401, 503))
async def usage(service: Service, tenant: Tenant) -> UsageOut:
    """The caller's characters and translation requests this month, and its limits."""
    report = await service.usage.report(tenant)
    return UsageOut(
        period_start=report.period_start,
        period_end=report.period_end,
        characters=report.characters,
        requests=report.requests,
        character_limit=report.character_limit or None,
        requests_per_minute=report.requests_per_minute or None,
    )


@router.get("/languages", response_model=LanguagesOut, responses=error_responses(401))
async def languages(service: Service, tenant: Tenant) -> LanguagesOut:
    pivots = service.engines.pivots()
    pairs = []
    for pair, engines in service.engines.languages():
        manifest = service.engines.manifest(engines[0], pair)
        pairs.append(
            PairOut(
                source=pair.source,
                target=pair.target,
                engines=engines,
                pivot=pivots.get(pair),
                licence=manifest.licence if manifest else None,
                attribution=manifest.attribution if manifest else None,
            )
        )
    return LanguagesOut(pairs=pairs)


@router.get("/models", response_model=ModelsOut, responses=error_responses(401))
async def models(service: Service, tenant: Tenant) -> ModelsOut:
    """The installed neural models, with version, licence and origin."""
    engines = service.engines
    found = []
    for pair, names in engines.languages():
        for name in [n for n in names if n in engines.model_engines()]:
            m = engines.manifest(name, pair)
            found.append(
                ModelOut(
                    source=pair.source,
                    target=pair.target,
                    engine=name,
                    version=m.version if m else None,
                    licence=m.licence if m else None,
                    attribution=m.attribution if m else None,
                    installed_at=m.installed_at if m else None,
                    origin=m.source if m else None,
                    sha256=m.sha256 if m else None,
                )
            )
    return ModelsOut(models=found)


class LimitsOut(BaseModel):
    max_segment_chars: int = Field(description="Characters per segment (jobs and sync)")
    sync_max_segments: int = Field(description="Segments per POST /v1/translate")
    max_segments_per_job: int
    max_files_per_job: int
    max_file_bytes: int
    max_request_bytes: int


@router.get("/limits", response_model=LimitsOut, responses=error_responses(401))
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
