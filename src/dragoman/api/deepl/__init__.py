"""DeepL's API v2 (and v3's glossaries) over dragoman: ``params`` reads its requests and
keys, ``errors`` words dragoman's refusals in its shape, ``text``/``tags``/``documents``/
``glossaries`` do its use cases with dragoman's, ``routes`` answers them, ``multilingual``
answers ``/v3/glossaries``, ``memories`` ``/v3/translation_memories``."""

from fastapi import APIRouter

from dragoman.api.deepl import glossaries, memories, multilingual, routes

router = APIRouter()
router.include_router(glossaries.router)  # before the catch-all /v2 404 of ``routes``
router.include_router(routes.router)
router.include_router(memories.router)  # before the catch-all /v3 404 of ``multilingual``
router.include_router(multilingual.router)

__all__ = ["router"]
