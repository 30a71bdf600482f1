"""DeepL's v2 glossaries, kept in dragoman's one glossary store: a glossary made here is
usable by ``/v1`` and ``/v3`` (and one made there here) for the same tenant.

The shapes are DeepL's: a glossary is ``{glossary_id, name, ready, source_lang,
target_lang, creation_time, entry_count}``, its entries come back as TSV, and a glossary
made here is never changed here, which is how Weblate syncs them (``weblate:…`` names, a
new one per change, stale ones deleted). As on DeepL, a glossary of several dictionaries
(``/v3/glossaries``) is listed and read here as its first dictionary, and one changed
through ``/v3`` (or of several dictionaries) cannot be deleted here: ``DELETE
/v3/glossaries/{id}`` does that. ``/v2/glossary-language-pairs`` lists every installed
pair: any pair translates with a glossary here. Routes other than these under
``/v2/glossaries`` are the router's DeepL 404 (``routes.py``), so this router is included
before it.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from dragoman.api.deepl.errors import DeepLRefusal
from dragoman.api.deepl.languages import dragoman_code
from dragoman.api.deepl.params import DeepLParams, handle
from dragoman.api.deps import ApiParts, Service
from dragoman.errors import ClientError, PayloadTooLarge, UnsupportedPair
from dragoman.glossaries import Terms
from dragoman.glossaries.entries import Row, to_tsv
from dragoman.models import Glossary, Pair

router = APIRouter(tags=["deepl"], include_in_schema=False)

_READ = ["GET", "POST"]
TSV = "text/tab-separated-values"


def glossary_object(glossary: Glossary) -> dict[str, Any]:
    """A glossary as DeepL describes it (codes in lower case, as DeepL's)."""
    created = glossary.created_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {
        "glossary_id": glossary.id,
        "name": glossary.name,
        "ready": True,
        "source_lang": glossary.source_lang,
        "target_lang": glossary.target_lang,
        "creation_time": created,
        "entry_count": glossary.entry_count,
    }


def glossary_id_of(params: DeepLParams, source: str | None) -> str | None:
    """The glossary a translation names (``glossary_id``, or ``glossary_ids`` with one id),
    or DeepL's 400: a glossary needs ``source_lang``; one glossary per request here."""
    given = params.text("glossary_id")
    listed = params.tags("glossary_ids")
    if given and listed:
        raise DeepLRefusal("glossary_id and glossary_ids cannot be used together")
    ids = [given] if given else listed
    if not ids:
        return None
    if source is None:
        raise DeepLRefusal("Use of a glossary requires the source_lang parameter to be specified")
    if len(ids) > 1:
        raise DeepLRefusal("Only one glossary per request is supported on this server")
    return ids[0]


async def glossary_terms(
    service: ApiParts, glossary_id: str | None, tenant: str | None, pair: Pair
) -> Terms | None:
    """The terms of the tenant's glossary ``glossary_id`` for ``pair`` (refusals worded in
    ``errors``: not the tenant's, or of another pair)."""
    return await service.terminology.terms_for(glossary_id, tenant, pair)


@router.api_route("/v2/glossary-language-pairs", methods=_READ)
async def language_pairs(request: Request, service: Service) -> Response:
    """Every installed pair: Weblate asks this before it syncs a glossary."""

    async def use(_: DeepLParams, __: str | None) -> Any:
        pairs = sorted(service.translation.pairs())
        return {
            "supported_languages": [
                {"source_lang": pair.source, "target_lang": pair.target} for pair in pairs
            ]
        }

    return await handle(request, use)


@router.post("/v2/glossaries")
async def create(request: Request, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        name = params.required("name")
        source = dragoman_code(params.required("source_lang"), "source_lang")
        target = dragoman_code(params.required("target_lang"), "target_lang")
        entries = params.required("entries")
        fmt = params.choice("entries_format", ("tsv", "csv"), "tsv")
        terminology = service.terminology
        try:
            pair = terminology.pair_of(source, target)
        except UnsupportedPair:
            raise DeepLRefusal("Unsupported glossary source and target language pair") from None
        rows = rows_of(service, entries, fmt, pair)
        glossary = await terminology.create(tenant=tenant, name=name, dictionaries=[(pair, rows)])
        return JSONResponse(glossary_object(glossary), status_code=201)

    return await handle(request, use)


def rows_of(service: ApiParts, entries: str, fmt: str, pair: Pair) -> list[Row]:
    """The rows of DeepL's ``entries``; a mistake is DeepL's 400 saying where it is."""
    try:
        return service.terminology.rows_of_table(entries.encode(), fmt, pair)
    except PayloadTooLarge:
        raise
    except ClientError as exc:
        raise DeepLRefusal(f"Invalid glossary entries provided: {exc.message}") from None


@router.get("/v2/glossaries")
async def list_all(request: Request, service: Service) -> Response:
    async def use(_: DeepLParams, tenant: str | None) -> Any:
        found = await service.terminology.list_glossaries(tenant)
        return {"glossaries": [glossary_object(g) for g in found]}

    return await handle(request, use)


@router.get("/v2/glossaries/{glossary_id}")
async def one(request: Request, glossary_id: str, service: Service) -> Response:
    async def use(_: DeepLParams, tenant: str | None) -> Any:
        return glossary_object(await service.terminology.get(glossary_id, tenant))

    return await handle(request, use)


@router.get("/v2/glossaries/{glossary_id}/entries")
async def entries(request: Request, glossary_id: str, service: Service) -> Response:
    async def use(_: DeepLParams, tenant: str | None) -> Any:
        accept = request.headers.get("accept", "*/*")
        if TSV not in accept and "*/*" not in accept:
            raise DeepLRefusal(f"Unsupported Accept header: entries are given as {TSV}", 415)
        found = await service.terminology.entries(glossary_id, tenant)
        return Response(to_tsv(found[1]), media_type=f"{TSV}; charset=utf-8")

    return await handle(request, use)


@router.delete("/v2/glossaries/{glossary_id}")
async def delete(request: Request, glossary_id: str, service: Service) -> Response:
    async def use(_: DeepLParams, tenant: str | None) -> Any:
        glossary = await service.terminology.get(glossary_id, tenant)
        if glossary.revision > 1 or len(glossary.dictionaries) > 1:
            raise DeepLRefusal(
                "This glossary was changed through /v3/glossaries or has several dictionaries;"
                f" delete it with DELETE /v3/glossaries/{glossary_id}"
            )
        await service.terminology.delete(glossary_id, tenant)
        return Response(status_code=204)

    return await handle(request, use)
