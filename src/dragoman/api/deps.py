"""Typed access to the running service from a request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from dragoman.api.auth import tenant_of
from dragoman.services import ApiService


async def service_of(request: Request) -> ApiService:
    service: ApiService = request.app.state.service
    return service


Service = Annotated[ApiService, Depends(service_of)]
Tenant = Annotated[str | None, Depends(tenant_of)]
