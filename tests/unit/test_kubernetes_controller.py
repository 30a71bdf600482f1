"""The Kubernetes controller against an in-memory cluster that plays the ReplicaSet."""

from __future__ import annotations

import threading
from collections.abc import Iterable

import pytest
from kubernetes.client.exceptions import ApiException

from dragoman.errors import TransientError
from dragoman.models import Pool, WorkerInfo
from dragoman.scaling import ReplicaController
from dragoman.scaling.kubernetes import (
    COST_BUSY,
    COST_IDLE,
    COST_REMOVE,
    DELETION_COST,
    KubernetesController,
    pod_costs,
)
from tests.kube_fake import FakeCluster

CPU = "dragoman-worker-cpu"
GPU = "dragoman-worker-gpu"
LABELS = {"app.kubernetes.io/component": "worker", "app.kubernetes.io/name": "dragoman"}


def worker(host: str, *, busy: bool = False) -> WorkerInfo:
    return WorkerInfo(id=f"w-{host}", pool=Pool.CPU, host=host, busy=busy)


class Registry:
    """The workers the scaler would see in the store."""

    def __init__(self) -> None:
        self.workers: list[WorkerInfo] = []

    async def __call__(self) -> Iterable[WorkerInfo]:
        return list(self.workers)


@pytest.fixture
def cluster() -> FakeCluster:
    cluster = FakeCluster()
    cluster.add_deployment(CPU, {**LABELS, "dragoman.io/pool": "cpu"}, replicas=4)
    cluster.add_deployment(GPU, {**LABELS, "dragoman.io/pool": "gpu"}, replicas=2)
    cluster.calls.clear()
    return cluster


@pytest.fixture
def registry() -> Registry:
    return Registry()


@pytest.fixture
def controller(cluster: FakeCluster, registry: Registry) -> KubernetesController:
    return KubernetesController(
        apps=cluster.apps,
        core=cluster.core,
        namespace=cluster.namespace,
        deployment=CPU,
        workers=registry,
    )


def patched_pods(cluster: FakeCluster) -> list[str]:
    return [name for method, name in cluster.calls if method == "patch_namespaced_pod"]


def test_it_is_a_replica_controller(controller: KubernetesController) -> None:
    replica_controller: ReplicaController = controller
    assert replica_controller is controller


async def test_replicas_are_the_deployments_desired_count(
    cluster: FakeCluster, controller: KubernetesController
) -> None:
    assert await controller.replicas() == 4
    cluster.set_replicas(CPU, 6)  # starting pods count too
    assert await controller.replicas() == 6


async def test_scaling_up_adds_pods_and_ranks_none(
    cluster: FakeCluster, controller: KubernetesController
) -> None:
    await controller.scale(7)
    assert len(cluster.pods_of(CPU)) == 7
    assert await controller.replicas() == 7
    assert patched_pods(cluster) == []
    assert "list_namespaced_pod" not in {method for method, _ in cluster.calls}


async def test_scaling_to_the_current_size_patches_nothing(
    cluster: FakeCluster, controller: KubernetesController
) -> None:
    await controller.scale(4, remove=[worker(cluster.names_of(CPU)[0])])
    assert [method for method, _ in cluster.calls] == ["read_namespaced_deployment_scale"]


async def test_scaling_down_removes_the_named_workers_even_the_oldest(
    cluster: FakeCluster, controller: KubernetesController
) -> None:
    oldest, second, third, newest = cluster.names_of(CPU)
    await controller.scale(2, remove=[worker(oldest), worker(third)])
    assert cluster.names_of(CPU) == [second, newest]


async def test_busy_pods_outlive_idle_ones_beyond_the_named_victims(
    cluster: FakeCluster, controller: KubernetesController, registry: Registry
) -> None:
    first, second, third, newest = cluster.names_of(CPU)
    registry.workers = [worker(first), worker(second), worker(third, busy=True)]
    registry.workers.append(worker(newest, busy=True))
    await controller.scale(2, remove=[worker(second)])
    # Without ranks the ReplicaSet would take the newest two; here the idle one goes next.
    assert cluster.names_of(CPU) == [third, newest]
    costs = {pod.name: pod.annotations[DELETION_COST] for pod in cluster.pods_of(CPU)}
    assert costs == {third: str(COST_BUSY), newest: str(COST_BUSY)}


async def test_pods_the_registry_does_not_know_rank_as_idle(
    cluster: FakeCluster, controller: KubernetesController, registry: Registry
) -> None:
    first, _, _, newest = cluster.names_of(CPU)
    registry.workers = [worker(first, busy=True), worker(newest, busy=True)]
    await controller.scale(2)
    assert cluster.names_of(CPU) == [first, newest]


async def test_starting_pods_go_before_ready_ones(
    cluster: FakeCluster, controller: KubernetesController, registry: Registry
) -> None:
    ready = cluster.names_of(CPU)
    registry.workers = [worker(name) for name in ready]
    cluster.set_replicas(CPU, 6)
    await controller.scale(4)
    assert cluster.names_of(CPU) == ready


async def test_only_the_pools_own_pods_are_ranked(
    cluster: FakeCluster, controller: KubernetesController
) -> None:
    cpu_pods, gpu_pods = cluster.names_of(CPU), cluster.names_of(GPU)
    await controller.scale(1)
    assert sorted(patched_pods(cluster)) == cpu_pods
    assert cluster.names_of(GPU) == gpu_pods
    assert all(DELETION_COST not in pod.annotations for pod in cluster.pods_of(GPU))


async def test_ranks_already_in_place_are_not_patched_again(
    cluster: FakeCluster, controller: KubernetesController, registry: Registry
) -> None:
    first, second, third, newest = cluster.names_of(CPU)
    registry.workers = [worker(first, busy=True)]
    await controller.scale(3, remove=[worker(newest)])
    assert sorted(patched_pods(cluster)) == [first, second, third, newest]
    cluster.calls.clear()
    await controller.scale(2, remove=[worker(third)])
    assert patched_pods(cluster) == [third]
    assert cluster.names_of(CPU) == [first, second]


async def test_a_pod_gone_before_its_rank_does_not_stop_the_scale_down(
    cluster: FakeCluster, controller: KubernetesController
) -> None:
    first, second, _, _ = cluster.names_of(CPU)

    def delete_first() -> None:
        del cluster.pods[first]

    cluster.after_list = delete_first
    await controller.scale(2, remove=[worker(first), worker(second)])
    assert await controller.replicas() == 2
    assert first not in cluster.names_of(CPU)
    assert second not in cluster.names_of(CPU)


@pytest.mark.parametrize("status", [403, 404, 409, 500])
async def test_api_errors_become_transient_errors(
    cluster: FakeCluster, controller: KubernetesController, status: int
) -> None:
    cluster.error = ApiException(status=status, reason="Nope")
    with pytest.raises(TransientError, match=f"{status} Nope"):
        await controller.scale(2)
    with pytest.raises(TransientError):
        await controller.replicas()
    cluster.error = None
    assert await controller.replicas() == 4


async def test_a_refused_pod_patch_stops_before_the_scale_down(
    cluster: FakeCluster, controller: KubernetesController
) -> None:
    def forbid_patches() -> None:
        cluster.error = ApiException(status=403, reason="Forbidden")

    cluster.after_list = forbid_patches
    with pytest.raises(TransientError, match="403 Forbidden"):
        await controller.scale(2)
    cluster.error = None
    assert await controller.replicas() == 4


async def test_negative_replicas_are_refused(controller: KubernetesController) -> None:
    with pytest.raises(ValueError, match="replicas"):
        await controller.scale(-1)


async def test_api_calls_run_off_the_event_loop(
    cluster: FakeCluster, controller: KubernetesController
) -> None:
    await controller.scale(1)
    assert cluster.threads
    assert threading.get_ident() not in cluster.threads


def test_named_victims_rank_lowest_then_idle_then_busy() -> None:
    costs = pod_costs(
        remove=[worker("a"), worker("b")],
        workers=[worker("a"), worker("b", busy=True), worker("c"), worker("d", busy=True)],
    )
    assert costs == {"a": COST_REMOVE, "b": COST_REMOVE, "d": COST_BUSY}
    assert COST_REMOVE < COST_IDLE < COST_BUSY


def test_the_fake_deletes_not_ready_then_cheapest_then_newest() -> None:
    cluster = FakeCluster()
    a, b, c, d = cluster.add_deployment("w", {"app": "w"}, replicas=4)
    cluster.pods[a].annotations[DELETION_COST] = "-5"
    cluster.pods[c].annotations[DELETION_COST] = "7"
    cluster.set_replicas("w", 5)  # a fifth pod, not ready yet
    survivors = []
    for replicas in (4, 3, 2, 1):
        cluster.set_replicas("w", replicas)
        survivors.append(cluster.names_of("w"))
    assert survivors == [[a, b, c, d], [b, c, d], [b, c], [c]]
