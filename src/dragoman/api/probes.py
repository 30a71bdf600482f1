"""Health, readiness and metrics for the processes without the public API (watchdog, worker)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

from fastapi import FastAPI, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from dragoman import __version__
from dragoman.api.errors import install_error_handlers
from dragoman.errors import TransientError
from dragoman.metrics import Metrics


class Probed(Protocol):
    """What the probe app needs of a program (every one in ``dragoman.services`` fits)."""

    @property
    def metrics(self) -> Metrics: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def alive(self) -> bool: ...

    async def ready(self) -> None:
        """Raises ``TransientError`` unless what the program depends on answers."""
        ...

    def refresh_gauges(self) -> None: ...


def create_probe_app(service: Probed, *, role: str) -> FastAPI:
    """``/healthz`` (the process and its main task live), ``/readyz`` (what the program
    depends on answers: the store and the bus; for the scaler, the store) and ``/metrics``;
    the app's lifespan starts and stops ``service``."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await service.start()
        try:
            yield
        finally:
            await service.stop()

    app = FastAPI(title=f"dragoman {role}", version=__version__, lifespan=lifespan)
    install_error_handlers(app)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        if not service.alive():
            raise TransientError(f"the {role} stopped working")
        return {"status": "ok", "role": role}

    @app.get("/readyz")
    async def readyz() -> dict[str, str]:
        await service.ready()
        return {"status": "ready", "role": role}

    @app.get("/metrics")
    async def metrics() -> Response:
        service.refresh_gauges()
        return Response(generate_latest(service.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app
