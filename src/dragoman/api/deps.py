"""What the HTTP layer needs of the program that serves it, and typed access from a request.

``ApiParts`` is a protocol, so the API does not depend on how a program is put together:
the embedded service and ``dragoman api`` both fit it.
"""

from __future__ import annotations

from typing import Annotated, Protocol

from fastapi import Depends, Request

from dragoman.api.auth import tenant_of
from dragoman.engines import Engines
from dragoman.files import FileJobs
from dragoman.manager import BatchRequestsManager
from dragoman.metrics import Metrics
from dragoman.settings import Settings
from dragoman.store import JobStore
from dragoman.translation import TextTranslation


class ApiParts(Protocol):
    @property
    def settings(self) -> Settings: ...

    @property
    def store(self) -> JobStore: ...

    @property
    def metrics(self) -> Metrics: ...

    @property
    def engines(self) -> Engines: ...

    @property
    def manager(self) -> BatchRequestsManager: ...

    @property
    def files(self) -> FileJobs: ...

    @property
    def translation(self) -> TextTranslation: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def ready(self) -> None:
        """Raises ``TransientError`` unless the store and the bus answer."""
        ...

    def refresh_gauges(self) -> None: ...


async def service_of(request: Request) -> ApiParts:
    service: ApiParts = request.app.state.service
    return service


Service = Annotated[ApiParts, Depends(service_of)]
Tenant = Annotated[str | None, Depends(tenant_of)]
