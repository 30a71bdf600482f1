"""What the HTTP layer needs of the program that serves it, and typed access from a request.

``ApiParts`` is a protocol, so the API does not depend on how a program is put together:
the embedded service and ``dragoman api`` both fit it. It has no store: the routes reach
the data through the use cases (the manager, file jobs, the features, the fleet view).
"""

from __future__ import annotations

from typing import Annotated, Protocol

from fastapi import Depends, Request

from dragoman.api.auth import tenant_of
from dragoman.engines import Engines
from dragoman.fleet import Fleet
from dragoman.glossaries import Terminology
from dragoman.idempotency import IdempotentRequests
from dragoman.jobs import BatchRequestsManager
from dragoman.jobs.files import FileJobs
from dragoman.metrics import Metrics
from dragoman.reuse import Reuse
from dragoman.reuse.memories import TranslationMemories
from dragoman.settings import Settings
from dragoman.translation import TextTranslation
from dragoman.usage import UsageMeter


class ApiParts(Protocol):
    @property
    def settings(self) -> Settings: ...

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

    @property
    def usage(self) -> UsageMeter: ...

    @property
    def terminology(self) -> Terminology: ...

    @property
    def memories(self) -> TranslationMemories: ...

    @property
    def reuse(self) -> Reuse: ...

    @property
    def fleet(self) -> Fleet: ...

    @property
    def idempotency(self) -> IdempotentRequests: ...

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
