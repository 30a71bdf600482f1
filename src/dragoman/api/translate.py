"""``/v1/translate`` (small, synchronous, dynamically batched) and ``/v1/languages``."""

from __future__ import annotations

from fastapi import APIRouter

from dragoman.api.deps import Service, Tenant
from dragoman.api.schemas import ErrorOut, LanguagesOut, PairOut, TranslateIn, TranslateOut
from dragoman.engines import Pair
from dragoman.errors import PayloadTooLarge
from dragoman.languages import canonical
from dragoman.models import Document
from dragoman.service.validation import check_segments

router = APIRouter(prefix="/v1", tags=["translate"])

_ERRORS: dict[int | str, dict[str, object]] = {
    code: {"model": ErrorOut} for code in (401, 413, 422, 503)
}


@router.post("/translate", response_model=TranslateOut, responses=_ERRORS)
async def translate(body: TranslateIn, service: Service, tenant: Tenant) -> TranslateOut:
    """Translates a few segments now; larger work belongs in a job."""
    settings = service.settings
    if len(body.segments) > settings.sync_max_segments:
        raise PayloadTooLarge(
            f"{len(body.segments)} segments exceed the limit of {settings.sync_max_segments} "
            "for /v1/translate; submit a job to /v1/jobs instead"
        )
    check_segments(
        [Document("request", body.segments)],
        max_segments=settings.sync_max_segments,
        max_chars=settings.max_segment_chars,
    )
    pair = Pair(canonical(body.source_lang), canonical(body.target_lang))
    engine = service.engines.resolve(pair, body.engine)
    out = await service.batcher.translate(engine.name, pair, body.segments)
    return TranslateOut(translations=out)


@router.get("/languages", response_model=LanguagesOut, responses=_ERRORS)
async def languages(service: Service, tenant: Tenant) -> LanguagesOut:
    return LanguagesOut(
        pairs=[
            PairOut(source=pair.source, target=pair.target, engines=engines)
            for pair, engines in service.engines.languages()
        ]
    )
