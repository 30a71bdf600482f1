"""The ``ReplicaController`` contract, run against every implementation: in-process worker
tasks, local worker processes, and Kubernetes (the in-memory cluster that plays the
ReplicaSet)."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol

import pytest

from dragoman.bus.memory import MemoryBus
from dragoman.clock import SystemClock
from dragoman.engines import Engines
from dragoman.models import Pool, WorkerInfo
from dragoman.runtime import Runtime
from dragoman.scaling import ReplicaController
from dragoman.scaling.inprocess import InProcessController
from dragoman.scaling.kubernetes import KubernetesController
from dragoman.scaling.process import ProcessController
from dragoman.settings import Settings
from dragoman.store.sql import SqlJobStore
from dragoman.worker import BatchWorker
from tests.conftest import ScriptedEngine, a_worker
from tests.kube_fake import FakeCluster

DEPLOYMENT = "dragoman-worker-cpu"


class Harness(Protocol):
    controller: ReplicaController

    def members(self) -> list[WorkerInfo]:
        """The pool's workers now, as the registry describes them."""
        ...

    async def close(self) -> None: ...


class InProcess:
    def __init__(self, tmp_path: Path) -> None:
        settings = Settings(data_dir=tmp_path, worker_host="h", heartbeat_interval_s=1)
        self.store = SqlJobStore(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
        runtime = Runtime(settings, self.store, MemoryBus(), SystemClock())
        engines = Engines([ScriptedEngine()])

        def make(name: str) -> BatchWorker:
            return a_worker(runtime, name=name, pool=Pool.CPU, engines=engines)

        self.impl: InProcessController[BatchWorker] = InProcessController(make, prefix="cpu")
        self.controller: ReplicaController = self.impl

    def members(self) -> list[WorkerInfo]:
        return [WorkerInfo(w.name, Pool.CPU, "h", busy=False) for w in self.impl.workers]

    async def close(self) -> None:
        await self.impl.close()
        await self.store.close()


class Processes:
    def __init__(self, tmp_path: Path) -> None:
        env = {
            **os.environ,
            "DRAGOMAN_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}",
            "DRAGOMAN_BROKER_URL": "memory://",
        }
        self.impl = ProcessController(Pool.CPU, env=env, log_dir=tmp_path)
        self.controller: ReplicaController = self.impl

    def members(self) -> list[WorkerInfo]:
        host = socket.gethostname()
        return [
            WorkerInfo(f"cpu-{host}-{pid}", Pool.CPU, host, busy=False, pid=pid)
            for pid in self.impl.pids
        ]

    async def close(self) -> None:
        await self.impl.close(drain=False)


class Kubernetes:
    def __init__(self, _: Path) -> None:
        self.cluster = FakeCluster()
        labels = {"app.kubernetes.io/component": "worker", "dragoman.io/pool": "cpu"}
        self.cluster.add_deployment(DEPLOYMENT, labels, replicas=0)

        async def registry() -> list[WorkerInfo]:
            return self.members()

        self.controller: ReplicaController = KubernetesController(
            apps=self.cluster.apps,
            core=self.cluster.core,
            namespace=self.cluster.namespace,
            deployment=DEPLOYMENT,
            workers=registry,
        )

    def members(self) -> list[WorkerInfo]:
        return [
            WorkerInfo(f"w-{name}", Pool.CPU, name, busy=False)
            for name in self.cluster.names_of(DEPLOYMENT)
        ]

    async def close(self) -> None:
        return None


@pytest.fixture(params=["inprocess", "process", "kubernetes"])
async def harness(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Harness]:
    kinds = {"inprocess": InProcess, "process": Processes, "kubernetes": Kubernetes}
    made: Harness = kinds[request.param](tmp_path)
    yield made
    await made.close()


async def test_scaling_up_adds_workers_at_once(harness: Harness) -> None:
    await harness.controller.scale(3)
    assert await harness.controller.replicas() == 3
    assert len(harness.members()) == 3


async def test_scaling_down_removes_the_named_workers(harness: Harness) -> None:
    await harness.controller.scale(3)
    first, second, third = harness.members()
    await harness.controller.scale(1, [first, third])
    assert await harness.controller.replicas() == 1
    assert [w.id for w in harness.members()] == [second.id]


async def test_scaling_down_without_names_still_reaches_the_size(harness: Harness) -> None:
    await harness.controller.scale(2)
    await harness.controller.scale(0)
    assert await harness.controller.replicas() == 0
    assert harness.members() == []


async def test_the_same_size_changes_nothing(harness: Harness) -> None:
    await harness.controller.scale(2)
    before = [w.id for w in harness.members()]
    await harness.controller.scale(2)
    assert [w.id for w in harness.members()] == before


async def test_a_negative_size_is_refused(harness: Harness) -> None:
    with pytest.raises(ValueError):
        await harness.controller.scale(-1)
