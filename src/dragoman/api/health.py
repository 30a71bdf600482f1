"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from dragoman.api.deps import Service
from dragoman.errors import StoreUnavailable, TransientError

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(service: Service) -> dict[str, str]:
    """The store and the bus answer; 503 otherwise."""
    await service.store.ping()
    try:
        await service.bus.ping()
    except Exception as exc:
        raise TransientError(f"message bus unavailable: {exc}") from None
    return {"status": "ready"}


@router.get("/metrics")
async def metrics(service: Service) -> Response:
    try:
        counts = await service.store.counts()
    except StoreUnavailable:
        counts = {}
    for status, count in counts.items():
        service.metrics.jobs.labels(status.value).set(count)
    service.refresh_gauges()
    return Response(generate_latest(service.metrics.registry), media_type=CONTENT_TYPE_LATEST)
