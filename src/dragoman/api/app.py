"""The FastAPI application over a running service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from dragoman import __version__
from dragoman.api import health, jobs, translate
from dragoman.api.errors import install_error_handlers
from dragoman.api.limits import BodyLimit
from dragoman.services import ApiService


def create_app(service: ApiService, *, manage_lifecycle: bool = True) -> FastAPI:
    """The API for ``service``; with ``manage_lifecycle`` the app starts and stops it."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if manage_lifecycle:
            await service.start()
        try:
            yield
        finally:
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
    app.add_middleware(BodyLimit, max_bytes=service.settings.max_request_bytes)
    app.include_router(jobs.router)
    app.include_router(translate.router)
    app.include_router(health.router)
    return app
