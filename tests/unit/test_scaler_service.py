"""``dragoman scaler`` needs the store only: it starts and is ready with no broker at all."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from dragoman.models import Pool, WorkerInfo
from dragoman.scaling import WorkerSource
from dragoman.services import ScalerService
from tests.conftest import stop_service

NO_BROKER = "amqp://guest:guest@127.0.0.1:1/"  # nothing listens on port 1


class Fixed:
    """A controller that only counts."""

    def __init__(self) -> None:
        self.size = 0
        self.closed = False

    async def replicas(self) -> int:
        return self.size

    async def scale(self, replicas: int, remove: Sequence[WorkerInfo] = ()) -> None:
        self.size = replicas

    async def close(self) -> None:
        self.closed = True


async def test_the_scaler_runs_and_is_ready_without_a_broker(make_settings: Any) -> None:
    controller = Fixed()

    def make(_: WorkerSource) -> Fixed:
        return controller

    service = ScalerService(make_settings(broker_url=NO_BROKER), Pool.CPU, make)
    await asyncio.wait_for(service.start(), 10)
    try:
        await asyncio.wait_for(service.wait_started(), 10)
        await asyncio.wait_for(service.ready(), 10)
        assert service.alive()
    finally:
        await stop_service(service)
    assert controller.closed
