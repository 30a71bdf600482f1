"""The FastAPI application over a running service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from dragoman import __version__
from dragoman.api import deepl, health, libretranslate
from dragoman.api.deps import ApiParts
from dragoman.api.errors import install_error_handlers
from dragoman.api.idempotency import IdempotentPosts
from dragoman.api.limits import BodyLimit
from dragoman.api.openapi import add_bodies, tailor_openapi
from dragoman.api.v1 import files, fleet, glossaries, jobs, memories, translate
from dragoman.api.v1.files import FilesJobIn
from dragoman.api.v1.glossaries import GlossaryFileIn, GlossaryIn
from dragoman.api.v1.schemas import JobIn
from dragoman.api.web import Site, web_router


def create_app(service: ApiParts, *, manage_lifecycle: bool = True) -> FastAPI:
    """The API for ``service``; with ``manage_lifecycle`` the app starts and stops it."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if manage_lifecycle:
            await service.start()
        service.fleet.start()
        try:
            yield
        finally:
            await service.fleet.stop()
            if manage_lifecycle:
                await service.stop()

    app = FastAPI(
        title="dragoman",
        version=__version__,
        description="Batch machine translation: jobs in, warm engines, exact results out.",
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.tenants_by_key = service.settings.tenants_by_key
    install_error_handlers(app)
    # The last added runs first: a body over the limit is refused before anything else.
    app.add_middleware(IdempotentPosts)
    app.add_middleware(BodyLimit, max_bytes=service.settings.max_request_bytes)
    app.include_router(jobs.router)
    app.include_router(files.router)
    app.include_router(memories.router)
    app.include_router(translate.router)
    app.include_router(glossaries.router)
    app.include_router(health.router)
    app.include_router(libretranslate.router)
    app.include_router(deepl.router)
    app.include_router(fleet.router)
    app.include_router(web_router(Site()))

    def openapi() -> dict[str, Any]:
        """The description of this deployment, made on first use (the engines are up)."""
        if app.openapi_schema is None:
            generic = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            add_bodies(generic, JobIn, FilesJobIn, GlossaryIn, GlossaryFileIn)
            app.openapi_schema = tailor_openapi(
                generic, pairs=service.engines.languages(), settings=service.settings
            )
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app
