from typing import Any

import pytest

from dragoman.bus.memory import MemoryBus
from dragoman.engines import Engines
from dragoman.jobs import BatchRequestsManager, LocalIntake
from dragoman.models import Pool
from dragoman.queue import BatchRequestsQueue
from dragoman.runtime import Runtime
from dragoman.store.sql import SqlJobStore
from tests.conftest import FakeClock, ScriptedEngine, a_manager

GPU_ENGINE = ScriptedEngine(gpu_capable=True)


def manager(settings: Any) -> BatchRequestsManager:
    runtime = Runtime(
        settings, SqlJobStore("sqlite+aiosqlite:///:memory:"), MemoryBus(), FakeClock()
    )
    return a_manager(
        runtime, Engines([ScriptedEngine()]), LocalIntake(BatchRequestsQueue(), lambda: None)
    )


@pytest.mark.parametrize(
    ("segments", "pool"), [(1, Pool.CPU), (2999, Pool.CPU), (3000, Pool.GPU), (10**6, Pool.GPU)]
)
def test_big_jobs_go_to_the_gpu_pool_when_it_has_workers(
    make_settings: Any, segments: int, pool: Pool
) -> None:
    assert manager(make_settings(gpu_max_workers=2)).route(segments, GPU_ENGINE) is pool


def test_without_gpu_workers_everything_goes_to_the_cpu_pool(make_settings: Any) -> None:
    assert manager(make_settings(gpu_max_workers=0)).route(10**6, GPU_ENGINE) is Pool.CPU


def test_the_threshold_is_configurable(make_settings: Any) -> None:
    routed = manager(make_settings(gpu_max_workers=1, gpu_threshold_segments=10))
    assert routed.route(9, GPU_ENGINE) is Pool.CPU
    assert routed.route(10, GPU_ENGINE) is Pool.GPU


def test_an_engine_without_gpus_keeps_big_jobs_on_the_cpu_pool(make_settings: Any) -> None:
    cpu_only = ScriptedEngine(gpu_capable=False)
    assert manager(make_settings(gpu_max_workers=2)).route(10**6, cpu_only) is Pool.CPU
