"""LibreTranslate 1.9's API over dragoman: ``params`` reads its requests, ``errors`` words
dragoman's refusals in its shape, ``routes`` calls the same use cases as ``/v1``."""

from dragoman.api.libretranslate.routes import router

__all__ = ["router"]
