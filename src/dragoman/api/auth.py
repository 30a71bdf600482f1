"""Optional bearer API keys; each key belongs to one tenant."""

from __future__ import annotations

from fastapi import Request

from dragoman.errors import Forbidden, Unauthorized


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


async def operator_of(request: Request) -> str | None:
    """The caller's tenant, when it is an operator's (or keys are off); 403 otherwise."""
    tenant = await tenant_of(request)
    if tenant is not None and tenant not in request.app.state.service.settings.operators:
        raise Forbidden(
            f"tenant {tenant!r} may not read the fleet's figures: its key is not an "
            "operator's (DRAGOMAN_OPERATOR_TENANTS)"
        )
    return tenant
