"""``/v1/translate`` (small, synchronous, dynamically batched) and ``/v1/languages``."""

from __future__ import annotations

from fastapi import APIRouter

from dragoman.api.deps import Service, Tenant
from dragoman.api.errors import error_responses
from dragoman.api.schemas import LanguagesOut, PairOut, TranslateIn, TranslateOut

router = APIRouter(prefix="/v1", tags=["translate"])


@router.post(
    "/translate", response_model=TranslateOut, responses=error_responses(401, 413, 422, 500)
)
async def translate(body: TranslateIn, service: Service, tenant: Tenant) -> TranslateOut:
    """Translates a few segments now; larger work belongs in a job."""
    out = await service.translator.translate(
        body.source_lang, body.target_lang, body.segments, body.engine
    )
    return TranslateOut(translations=out)


@router.get("/languages", response_model=LanguagesOut, responses=error_responses(401))
async def languages(service: Service, tenant: Tenant) -> LanguagesOut:
    return LanguagesOut(
        pairs=[
            PairOut(source=pair.source, target=pair.target, engines=engines)
            for pair, engines in service.engines.languages()
        ]
    )
