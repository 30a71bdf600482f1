"""DeepL's translation memories: ``GET /v3/translation_memories`` (and one by its id) lists
the tenant's dragoman memories (``/v1/memories``) in DeepL's shape, and
``translation_memory_id`` (with ``translation_memory_threshold``) on ``/v2/translate`` and
``/v2/document`` applies one.

A memory's ``translation_memory_id`` is its name: stable across re-imports, the same name a
job's ``memories`` takes, and looked up only among the caller's memories, so an id never
reaches another tenant's (theirs is DeepL's 404, as an unknown one is). A memory is listed
with its TMX header's ``srclang`` as ``source_language`` and its other languages as
``target_languages``; one whose header says ``*all*`` applies in every direction between
its languages, and is listed with its first language as the source.

dragoman's memories match exactly (ADR 0014): a segment takes a memory's target when its
text is the entry's source, whitespace runs aside, with the same inline codes. No fuzzy
match is ever applied, so ``translation_memory_threshold`` (0 to 100, DeepL's default 75) is
checked and changes nothing: below 100 as at 100, a segment without an exact match is
machine-translated exactly as without the memory.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request, Response

from dragoman.api.deepl.errors import DeepLRefusal, unsupported
from dragoman.api.deepl.params import DeepLParams, handle
from dragoman.api.deps import ApiParts, Service
from dragoman.errors import NotFound
from dragoman.models import MemoryInfo

router = APIRouter(tags=["deepl"], include_in_schema=False)

MAX_PAGE_SIZE = 25  # DeepL's
_ID = "translation_memory_id"
_THRESHOLD = "translation_memory_threshold"


def memory_object(info: MemoryInfo) -> dict[str, Any]:
    """A memory as DeepL's v3 describes one (codes in lower case, as DeepL's)."""
    source = info.source_lang or (info.languages[0] if info.languages else "")
    return {
        _ID: info.name,
        "name": info.name,
        "source_language": source,
        "target_languages": [lang for lang in info.languages if lang != source],
        "segment_count": info.units,
        "creation_time": _time(info.created_at.isoformat(timespec="milliseconds")),
        "updated_time": _time(info.updated_at.isoformat(timespec="milliseconds")),
    }


def _time(iso: str) -> str:
    return iso.replace("+00:00", "Z")


def _number(params: DeepLParams, name: str, default: int, low: int, high: int) -> int:
    """A whole number in ``[low, high]`` (DeepL's 400 otherwise), or ``default``."""
    given = params.text(name)
    if given is None:
        return default
    if not re.fullmatch(r"\s*\d{1,9}\s*", given) or not low <= int(given) <= high:
        raise unsupported(name)
    return int(given)


async def _memory(service: ApiParts, tenant: str | None, memory_id: str) -> MemoryInfo:
    for info in await service.memories.listing(tenant):
        if info.name == memory_id:
            return info
    raise DeepLRefusal("Translation memory not found", 404)


async def memory_named(
    service: ApiParts, params: DeepLParams, tenant: str | None
) -> tuple[str, int] | None:
    """The memory a translation names (``translation_memory_id``; ``translation_memory``
    also read), as ``(name, id)``, or None; DeepL's 404 when the caller has none by that
    id, its 400 for a threshold out of 0 to 100 or given without a memory."""
    name = params.text(_ID) or params.text("translation_memory")
    _number(params, _THRESHOLD, 75, 0, 100)
    if not name:
        if params.text(_THRESHOLD) is not None:
            raise DeepLRefusal(f"Parameter '{_ID}' not specified.")
        return None
    try:
        (memory_id,) = await service.memories.ids(tenant, [name])
    except NotFound:
        raise DeepLRefusal("Translation memory not found", 404) from None
    return name, memory_id


@router.get("/v3/translation_memories")
async def list_memories(request: Request, service: Service) -> Response:
    async def use(params: DeepLParams, tenant: str | None) -> Any:
        page = _number(params, "page", 0, 0, 10**9)
        size = _number(params, "page_size", MAX_PAGE_SIZE, 1, MAX_PAGE_SIZE)
        found = await service.memories.listing(tenant)
        shown = found[page * size : (page + 1) * size]
        return {"translation_memories": [memory_object(info) for info in shown]}

    return await handle(request, use)


@router.get("/v3/translation_memories/{translation_memory_id}")
async def one(request: Request, translation_memory_id: str, service: Service) -> Response:
    async def use(_: DeepLParams, tenant: str | None) -> Any:
        return memory_object(await _memory(service, tenant, translation_memory_id))

    return await handle(request, use)
