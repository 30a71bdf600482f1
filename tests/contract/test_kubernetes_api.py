"""The real Kubernetes client, driven by the controller, against a mock API server (kmock):
the exact paths, methods, content types and bodies it sends, and its parsing of answers."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kmock
import pytest
import yaml
from kubernetes import client

from dragoman.errors import TransientError
from dragoman.models import Pool, WorkerInfo
from dragoman.scaling import kubernetes as kube
from dragoman.scaling.kubernetes import KubernetesController, kubernetes_controller

pytestmark = pytest.mark.kmock(cls=kmock.KubernetesScaffold)

NS = "dragoman"
DEPLOYMENT = "dragoman-worker-cpu"
SCALE = f"/apis/apps/v1/namespaces/{NS}/deployments/{DEPLOYMENT}/scale"
PODS = f"/api/v1/namespaces/{NS}/pods"
SELECTOR = "app.kubernetes.io/component=worker,app.kubernetes.io/name=dragoman,dragoman.io/pool=cpu"
COST = "controller.kubernetes.io/pod-deletion-cost"
MERGE_PATCH = "application/merge-patch+json"


def scale_object(replicas: int, namespace: str = NS, name: str = DEPLOYMENT) -> dict[str, Any]:
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": "42"},
        "spec": {"replicas": replicas},
        "status": {"replicas": replicas, "selector": SELECTOR},
    }


def pod_object(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": NS, "labels": {"app": "x"}}
    if annotations:
        metadata["annotations"] = annotations
    spec = {"containers": [{"name": "worker", "image": "dragoman:latest"}]}
    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    return {"kind": "Pod", "apiVersion": "v1", "metadata": metadata, "spec": spec, "status": status}


def status_object(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def calls(server: kmock.RawHandler) -> list[tuple[str, str]]:
    return [(request.method.value, request.url.path_qs) for request in server]


def patches(server: kmock.RawHandler) -> list[tuple[str, str | None, Any]]:
    return [
        (request.url.path, request.headers.get("Content-Type"), request.data)
        for request in server
        if request.method == kmock.method.PATCH
    ]


@pytest.fixture
def api(kmock: kmock.RawHandler) -> Iterator[client.ApiClient]:
    configuration = client.Configuration(host=str(kmock.url).rstrip("/"))
    with client.ApiClient(configuration) as api:
        yield api


@pytest.fixture
def controller(api: client.ApiClient) -> KubernetesController:
    hosts = {"w-busy": True, "w-idle": False, "w-gone": False}

    async def workers() -> list[WorkerInfo]:
        return [WorkerInfo(id=h, pool=Pool.CPU, host=h, busy=b) for h, b in hosts.items()]

    return KubernetesController(
        apps=client.AppsV1Api(api),
        core=client.CoreV1Api(api),
        namespace=NS,
        deployment=DEPLOYMENT,
        workers=workers,
    )


async def test_replicas_reads_the_scale_subresource(
    kmock: kmock.RawHandler, controller: KubernetesController
) -> None:
    kmock[f"get {SCALE}"] << scale_object(3)
    assert await controller.replicas() == 3
    [request] = kmock
    assert (request.method, request.url.path) == ("GET", SCALE)
    assert request.headers["Accept"] == "application/json"


async def test_scaling_up_sends_a_merge_patch_of_spec_replicas(
    kmock: kmock.RawHandler, controller: KubernetesController
) -> None:
    kmock[f"get {SCALE}"] << scale_object(1)
    kmock[f"patch {SCALE}"] << (lambda request: scale_object(request.data["spec"]["replicas"]))
    await controller.scale(4)
    assert calls(kmock) == [("GET", SCALE), ("PATCH", SCALE)]
    assert patches(kmock) == [(SCALE, MERGE_PATCH, {"spec": {"replicas": 4}})]
    assert list(kmock)[1].body == b'{"spec": {"replicas": 4}}'


async def test_scaling_down_ranks_the_selected_pods_before_patching_the_scale(
    kmock: kmock.RawHandler, controller: KubernetesController
) -> None:
    pods = [
        pod_object("w-idle"),
        pod_object("w-busy"),
        pod_object("w-victim", {COST: "1000"}),
        pod_object("w-ranked", {COST: "0", "other": "kept"}),
    ]
    kmock[f"get {SCALE}"] << scale_object(4)
    kmock[f"get {PODS}"] << {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": pods}
    kmock[f"patch {PODS}/w-idle"] << pod_object("w-idle", {COST: "0"})
    kmock[f"patch {PODS}/w-busy"] << pod_object("w-busy", {COST: "1000"})
    kmock[f"patch {PODS}/w-victim"] << pod_object("w-victim", {COST: "-1000"})
    kmock[f"patch {SCALE}"] << scale_object(3)
    victim = WorkerInfo(id="v", pool=Pool.CPU, host="w-victim", busy=False)

    await controller.scale(3, remove=[victim])

    assert list(kmock)[1].params == {"labelSelector": SELECTOR}
    assert patches(kmock) == [
        (f"{PODS}/w-idle", MERGE_PATCH, {"metadata": {"annotations": {COST: "0"}}}),
        (f"{PODS}/w-busy", MERGE_PATCH, {"metadata": {"annotations": {COST: "1000"}}}),
        (f"{PODS}/w-victim", MERGE_PATCH, {"metadata": {"annotations": {COST: "-1000"}}}),
        (SCALE, MERGE_PATCH, {"spec": {"replicas": 3}}),
    ]  # w-ranked already had its cost: not patched


async def test_a_pod_gone_since_the_listing_is_skipped(
    kmock: kmock.RawHandler, controller: KubernetesController
) -> None:
    gone = status_object(404, "NotFound", 'pods "w-gone" not found')
    kmock[f"get {SCALE}"] << scale_object(2)
    kmock[f"get {PODS}"] << {"kind": "PodList", "apiVersion": "v1", "items": [pod_object("w-gone")]}
    kmock[f"patch {PODS}/w-gone"] << 404 << gone
    kmock[f"patch {SCALE}"] << scale_object(1)
    await controller.scale(1)
    assert calls(kmock)[-1] == ("PATCH", SCALE)


async def test_a_refusal_is_parsed_into_a_transient_error(
    kmock: kmock.RawHandler, controller: KubernetesController
) -> None:
    message = (
        'deployments.apps "dragoman-worker-cpu" is forbidden: User "system:serviceaccount:'
        'dragoman:dragoman-scaler" cannot get resource "deployments/scale"'
    )
    kmock[f"get {SCALE}"] << 403 << status_object(403, "Forbidden", message)
    with pytest.raises(TransientError) as caught:
        await controller.scale(2)
    assert caught.value.message == f"Kubernetes API answered 403 Forbidden: {message}"
    assert calls(kmock) == [("GET", SCALE)]


async def test_a_server_error_without_a_status_is_still_transient(
    kmock: kmock.RawHandler, controller: KubernetesController
) -> None:
    kmock[f"get {SCALE}"] << 503 << b"upstream connect error"
    with pytest.raises(TransientError, match="503"):
        await controller.replicas()


async def test_an_unreachable_server_is_transient() -> None:
    with socket.socket() as closed:  # a port nothing listens on once the socket closes
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    configuration = client.Configuration(host=f"http://127.0.0.1:{port}")
    with client.ApiClient(configuration) as api:
        controller = KubernetesController(
            apps=client.AppsV1Api(api), core=client.CoreV1Api(api), namespace=NS, deployment="x"
        )
        with pytest.raises(TransientError, match="unreachable"):
            await controller.scale(1)


async def test_the_factory_follows_the_kubeconfig(
    kmock: kmock.RawHandler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)  # not in a cluster
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "mock", "cluster": {"server": str(kmock.url)}}],
                "users": [{"name": "scaler", "user": {"token": "s3cret"}}],
                "contexts": [
                    {
                        "name": "mock",
                        "context": {"cluster": "mock", "user": "scaler", "namespace": "team-a"},
                    }
                ],
                "current-context": "mock",
            }
        )
    )
    scale = "/apis/apps/v1/namespaces/team-a/deployments/dragoman-worker-gpu/scale"
    kmock[f"get {scale}"] << scale_object(2, "team-a", "dragoman-worker-gpu")

    controller = kubernetes_controller(Pool.GPU, kubeconfig=str(kubeconfig))

    assert await controller.replicas() == 2
    [request] = kmock
    assert (request.method, request.url.path) == ("GET", scale)
    assert request.headers["Authorization"] == "Bearer s3cret"


def test_the_factory_prefers_the_service_account_in_a_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    account = tmp_path / "serviceaccount"
    account.mkdir()
    (account / "token").write_text("pod-token")
    (account / "ca.crt").write_text("not read until a connection")
    (account / "namespace").write_text("team-b\n")
    incluster = "kubernetes.config.incluster_config"
    monkeypatch.setattr(f"{incluster}.SERVICE_TOKEN_FILENAME", str(account / "token"))
    monkeypatch.setattr(f"{incluster}.SERVICE_CERT_FILENAME", str(account / "ca.crt"))
    monkeypatch.setattr(kube, "NAMESPACE_FILE", account / "namespace")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")

    controller = kubernetes_controller(Pool.CPU, kubeconfig=str(tmp_path / "absent"))

    assert (controller.namespace, controller.deployment) == ("team-b", "dragoman-worker-cpu")
