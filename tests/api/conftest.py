"""The API in process, over the real Apertium engine and a SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dragoman.api.app import create_app
from dragoman.engines import Engines
from dragoman.services import EmbeddedService
from tests.conftest import stop_service


@pytest.fixture
async def serve(make_settings: Any) -> AsyncIterator[Any]:
    """``serve(engines=None, **settings)``: a started service and a client of its API;
    several may share a database (a restarted process). All are stopped at the end."""
    services: list[EmbeddedService] = []
    clients: list[httpx.AsyncClient] = []

    async def make(
        engines: Engines | None = None, **overrides: Any
    ) -> tuple[EmbeddedService, httpx.AsyncClient]:
        service = EmbeddedService(make_settings(**overrides), engines=engines)
        await service.start()
        services.append(service)
        app = create_app(service, manage_lifecycle=False)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
        clients.append(client)
        return service, client

    yield make
    for client in clients:
        await client.aclose()
    for service in services:
        await stop_service(service)


@pytest.fixture
async def make_client(serve: Any) -> Any:
    async def make(**overrides: Any) -> httpx.AsyncClient:
        _, client = await serve(**overrides)
        return client

    return make


@pytest.fixture
async def client(make_client: Any) -> httpx.AsyncClient:
    made: httpx.AsyncClient = await make_client()
    return made
