"""A served process moves what its start-up built out of the garbage collector's sight, so a
full collection scans only what came after (about 100 ms of a request's time otherwise)."""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager

import pytest
import uvicorn
from starlette.applications import Starlette

from dragoman.api.server import _Server


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def _young_collections_during(work: Callable[[], object]) -> int:
    before = gc.get_stats()[0]["collections"]
    work()
    return int(gc.get_stats()[0]["collections"] - before)


def _burst() -> None:
    """What a request does to the heap: thousands of containers made, then freed."""
    made = [[index] for index in range(5000)]
    del made


class _Watched(_Server):
    """The server, telling when its start-up (the freeze included) has ended."""

    def __init__(self, app: Starlette) -> None:
        super().__init__(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="critical"))
        self.up = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.up.set()


async def test_a_started_server_freezes_what_its_start_up_built(unfrozen: None) -> None:
    built: list[object] = []

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        built.extend(object() for _ in range(1000))  # what a service's start leaves behind
        yield

    server = _Watched(Starlette(lifespan=lifespan))
    serving = asyncio.create_task(server._serve())
    try:
        async with asyncio.timeout(10):
            await server.up.wait()
        assert server.started
        assert gc.get_freeze_count() >= len(built)
        # A request's worth of short-lived objects no longer sets off collections.
        assert _young_collections_during(_burst) == 0
    finally:
        server.should_exit = True
        await serving


async def test_a_server_whose_start_up_failed_freezes_nothing(unfrozen: None) -> None:
    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        raise RuntimeError("the store is down")
        yield

    server = _Watched(Starlette(lifespan=lifespan))
    with pytest.raises(SystemExit):
        await server._serve()
    assert not server.started
    assert gc.get_freeze_count() == 0
    assert _young_collections_during(_burst) > 0  # the collector as Python sets it
