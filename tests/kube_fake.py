"""An in-memory Kubernetes for the calls ``KubernetesController`` makes.

It keeps Deployments and their pods, answers with the client's own model objects, applies
merge patches, and plays the ReplicaSet: when a Deployment's replicas grow it adds pods (not
ready until ``make_ready``), when they drop it deletes pods in the ReplicaSet's order — not
ready first, then lower ``pod-deletion-cost``, then newest.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from kubernetes.client import (
    V1ObjectMeta,
    V1Pod,
    V1PodCondition,
    V1PodList,
    V1PodStatus,
    V1Scale,
    V1ScaleSpec,
    V1ScaleStatus,
)
from kubernetes.client.exceptions import ApiException

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
PATCH_TYPES = {"application/merge-patch+json", "application/strategic-merge-patch+json"}
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def merge_patch(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """RFC 7386: objects merge key by key, ``null`` deletes, anything else replaces."""
    result = dict(target)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = merge_patch(result.get(key) or {}, value)
        else:
            result[key] = value
    return result


@dataclass
class FakePod:
    name: str
    labels: dict[str, str]
    created: int  # creation order: higher is newer
    ready: bool = False
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def deletion_cost(self) -> int:
        try:
            return int(self.annotations.get(DELETION_COST, "0"))
        except ValueError:
            return 0

    def model(self, namespace: str) -> V1Pod:
        condition = V1PodCondition(type="Ready", status="True" if self.ready else "False")
        meta = V1ObjectMeta(
            name=self.name,
            namespace=namespace,
            labels=dict(self.labels),
            annotations=dict(self.annotations) or None,
            creation_timestamp=EPOCH + timedelta(seconds=self.created),
        )
        return V1Pod(metadata=meta, status=V1PodStatus(phase="Running", conditions=[condition]))


@dataclass
class FakeDeployment:
    name: str
    labels: dict[str, str]
    replicas: int = 0

    @property
    def selector(self) -> str:
        return ",".join(f"{key}={value}" for key, value in sorted(self.labels.items()))


class FakeCluster:
    """One namespace of Deployments and pods, reached through ``apps`` and ``core``."""

    def __init__(self, namespace: str = "dragoman") -> None:
        self.namespace = namespace
        self.deployments: dict[str, FakeDeployment] = {}
        self.pods: dict[str, FakePod] = {}
        self.calls: list[tuple[str, str]] = []  # (method, object name)
        self.threads: set[int] = set()
        self.error: ApiException | None = None  # raised by every call while set
        self.after_list: Callable[[], None] = lambda: None
        self._sequence = itertools.count()
        self.apps = FakeAppsApi(self)
        self.core = FakeCoreApi(self)

    def add_deployment(self, name: str, labels: dict[str, str], replicas: int) -> list[str]:
        """Creates a Deployment whose pods are all ready; returns their names, oldest first."""
        self.deployments[name] = FakeDeployment(name, dict(labels))
        self.set_replicas(name, replicas)
        return self.make_ready(name)

    def set_replicas(self, name: str, replicas: int) -> None:
        deployment = self.deployments[name]
        deployment.replicas = replicas
        pods = self.pods_of(name)
        for _ in range(replicas - len(pods)):
            created = next(self._sequence)
            pod_name = f"{name}-{created:05d}"
            self.pods[pod_name] = FakePod(pod_name, dict(deployment.labels), created)
        doomed = sorted(pods, key=lambda pod: (pod.ready, pod.deletion_cost, -pod.created))
        for pod in doomed[: max(0, len(pods) - replicas)]:
            del self.pods[pod.name]

    def make_ready(self, name: str) -> list[str]:
        """Marks every pod of the Deployment ready; returns their names, oldest first."""
        pods = self.pods_of(name)
        for pod in pods:
            pod.ready = True
        return [pod.name for pod in pods]

    def pods_of(self, name: str) -> list[FakePod]:
        return self._select(self.deployments[name].selector)

    def names_of(self, name: str) -> list[str]:
        return [pod.name for pod in self.pods_of(name)]

    def _select(self, selector: str) -> list[FakePod]:
        wanted = dict(term.split("=", 1) for term in selector.split(",") if term)
        pods = [pod for pod in self.pods.values() if wanted.items() <= pod.labels.items()]
        return sorted(pods, key=lambda pod: pod.created)

    def _enter(self, method: str, name: str, namespace: str) -> None:
        self.calls.append((method, name))
        self.threads.add(threading.get_ident())
        if self.error is not None:
            raise self.error
        if namespace != self.namespace:
            raise ApiException(status=404, reason="Not Found")

    def _deployment(self, name: str) -> FakeDeployment:
        if name not in self.deployments:
            raise ApiException(status=404, reason="Not Found")
        return self.deployments[name]

    def scale_of(self, name: str) -> V1Scale:
        deployment = self._deployment(name)
        return V1Scale(
            api_version="autoscaling/v1",
            kind="Scale",
            metadata=V1ObjectMeta(name=name, namespace=self.namespace),
            spec=V1ScaleSpec(replicas=deployment.replicas),
            status=V1ScaleStatus(replicas=len(self.pods_of(name)), selector=deployment.selector),
        )


def _check_patch(content_type: str | None) -> None:
    # A dict body sent as a JSON patch (a list of operations) is refused by a real server.
    if content_type not in PATCH_TYPES:
        raise ApiException(status=415, reason="Unsupported Media Type")


class FakeAppsApi:
    def __init__(self, cluster: FakeCluster) -> None:
        self._cluster = cluster

    def read_namespaced_deployment_scale(
        self, name: str, namespace: str, *, _request_timeout: float | None = None
    ) -> V1Scale:
        self._cluster._enter("read_namespaced_deployment_scale", name, namespace)
        return self._cluster.scale_of(name)

    def patch_namespaced_deployment_scale(
        self,
        name: str,
        namespace: str,
        body: dict[str, Any],
        *,
        _request_timeout: float | None = None,
        _content_type: str | None = None,
    ) -> V1Scale:
        self._cluster._enter("patch_namespaced_deployment_scale", name, namespace)
        _check_patch(_content_type)
        deployment = self._cluster._deployment(name)
        patched = merge_patch({"spec": {"replicas": deployment.replicas}}, body)
        self._cluster.set_replicas(name, int(patched["spec"]["replicas"]))
        return self._cluster.scale_of(name)


class FakeCoreApi:
    def __init__(self, cluster: FakeCluster) -> None:
        self._cluster = cluster

    def list_namespaced_pod(
        self,
        namespace: str,
        *,
        label_selector: str = "",
        _request_timeout: float | None = None,
    ) -> V1PodList:
        self._cluster._enter("list_namespaced_pod", label_selector, namespace)
        items = [pod.model(namespace) for pod in self._cluster._select(label_selector)]
        self._cluster.after_list()
        return V1PodList(api_version="v1", kind="PodList", items=items)

    def patch_namespaced_pod(
        self,
        name: str,
        namespace: str,
        body: dict[str, Any],
        *,
        _request_timeout: float | None = None,
        _content_type: str | None = None,
    ) -> V1Pod:
        self._cluster._enter("patch_namespaced_pod", name, namespace)
        _check_patch(_content_type)
        pod = self._cluster.pods.get(name)
        if pod is None:
            raise ApiException(status=404, reason="Not Found")
        meta = {"labels": pod.labels, "annotations": pod.annotations}
        patched = merge_patch({"metadata": meta}, body)["metadata"]
        pod.labels = dict(patched.get("labels") or {})
        pod.annotations = dict(patched.get("annotations") or {})
        return pod.model(namespace)
