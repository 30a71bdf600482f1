"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from dragoman.api.deps import Service
from dragoman.api.errors import error_responses
from dragoman.api.v1.schemas import HealthOut, ReadyOut
from dragoman.errors import StoreUnavailable

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=HealthOut)
async def healthz() -> HealthOut:
    """The process is up."""
    return HealthOut(status="ok")


@router.get("/readyz", response_model=ReadyOut, responses=error_responses(503))
async def readyz(service: Service) -> ReadyOut:
    """The store and the bus answer; 503 otherwise."""
    await service.ready()
    return ReadyOut(status="ready")


@router.get(
    "/metrics",
    response_class=PlainTextResponse,
    responses={
        200: {
            "description": f"Prometheus text exposition format ({CONTENT_TYPE_LATEST})",
            "content": {"text/plain": {"schema": {"type": "string"}}},
        }
    },
)
async def metrics(service: Service) -> Response:
    """Every series of this process, in the Prometheus text format (not JSON)."""
    try:
        counts = await service.manager.counts()
    except StoreUnavailable:
        counts = {}
    for status, count in counts.items():
        service.metrics.jobs.labels(status.value).set(count)
    service.refresh_gauges()
    return Response(generate_latest(service.metrics.registry), media_type=CONTENT_TYPE_LATEST)
