"""DeepL's v3 glossaries (``/v3/glossaries``): a glossary of several dictionaries, one per
language pair, that can be edited. They are dragoman's glossaries, the same ones
``/v2/glossaries`` and ``/v1/glossaries`` show (as their first dictionary), and any of
their ids names a glossary on ``/v2/translate``, ``/v2/document``, ``/v1/translate`` and
jobs, which use its dictionary of the request's pair.

The shapes and status codes are DeepL's: a glossary is ``{glossary_id, name, dictionaries:
[{source_lang, target_lang, entry_count}], creation_time}``; ``POST`` answers 201,
``GET``, ``PATCH`` and ``PUT`` 200, the deletions 204. ``PATCH`` renames the glossary and/or
merges the entries of one dictionary into its pair's (created when absent: a source given
again takes its new target, new ones come last); ``PUT .../dictionaries`` replaces one
pair's dictionary (or adds it); ``DELETE .../dictionaries`` removes one, but a glossary
keeps at least one (delete the glossary instead). Entries are TSV or CSV as on ``/v2``.
Any other path under ``/v3`` is DeepL's 404.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from dragoman.api.deepl.errors import DeepLRefusal, response
from dragoman.api.deepl.glossaries import rows_of
from dragoman.api.deepl.languages import dragoman_code
from dragoman.api.deepl.params import DeepLParams, handle
from dragoman.api.deps import ApiParts, Service
from dragoman.errors import UnsupportedPair
from dragoman.glossaries.entries import Row, to_tsv
from dragoman.models import Dictionary, Glossary, Pair

router = APIRouter(tags=["deepl"], include_in_schema=False)

_ANY = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def dictionary_object(dictionary: Dictionary) -> dict[str, Any]:
    return {
        "source_lang": dictionary.source_lang,
        "target_lang": dictionary.target_lang,
        "entry_count": dictionary.entry_count,
    }


def multilingual_object(glossary: Glossary) -> dict[str, Any]:
    """A glossary as DeepL's v3 describes it (codes in lower case, as DeepL's)."""
    created = glossary.created_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {
        "glossary_id": glossary.id,
        "name": glossary.name,
        "dictionaries": [dictionary_object(d) for d in glossary.dictionaries],
        "creation_time": created,
    }


def _pair(service: ApiParts, params: DeepLParams) -> Pair:
    """The installed pair of ``source_lang`` and ``target_lang``, or DeepL's 400."""
    source = dragoman_code(params.required("source_lang"), "source_lang")
    target = dragoman_code(params.required("target_lang"), "target_lang")
    try:
        return service.terminology.pair_of(source, target)
    except UnsupportedPair:
        raise DeepLRefusal("Unsupported glossary source and target language pair") from None


def _asked_pair(params: DeepLParams) -> Pair:
    """The pair a request names in its query (``source_lang``, ``target_lang``)."""
    source = dragoman_code(params.required("source_lang"), "source_lang")
    return Pair(source, dragoman_code(params.required("target_lang"), "target_lang"))


def _dictionary(service: ApiParts, params: DeepLParams) -> tuple[Pair, list[Row]]:
    """A dictionary as DeepL sends one: its pair and the rows of its entries."""
    pair = _pair(service, params)
    entries = params.required("entries")
    fmt = params.choice("entries_format", ("tsv", "csv"), "tsv")
    return pair, rows_of(service, entries, fmt, pair)


def _dictionaries(service: ApiParts, params: DeepLParams) -> list[tuple[Pair, list[Row]]]:
    given = params.objects("dictionaries")
    if not given:
        raise DeepLRefusal("Parameter 'dictionaries' not specified.")
    return [_dictionary(service, item) for item in given]


@router.post("/v3/glossaries")
async def create(request: Request, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        name = params.required("name")
        dictionaries = _dictionaries(service, params)
        glossary = await service.terminology.create(
            tenant=tenant, name=name, dictionaries=dictionaries
        )
        return JSONResponse(multilingual_object(glossary), status_code=201)

    return await handle(request, use)


@router.get("/v3/glossaries")
async def list_all(request: Request, service: Service) -> Response:
    async def use(_: DeepLParams, tenant: str | None) -> Any:
        found = await service.terminology.list_glossaries(tenant)
        return {"glossaries": [multilingual_object(g) for g in found]}

    return await handle(request, use)


@router.get("/v3/glossaries/{glossary_id}")
async def one(request: Request, glossary_id: str, service: Service) -> Response:
    async def use(_: DeepLParams, tenant: str | None) -> Any:
        return multilingual_object(await service.terminology.get(glossary_id, tenant))

    return await handle(request, use)


@router.patch("/v3/glossaries/{glossary_id}")
async def edit(request: Request, glossary_id: str, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        terminology = service.terminology
        await terminology.get(glossary_id, tenant)  # an unknown glossary first: DeepL's 404
        name = params.text("name") or None
        given = params.objects("dictionaries") or []
        if len(given) > 1:
            raise DeepLRefusal("Only one dictionary can be edited per request")
        if given:
            pair, rows = _dictionary(service, given[0])
            glossary = await terminology.merge(glossary_id, tenant, pair, rows, name=name)
        elif name is not None:
            glossary = await terminology.rename(glossary_id, tenant, name)
        else:
            glossary = await terminology.get(glossary_id, tenant)
        return multilingual_object(glossary)

    return await handle(request, use)


@router.delete("/v3/glossaries/{glossary_id}")
async def delete(request: Request, glossary_id: str, service: Service) -> Response:
    async def use(_: DeepLParams, tenant: str | None) -> Any:
        await service.terminology.delete(glossary_id, tenant)
        return Response(status_code=204)

    return await handle(request, use)


@router.put("/v3/glossaries/{glossary_id}/dictionaries")
async def replace(request: Request, glossary_id: str, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        await service.terminology.get(glossary_id, tenant)
        pair, rows = _dictionary(service, params)
        return dictionary_object(await service.terminology.replace(glossary_id, tenant, pair, rows))

    return await handle(request, use)


@router.delete("/v3/glossaries/{glossary_id}/dictionaries")
async def remove(request: Request, glossary_id: str, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        await service.terminology.get(glossary_id, tenant)
        await service.terminology.remove(glossary_id, tenant, _asked_pair(params))
        return Response(status_code=204)

    return await handle(request, use)


@router.get("/v3/glossaries/{glossary_id}/entries")
async def entries(request: Request, glossary_id: str, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        await service.terminology.get(glossary_id, tenant)
        pair = _asked_pair(params)
        _, found = await service.terminology.entries(glossary_id, tenant, pair)
        dictionary = {
            "source_lang": pair.source,
            "target_lang": pair.target,
            "entries": to_tsv(found),
            "entries_format": "tsv",
        }
        return {"dictionaries": [dictionary]}

    return await handle(request, use)


@router.api_route("/v3/{rest:path}", methods=_ANY)
async def not_found(rest: str) -> Response:
    return response(DeepLRefusal(f"Not found: /v3/{rest}", 404))
