"""``GET /v1/fleet``: the pools, their workers and jobs, rates and failures (the dashboard).

With API keys configured only an operator's key may read it (``DRAGOMAN_OPERATOR_TENANTS``):
it shows every tenant's failures and the whole deployment's load."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import BaseModel, Field

from dragoman.api.auth import operator_of
from dragoman.api.deps import Service
from dragoman.api.errors import error_responses
from dragoman.api.v1.schemas import ErrorBody
from dragoman.fleet import FleetView, PoolView
from dragoman.models import Pool, WorkerInfo

router = APIRouter(prefix="/v1", tags=["fleet"])


class WorkersOut(BaseModel):
    desired: int | None = Field(description="What the scaler wants; null before it reports")
    current: int | None = Field(description="Running or starting, as the scaler last saw")
    scaled_at: datetime | None = Field(description="When the scaler last reported")
    live: int = Field(description="Workers in the registry")
    busy: int = Field(description="Live workers with work in hand")
    max: int = Field(description="The pool's most workers")


class JobsOut(BaseModel):
    queued: int
    in_flight: int = Field(description="Submitted or running jobs and shards")
    at_risk: int = Field(
        description="Queued or in flight jobs and shards that will miss their deadline, as "
        "the active watchdog last predicted"
    )


class RateOut(BaseModel):
    at: datetime
    value: float = Field(description="Segments per second over the preceding 10 s")


class SegmentsOut(BaseModel):
    translated: int = Field(description="By the live workers since each started")
    per_second: list[RateOut] = Field(description="Sampled every 2 s, the last 5 minutes")


class BatchesOut(BaseModel):
    count: int = Field(description="Engine calls of the live workers")
    segments: int = Field(description="Segments in those calls")
    mean_size: float | None


class RoutingOut(BaseModel):
    warm: int = Field(description="Messages sent to an idle worker with the model loaded")
    total: int = Field(description="Messages dispatched since the active watchdog started")
    hit_ratio: float | None


class WorkerOut(BaseModel):
    id: str
    host: str
    busy: bool
    warm_models: list[str]
    segments_translated: int
    batches: int
    mean_batch_size: float | None
    last_seen: datetime | None

    @classmethod
    def of(cls, worker: WorkerInfo) -> WorkerOut:
        return cls(
            id=worker.id,
            host=worker.host,
            busy=worker.busy,
            warm_models=sorted(worker.warm_pairs),
            segments_translated=worker.segments_translated,
            batches=worker.batches,
            mean_batch_size=_ratio(worker.batch_segments, worker.batches),
            last_seen=worker.last_seen,
        )


class PoolOut(BaseModel):
    pool: Pool
    workers: WorkersOut
    jobs: JobsOut
    segments: SegmentsOut
    batches: BatchesOut
    routing: RoutingOut
    registered: list[WorkerOut]

    @classmethod
    def of(cls, view: PoolView) -> PoolOut:
        return cls(
            pool=view.pool,
            workers=WorkersOut(
                desired=view.workers_desired,
                current=view.workers_current,
                scaled_at=view.scaled_at,
                live=len(view.workers),
                busy=view.busy,
                max=view.max_workers,
            ),
            jobs=JobsOut(queued=view.queued, in_flight=view.in_flight, at_risk=view.at_risk),
            segments=SegmentsOut(
                translated=view.segments_translated,
                per_second=[RateOut(at=p.at, value=p.segments_per_second) for p in view.rate],
            ),
            batches=BatchesOut(
                count=view.batches,
                segments=view.batch_segments,
                mean_size=_ratio(view.batch_segments, view.batches),
            ),
            routing=RoutingOut(
                warm=view.routed_warm,
                total=view.routed_total,
                hit_ratio=_ratio(view.routed_warm, view.routed_total),
            ),
            registered=[WorkerOut.of(worker) for worker in view.workers],
        )


class FailureOut(BaseModel):
    id: str
    tenant: str | None
    pool: Pool
    source_lang: str
    target_lang: str
    attempts: int
    finished_at: datetime | None
    error: ErrorBody


class FleetOut(BaseModel):
    at: datetime
    pools: list[PoolOut]
    failures: list[FailureOut] = Field(description="The newest failed jobs, newest first")

    @classmethod
    def of(cls, view: FleetView) -> FleetOut:
        return cls(
            at=view.at,
            pools=[PoolOut.of(pool) for pool in view.pools],
            failures=[
                FailureOut(
                    id=job.id,
                    tenant=job.tenant,
                    pool=job.pool,
                    source_lang=job.source_lang,
                    target_lang=job.target_lang,
                    attempts=job.attempts,
                    finished_at=job.finished_at,
                    error=ErrorBody(
                        code=job.error.code if job.error else "unknown",
                        message=job.error.message if job.error else "",
                    ),
                )
                for job in view.failures
            ],
        )


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@router.get("/fleet", response_model=FleetOut, responses=error_responses(401, 403, 503))
async def fleet(service: Service, _: Annotated[str | None, Depends(operator_of)]) -> FleetOut:
    """Every pool's workers, jobs, throughput, engine batches and warm routing, and the newest
    failures, as the store has them (the same from every API process)."""
    return FleetOut.of(await service.fleet.view())
