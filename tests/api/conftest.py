"""The API in process, over the real Apertium engine and a SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from dragoman.api.app import create_app
from dragoman.services import EmbeddedService
from tests.conftest import stop_service


@pytest.fixture
async def make_client(make_settings: Any) -> AsyncIterator[Any]:
    services: list[EmbeddedService] = []
    clients: list[httpx.AsyncClient] = []

    async def make(**overrides: Any) -> httpx.AsyncClient:
        service = EmbeddedService(make_settings(**overrides))
        await service.start()
        services.append(service)
        app = create_app(service, manage_lifecycle=False)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
    for service in services:
        await stop_service(service)


@pytest.fixture
async def client(make_client: Any) -> httpx.AsyncClient:
    made: httpx.AsyncClient = await make_client()
    return made
