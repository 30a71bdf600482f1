"""Optional API keys; each key belongs to one tenant. Every API finds the tenant here, from
the key it presents where that API's clients put it: ``key_in_header`` and ``tenant_for``.
A missing or unknown key is ``Unauthorized``, which each API words in its own shape."""

from __future__ import annotations

from fastapi import Request

from dragoman.errors import Forbidden, Unauthorized


def key_in_header(request: Request, schemes: tuple[str, ...] = ("bearer",)) -> str | None:
    """The key of an ``Authorization: <scheme> <key>`` header with one of ``schemes``."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() in schemes else None


def tenant_for(request: Request, key: str | None) -> str | None:
    """The tenant of ``key``; None when authentication is off (``DRAGOMAN_API_KEYS`` unset)."""
    keys: dict[str, str] = request.app.state.tenants_by_key
    if not keys:
        return None
    tenant = keys.get(key or "")
    if tenant is None:
        raise Unauthorized("a valid 'Authorization: Bearer <key>' header is required")
    return tenant


async def tenant_of(request: Request) -> str | None:
    """``/v1``'s caller: a bearer key. Async on purpose: FastAPI runs plain-function
    dependencies in a thread pool."""
    return tenant_for(request, key_in_header(request))


async def operator_of(request: Request) -> str | None:
    """The caller's tenant, when it is an operator's (or keys are off); 403 otherwise."""
    tenant = await tenant_of(request)
    if tenant is not None and tenant not in request.app.state.service.settings.operators:
        raise Forbidden(
            f"tenant {tenant!r} may not read the fleet's figures: its key is not an "
            "operator's (DRAGOMAN_OPERATOR_TENANTS)"
        )
    return tenant
