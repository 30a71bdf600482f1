"""The Kubernetes manifests: valid against the API schemas, and wired as the scaler expects."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import typer
import yaml

from dragoman import cli as dragoman_cli
from dragoman.models import Pool
from dragoman.scaling.kubernetes import worker_deployment
from dragoman.settings import Settings

BASE = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
# The oldest release the manifests support, and the newest whose schemas are installed.
KUBERNETES_VERSIONS = ("1.30", kubernetes_validate.latest_version())
SUBCOMMANDS = {"api", "watchdog", "worker", "scaler"}
# Read outside Settings: by the logging set-up, and by the worker to name itself.
OTHER_VARIABLES = {"DRAGOMAN_LOG_LEVEL", "DRAGOMAN_WORKER_HOST"}
SCALER_RULES = [
    {
        "apiGroups": ["apps"],
        "resources": ["deployments/scale"],
        "resourceNames": [worker_deployment(Pool.CPU), worker_deployment(Pool.GPU)],
        "verbs": ["get", "patch"],
    },
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "patch"]},
]

Object = dict[str, Any]


@cache
def kustomization() -> Object:
    loaded: Object = yaml.safe_load((BASE / "kustomization.yaml").read_text())
    return loaded


@cache
def rendered() -> tuple[Object, ...]:
    """The base as kustomize renders it: it only lists files, so loading them is rendering."""
    objects = []
    for name in kustomization()["resources"]:
        objects += [doc for doc in yaml.safe_load_all((BASE / name).read_text()) if doc]
    return tuple(objects)


def of_kind(kind: str) -> list[Object]:
    return [obj for obj in rendered() if obj["kind"] == kind]


def named(kind: str, name: str) -> Object:
    [obj] = [obj for obj in of_kind(kind) if obj["metadata"]["name"] == name]
    return obj


def component(obj: Object) -> str:
    labels: dict[str, str] = obj["metadata"]["labels"]
    return labels["app.kubernetes.io/component"]


def containers(deployment: Object) -> list[Object]:
    found: list[Object] = deployment["spec"]["template"]["spec"]["containers"]
    return found


def option(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_the_kustomization_transforms_nothing_but_the_namespace() -> None:
    assert set(kustomization()) == {"apiVersion", "kind", "namespace", "resources"}
    assert sorted(kustomization()["resources"]) == sorted(
        p.name for p in BASE.glob("*.yaml") if p.name != "kustomization.yaml"
    )


@pytest.mark.parametrize(
    "obj", rendered(), ids=lambda obj: f"{obj['kind']}/{obj['metadata']['name']}"
)
@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_object_is_valid_for_kubernetes(obj: Object, version: str) -> None:
    kubernetes_validate.validate(obj, version, strict=True)  # strict: no unknown fields


def test_every_object_lives_in_the_namespace() -> None:
    namespace = kustomization()["namespace"]
    assert [obj["metadata"]["name"] for obj in of_kind("Namespace")] == [namespace]
    for obj in rendered():
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == namespace, obj["metadata"]["name"]


def test_every_container_runs_a_distributed_subcommand() -> None:
    cli: Any = typer.main.get_command(dragoman_cli.app)
    for deployment in of_kind("Deployment"):
        for container in containers(deployment):
            assert "command" not in container  # the image's entrypoint is dragoman
            name, *options = container["args"]
            assert name in SUBCOMMANDS
            # The arguments parse as the real command line does (no unknown option or value).
            command = cli.get_command(cli.make_context("dragoman", [name]), name)
            assert command is not None, name
            command.make_context(name, list(options))


def test_every_pod_selector_matches_its_template() -> None:
    for deployment in of_kind("Deployment"):
        selector = deployment["spec"]["selector"]["matchLabels"]
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert selector.items() <= labels.items()
        assert labels["app.kubernetes.io/name"] == "dragoman"


def test_every_probe_and_port_flag_targets_the_containers_port() -> None:
    for deployment in of_kind("Deployment"):
        for container in containers(deployment):
            ports = {port["name"]: port["containerPort"] for port in container.get("ports", [])}
            if "--port" in container["args"]:
                assert ports == {"http": int(option(container["args"], "--port"))}
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                if probe in container:
                    assert container[probe]["httpGet"]["port"] in ports
                    assert container[probe]["httpGet"]["path"] in {"/healthz", "/readyz"}


def test_every_dragoman_variable_is_one_dragoman_reads() -> None:
    known = {f"DRAGOMAN_{name.upper()}" for name in Settings.model_fields} | OTHER_VARIABLES
    names = set(named("ConfigMap", "dragoman-config")["data"])
    names |= set(named("Secret", "dragoman-secrets")["stringData"])
    for deployment in of_kind("Deployment"):
        for container in containers(deployment):
            names |= {env["name"] for env in container.get("env", [])}
            refs = {
                ref.get("configMapRef", ref.get("secretRef"))["name"]
                for ref in container["envFrom"]
            }
            assert refs == {"dragoman-config", "dragoman-secrets"}
    assert names <= known
    assert {"DRAGOMAN_DATABASE_URL", "DRAGOMAN_BROKER_URL"} <= set(
        named("Secret", "dragoman-secrets")["stringData"]
    )


def test_the_api_service_reaches_the_api_pods() -> None:
    service = named("Service", "dragoman-api")
    api = named("Deployment", "dragoman-api")
    assert service["spec"]["selector"] == api["spec"]["selector"]["matchLabels"]
    [port] = service["spec"]["ports"]
    assert port["targetPort"] in {p["name"] for p in containers(api)[0]["ports"]}
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        assert containers(api)[0][probe]["httpGet"]["path"] == path


@pytest.mark.parametrize("pool", list(Pool))
def test_workers_leave_their_size_to_the_scaler(pool: Pool) -> None:
    deployment = named("Deployment", worker_deployment(pool))
    assert "replicas" not in deployment["spec"]
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["labels"] == {
        "app.kubernetes.io/name": "dragoman",
        "app.kubernetes.io/component": "worker",
        "dragoman.io/pool": str(pool),
    }
    assert pod["spec"]["terminationGracePeriodSeconds"] >= 3600
    [container] = pod["spec"]["containers"]
    assert container["args"][0] == "worker"
    assert option(container["args"], "--pool") == str(pool)
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    host = {env["name"]: env for env in container["env"]}["DRAGOMAN_WORKER_HOST"]
    assert host["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}


def test_gpu_workers_take_a_gpu_on_gpu_nodes() -> None:
    pod = named("Deployment", worker_deployment(Pool.GPU))["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert pod["nodeSelector"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod[
        "tolerations"
    ]
    cpu_pod = named("Deployment", worker_deployment(Pool.CPU))["spec"]["template"]["spec"]
    assert "nvidia.com/gpu" not in cpu_pod["containers"][0]["resources"].get("limits", {})


def test_one_kubernetes_scaler_per_pool_sizes_that_pools_workers() -> None:
    scalers = [d for d in of_kind("Deployment") if component(d) == "scaler"]
    pools = []
    for scaler in scalers:
        assert scaler["spec"]["replicas"] == 1
        assert scaler["spec"]["strategy"] == {"type": "Recreate"}
        [container] = containers(scaler)
        assert container["args"][0] == "scaler"
        assert option(container["args"], "--backend") == "kubernetes"
        pools.append(option(container["args"], "--pool"))
    assert sorted(pools) == sorted(str(pool) for pool in Pool)


def test_the_scalers_account_holds_only_the_minimal_role() -> None:
    [role] = of_kind("Role")
    assert role["rules"] == SCALER_RULES
    assert of_kind("ClusterRole") == of_kind("ClusterRoleBinding") == []
    [binding] = of_kind("RoleBinding")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    accounts = {obj["metadata"]["name"] for obj in of_kind("ServiceAccount")}
    for deployment in of_kind("Deployment"):
        pod = deployment["spec"]["template"]["spec"]
        if component(deployment) == "scaler":
            account = pod["serviceAccountName"]
            assert account in accounts
            assert {
                "kind": "ServiceAccount",
                "name": account,
                "namespace": kustomization()["namespace"],
            } in binding["subjects"]
        else:  # nothing else talks to the Kubernetes API
            assert "serviceAccountName" not in pod
            assert pod["automountServiceAccountToken"] is False
