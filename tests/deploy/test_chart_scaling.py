"""The chart's worker pools and who sizes them: the builtin scaler (with exactly the rights
its Kubernetes calls need), KEDA on the pool's real queue, or nobody; never two owners."""

from __future__ import annotations

import re

import pytest

from dragoman.messages import work_queue
from dragoman.models import Pool
from dragoman.scaling.kubernetes import AppsApi, CoreApi, worker_deployment
from dragoman.settings import Settings
from tests.deploy.helm import NAMESPACE, Object, render, template
from tests.deploy.releases import (
    URLS,
    component,
    config,
    containers,
    env_of,
    of_kind,
    option,
    pod,
    values_of,
    worker,
)

SCALED = ["defaults", "gpu", "existing-secrets"]  # scaler.mode builtin
KEDA = ["keda", "keda-existing-secrets"]
# A call of the official client, read_namespaced_deployment_scale, is a verb on a resource.
VERBS = {"read": "get", "list": "list", "patch": "patch"}
RESOURCES = {"deployment_scale": "deployments/scale", "pod": "pods"}


def pools(name: str) -> list[str]:
    return ["cpu", "gpu"] if values_of(name).get("workers", {}).get("gpu") else ["cpu"]


def kubernetes_calls() -> set[tuple[str, str, str]]:
    """(API group, resource, verb) of every call the kubernetes backend makes."""
    calls = set()
    for protocol, group in ((AppsApi, "apps"), (CoreApi, "")):
        for method in (name for name in vars(protocol) if not name.startswith("_")):
            found = re.fullmatch(r"(read|list|patch)_namespaced_(\w+)", method)
            assert found is not None, f"{method}: which right does it need?"
            calls.add((group, RESOURCES[found[2]], VERBS[found[1]]))
    return calls


def rights(rules: list[Object]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


@pytest.mark.parametrize("name", SCALED + KEDA)
def test_autoscaled_workers_leave_their_size_to_one_owner(name: str) -> None:
    for pool in pools(name):
        assert "replicas" not in worker(name, pool)["spec"]
    owners = of_kind(name, "ScaledObject") + [
        d for d in of_kind(name, "Deployment") if component(d) == "scaler"
    ]
    targets = sorted(
        o["spec"]["scaleTargetRef"]["name"]
        if o["kind"] == "ScaledObject"
        else option(containers(o)[0]["args"], "--deployment")
        for o in owners
    )
    assert targets == sorted(worker(name, pool)["metadata"]["name"] for pool in pools(name))


def test_fixed_pools_have_the_replicas_of_the_values_and_no_scaler() -> None:
    for pool, replicas in (("cpu", 2), ("gpu", 1)):
        assert worker("none", pool)["spec"]["replicas"] == replicas
        assert config("none")[f"DRAGOMAN_{pool.upper()}_MAX_WORKERS"] == str(replicas)
    assert [d for d in of_kind("none", "Deployment") if component(d) == "scaler"] == []
    assert of_kind("none", "ScaledObject") == of_kind("none", "Role") == []


@pytest.mark.parametrize("name", ["defaults", "gpu", "keda"])
def test_the_pools_bounds_reach_the_settings(name: str) -> None:
    data = config(name)
    assert (data["DRAGOMAN_CPU_MIN_WORKERS"], data["DRAGOMAN_CPU_MAX_WORKERS"]) == ("1", "8")
    gpu = ("0", "2") if "gpu" in pools(name) else ("0", "0")  # 0: no job is sent to a GPU
    assert (data["DRAGOMAN_GPU_MIN_WORKERS"], data["DRAGOMAN_GPU_MAX_WORKERS"]) == gpu


def test_the_default_release_names_the_workers_as_the_scaler_expects() -> None:
    for pool in Pool:
        assert worker("gpu", str(pool))["metadata"]["name"] == worker_deployment(pool)


@pytest.mark.parametrize("name", SCALED)
def test_one_builtin_scaler_per_pool_sizes_that_pools_workers(name: str) -> None:
    scalers = [d for d in of_kind(name, "Deployment") if component(d) == "scaler"]
    sized = {}
    for scaler in scalers:
        assert scaler["spec"]["replicas"] == 1
        assert scaler["spec"]["strategy"] == {"type": "Recreate"}
        [container] = containers(scaler)
        args = container["args"]
        assert args[0] == "scaler" and option(args, "--backend") == "kubernetes"
        sized[option(args, "--pool")] = option(args, "--deployment")
    assert sized == {pool: worker(name, pool)["metadata"]["name"] for pool in pools(name)}


@pytest.mark.parametrize("name", SCALED)
def test_the_scalers_account_holds_exactly_the_rights_its_calls_need(name: str) -> None:
    [role] = of_kind(name, "Role")
    assert rights(role["rules"]) == kubernetes_calls()
    workers = sorted(worker(name, pool)["metadata"]["name"] for pool in pools(name))
    for rule in role["rules"]:  # sizes of the pool's Deployments only
        if rule["resources"] == ["deployments/scale"]:
            assert sorted(rule["resourceNames"]) == workers
    assert of_kind(name, "ClusterRole") == of_kind(name, "ClusterRoleBinding") == []
    [binding] = of_kind(name, "RoleBinding")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    for deployment in of_kind(name, "Deployment"):
        account = pod(deployment).get("serviceAccountName")
        subject = {"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}
        assert (subject in binding["subjects"]) is (component(deployment) == "scaler")


@pytest.mark.parametrize("name", KEDA)
def test_keda_scales_each_pool_on_its_queue_over_the_management_api(name: str) -> None:
    values = values_of(name)
    prefix = Settings(queue_prefix=config(name).get("DRAGOMAN_QUEUE_PREFIX", "dragoman"))
    [auth] = of_kind(name, "TriggerAuthentication")
    scaled = {o["spec"]["scaleTargetRef"]["name"]: o for o in of_kind(name, "ScaledObject")}
    assert len(scaled) == len(pools(name))  # exactly one per pool
    for pool in pools(name):
        spec = scaled[worker(name, pool)["metadata"]["name"]]["spec"]
        assert spec["scaleTargetRef"]["kind"] == "Deployment"
        assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (
            (1, 8) if pool == "cpu" else (0, 2)
        )
        [trigger] = spec["triggers"]
        assert trigger["type"] == "rabbitmq"
        assert trigger["authenticationRef"] == {"name": auth["metadata"]["name"]}
        metadata = trigger["metadata"]
        # Over AMQP KEDA sees only ready messages and would take busy workers away.
        assert metadata["protocol"] == "http" and metadata["mode"] == "QueueLength"
        assert metadata["queueName"] == f"{prefix.queue_prefix}.{work_queue(pool)}"
        assert metadata["vhostName"] == ("translation" if name == "keda" else "/")
        assert all(isinstance(value, str) for value in metadata.values())  # KEDA wants strings
    [target] = auth["spec"]["secretTargetRef"]
    keda = values["scaler"]["keda"]
    if "existingSecret" in keda:
        assert target == {"parameter": "host", "name": "rabbitmq", "key": "management"}
    else:
        [secret] = of_kind(name, "Secret")
        assert target["parameter"] == "host" and target["name"] == secret["metadata"]["name"]
        assert secret["stringData"][target["key"]] == keda["managementUrl"]
    # KEDA owns the pools: no builtin scaler, and no rights on Deployments or pods.
    assert [d for d in of_kind(name, "Deployment") if component(d) == "scaler"] == []
    assert of_kind(name, "Role") == of_kind(name, "RoleBinding") == []
    assert [
        a for a in of_kind(name, "ServiceAccount") if a["metadata"]["name"].endswith("scaler")
    ] == []


@pytest.mark.parametrize("name", ["gpu", "none", "keda"])
@pytest.mark.parametrize("pool", ["cpu", "gpu"])
def test_workers_drain_and_have_minutes_to_load(name: str, pool: str) -> None:
    deployment = worker(name, pool)
    spec = pod(deployment)
    assert spec["terminationGracePeriodSeconds"] == 600
    [container] = containers(deployment)
    assert container["args"][:3] == ["worker", "--pool", pool]
    startup = container["startupProbe"]
    assert startup["httpGet"]["path"] == "/healthz"
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 600
    # Ready means able to take work, busy or not: readiness must not drop during a job.
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    host = env_of(container)["DRAGOMAN_WORKER_HOST"]  # the scaler finds workers by pod name
    assert host["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}


@pytest.mark.parametrize("seconds", [300, 299])
def test_a_grace_period_under_300_seconds_is_refused(seconds: int) -> None:
    values = {**URLS, "workers": {"cpu": {"terminationGracePeriodSeconds": seconds}}}
    result = template(values)
    assert (result.returncode == 0) is (seconds >= 300), result.stderr
    if seconds < 300:
        assert "terminationGracePeriodSeconds: 299 is under 300" in result.stderr


def test_gpu_workers_take_a_gpu_on_gpu_nodes_and_cpu_workers_none() -> None:
    gpu = pod(worker("gpu", "gpu"))
    [container] = gpu["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert gpu["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in gpu[
        "tolerations"
    ]
    cpu = pod(worker("gpu", "cpu"))
    assert "nvidia.com/gpu" not in cpu["containers"][0]["resources"].get("limits", {})
    assert "nodeSelector" not in cpu and "tolerations" not in cpu
    names = [d["metadata"]["name"] for d in of_kind("defaults", "Deployment")]
    assert "dragoman-worker-gpu" not in names  # workers.gpu.enabled is false by default


def test_the_gpu_pool_takes_its_scheduling_from_the_values() -> None:
    toleration = {"key": "gpu", "operator": "Equal", "value": "yes", "effect": "NoSchedule"}
    gpu = {
        "enabled": True,
        "gpus": 2,
        "nodeSelector": {"pool": "a100"},
        "tolerations": [toleration],
    }
    objects = render({**URLS, "workers": {"gpu": gpu}})
    [deployment] = [o for o in objects if o["metadata"]["name"] == "dragoman-worker-gpu"]
    spec = pod(deployment)
    assert spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 2
    assert spec["nodeSelector"]["pool"] == "a100"  # maps merge with the defaults, lists replace
    assert spec["tolerations"] == [toleration]
