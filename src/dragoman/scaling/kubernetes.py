"""The Kubernetes backend: one pool is one Deployment, sized through its scale subresource.

Before a scale-down, each of the pool's pods gets a ``controller.kubernetes.io/pod-deletion-cost``
so that the ReplicaSet takes the policy's victims first, then other idle pods, and busy pods
last. The official client is synchronous: every call runs in a thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ParamSpec, Protocol, TypeVar

from kubernetes import client, config
from kubernetes.client import V1Pod, V1PodList, V1Scale
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from dragoman.errors import TransientError
from dragoman.models import Pool, WorkerInfo

log = logging.getLogger(__name__)

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
COST_REMOVE = -1000  # the workers the policy named
COST_IDLE = 0  # idle, or not registered yet (no job we know of)
COST_BUSY = 1000
MERGE_PATCH = "application/merge-patch+json"
NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")

WorkerSource = Callable[[], Awaitable[Iterable[WorkerInfo]]]
P = ParamSpec("P")
T = TypeVar("T")


class AppsApi(Protocol):
    """The calls of ``kubernetes.client.AppsV1Api`` this backend makes."""

    def read_namespaced_deployment_scale(
        self, name: str, namespace: str, *, _request_timeout: float = ...
    ) -> V1Scale: ...

    def patch_namespaced_deployment_scale(
        self,
        name: str,
        namespace: str,
        body: dict[str, Any],
        *,
        _request_timeout: float = ...,
        _content_type: str = ...,
    ) -> V1Scale: ...


class CoreApi(Protocol):
    """The calls of ``kubernetes.client.CoreV1Api`` this backend makes."""

    def list_namespaced_pod(
        self, namespace: str, *, label_selector: str = ..., _request_timeout: float = ...
    ) -> V1PodList: ...

    def patch_namespaced_pod(
        self,
        name: str,
        namespace: str,
        body: dict[str, Any],
        *,
        _request_timeout: float = ...,
        _content_type: str = ...,
    ) -> V1Pod: ...


async def _no_workers() -> Iterable[WorkerInfo]:
    return ()


class KubernetesController:
    """``ReplicaController`` over one Deployment's ``scale`` subresource."""

    def __init__(
        self,
        *,
        apps: AppsApi,
        core: CoreApi,
        namespace: str,
        deployment: str,
        workers: WorkerSource = _no_workers,
        request_timeout_s: float = 10.0,
    ) -> None:
        self._apps = apps
        self._core = core
        self.namespace = namespace
        self.deployment = deployment
        self._workers = workers
        self._timeout_s = request_timeout_s

    async def replicas(self) -> int:
        """The Deployment's desired replicas: pods running or starting."""
        scale = await self._read_scale()
        return (scale.spec.replicas if scale.spec else None) or 0

    async def scale(self, replicas: int, remove: Sequence[WorkerInfo] = ()) -> None:
        """Patches the scale subresource; before a scale-down, ranks the pods for deletion."""
        if replicas < 0:
            raise ValueError(f"replicas must be >= 0, not {replicas}")
        current = await self._read_scale()
        now = (current.spec.replicas if current.spec else None) or 0
        if replicas == now:
            return
        if replicas < now:
            await self._rank_pods(current.status.selector if current.status else None, remove)
        log.info("scaling deployment %s from %d to %d", self.deployment, now, replicas)
        await self._call(
            self._apps.patch_namespaced_deployment_scale,
            self.deployment,
            self.namespace,
            {"spec": {"replicas": replicas}},
            _request_timeout=self._timeout_s,
            _content_type=MERGE_PATCH,
        )

    async def close(self) -> None:
        """Nothing to let go of: the Deployment keeps its pods when the scaler stops."""

    async def _read_scale(self) -> V1Scale:
        return await self._call(
            self._apps.read_namespaced_deployment_scale,
            self.deployment,
            self.namespace,
            _request_timeout=self._timeout_s,
        )

    async def _rank_pods(self, selector: str | None, remove: Sequence[WorkerInfo]) -> None:
        if not selector:
            # An empty selector would list every pod of the namespace: rank none.
            log.warning("deployment %s has no selector; pods not ranked", self.deployment)
            return
        pods = await self._call(
            self._core.list_namespaced_pod,
            self.namespace,
            label_selector=selector,
            _request_timeout=self._timeout_s,
        )
        costs = pod_costs(remove, await self._workers())
        for pod in pods.items:
            meta = pod.metadata
            if meta is None or meta.name is None or meta.deletion_timestamp is not None:
                continue
            cost = str(costs.get(meta.name, COST_IDLE))
            if (meta.annotations or {}).get(DELETION_COST) != cost:
                await self._annotate(meta.name, cost)

    async def _annotate(self, pod: str, cost: str) -> None:
        body = {"metadata": {"annotations": {DELETION_COST: cost}}}
        try:
            await asyncio.to_thread(
                self._core.patch_namespaced_pod,
                pod,
                self.namespace,
                body,
                _request_timeout=self._timeout_s,
                _content_type=MERGE_PATCH,
            )
        except ApiException as exc:
            if exc.status != 404:  # a pod gone since the listing needs no rank
                raise _unavailable(exc) from None
        except HTTPError as exc:
            raise _unavailable(exc) from None

    async def _call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except (ApiException, HTTPError) as exc:
            raise _unavailable(exc) from None


def pod_costs(remove: Iterable[WorkerInfo], workers: Iterable[WorkerInfo]) -> dict[str, int]:
    """Deletion cost by pod name (a worker's host); pods not named here are idle."""
    costs = {worker.host: COST_BUSY for worker in workers if worker.busy}
    costs.update((worker.host, COST_REMOVE) for worker in remove)
    return costs


def _unavailable(exc: ApiException | HTTPError) -> TransientError:
    if isinstance(exc, HTTPError):
        return TransientError(f"Kubernetes API unreachable: {exc}")
    message = f"Kubernetes API answered {exc.status} {exc.reason}"
    try:  # a Status object says which object and which permission
        detail = json.loads(exc.body or "")["message"]
    except (ValueError, KeyError, TypeError):
        return TransientError(message)
    return TransientError(f"{message}: {detail}")


def worker_deployment(pool: Pool) -> str:
    """The name of the Deployment that runs the pool's workers: the Helm chart's
    (``deploy/helm/dragoman``) for a release named ``dragoman``."""
    return f"dragoman-worker-{pool}"


def kubernetes_controller(
    pool: Pool,
    *,
    deployment: str | None = None,
    namespace: str | None = None,
    kubeconfig: str | None = None,
    workers: WorkerSource = _no_workers,
) -> KubernetesController:
    """Builds the controller of ``dragoman-worker-<pool>``, authenticated by the pod's service
    account when in a cluster, else by the kubeconfig (``KUBECONFIG`` or ``~/.kube/config``)."""
    configuration = client.Configuration()
    try:
        config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        namespace = namespace or NAMESPACE_FILE.read_text().strip()
    except config.ConfigException:
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig, client_configuration=configuration
        )
        namespace = namespace or _kubeconfig_namespace(kubeconfig)
    api = client.ApiClient(configuration)
    return KubernetesController(
        apps=client.AppsV1Api(api),
        core=client.CoreV1Api(api),
        namespace=namespace,
        deployment=deployment or worker_deployment(pool),
        workers=workers,
    )


def _kubeconfig_namespace(kubeconfig: str | None) -> str:
    _, current = config.list_kube_config_contexts(config_file=kubeconfig)  # type: ignore[no-untyped-call]
    namespace = current.get("context", {}).get("namespace")
    return str(namespace) if namespace else "default"
