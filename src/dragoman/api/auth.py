"""Optional bearer API keys; each key belongs to one tenant."""

from __future__ import annotations

from fastapi import Request

from dragoman.errors import Unauthorized


async def tenant_of(request: Request) -> str | None:
    """The caller's tenant, or None when authentication is off (``DRAGOMAN_API_KEYS`` unset).

    Async on purpose: FastAPI runs plain-function dependencies in a thread pool."""
    keys: dict[str, str] = request.app.state.tenants_by_key
    if not keys:
        return None
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    tenant = keys.get(token.strip()) if scheme.lower() == "bearer" else None
    if tenant is None:
        raise Unauthorized("a valid 'Authorization: Bearer <key>' header is required")
    return tenant
