"""The Helm chart: it lints, renders objects Kubernetes accepts, runs real commands with real
settings under the restricted pod security profile, and refuses values that cannot work."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import typer
import yaml

from dragoman import cli as dragoman_cli
from dragoman.settings import Settings
from tests.deploy.helm import CHART, NAMESPACE, Object, helm, lint, template
from tests.deploy.releases import (
    NAMES,
    URLS,
    component,
    containers,
    env_of,
    named,
    of_kind,
    option,
    pod,
    rendered,
    values_of,
    workloads,
)

ROOT = Path(__file__).resolve().parents[2]
# The oldest release the chart supports (Chart.yaml's kubeVersion), and the newest whose
# schemas are installed.
KUBERNETES_VERSIONS = ("1.30", kubernetes_validate.latest_version())
# Read outside Settings, by the logging set-up.
OTHER_VARIABLES = {"DRAGOMAN_LOG_LEVEL"}
SETTINGS = {f"DRAGOMAN_{name.upper()}" for name in Settings.model_fields}
COMMANDS = {("api",), ("watchdog",), ("worker",), ("scaler",), ("models", "install")}
UID = GID = 10001  # the image's user


def objects_id(obj: Object) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


@pytest.mark.parametrize("name", NAMES)
def test_the_chart_lints_cleanly(name: str) -> None:
    result = lint(values_of(name))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("name", NAMES)
def test_every_object_is_valid_for_kubernetes(name: str, version: str) -> None:
    invalid = []
    for obj in rendered(name):
        if obj["apiVersion"].startswith("keda.sh/"):
            continue  # a custom resource: no schema here (test_chart_scaling checks its shape)
        try:  # strict: no unknown field; an unknown built-in kind fails too
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.utils.ValidationError as exc:
            invalid.append(f"{objects_id(obj)}: {exc.caught}")
        except kubernetes_validate.utils.SchemaNotFoundError:
            invalid.append(f"{objects_id(obj)}: no such kind in Kubernetes {version}")
    assert invalid == []


# KEDA's custom resources, as its documentation describes the fields the chart may use: no
# schema of them is installed, so their shape is checked here (test_chart_scaling: the values).
KEDA_FIELDS: dict[str, Any] = {
    "ScaledObject": {
        "scaleTargetRef": {"apiVersion", "kind", "name"},
        "pollingInterval": int,
        "cooldownPeriod": int,
        "minReplicaCount": int,
        "maxReplicaCount": int,
        "advanced": {"horizontalPodAutoscalerConfig"},
        "triggers": list,
    },
    "TriggerAuthentication": {"secretTargetRef": list},
}
TRIGGER_FIELDS = {"type", "metadata", "authenticationRef"}
RABBITMQ_FIELDS = {"protocol", "mode", "value", "activationValue", "queueName", "vhostName"}


@pytest.mark.parametrize("name", ["keda", "keda-existing-secrets"])
def test_kedas_objects_have_the_shape_keda_reads(name: str) -> None:
    custom = [obj for obj in rendered(name) if obj["apiVersion"].startswith("keda.sh/")]
    assert {obj["apiVersion"] for obj in custom} == {"keda.sh/v1alpha1"}
    for obj in custom:
        assert set(obj) == {"apiVersion", "kind", "metadata", "spec"}
        fields = KEDA_FIELDS[obj["kind"]]
        assert set(obj["spec"]) <= set(fields), objects_id(obj)
        for field, shape in fields.items():
            value = obj["spec"].get(field)
            if isinstance(shape, set):
                assert value is None or set(value) <= shape, f"{objects_id(obj)}: {field}"
            else:
                assert value is None or isinstance(value, shape), f"{objects_id(obj)}: {field}"
    for obj in of_kind(name, "ScaledObject"):
        for trigger in obj["spec"]["triggers"]:
            assert set(trigger) == TRIGGER_FIELDS
            assert set(trigger["metadata"]) == RABBITMQ_FIELDS  # the URL: from the Secret
    for obj in of_kind(name, "TriggerAuthentication"):
        for ref in obj["spec"]["secretTargetRef"]:
            assert set(ref) == {"parameter", "name", "key"}


@pytest.mark.parametrize("name", NAMES)
def test_every_object_lives_in_the_release_namespace(name: str) -> None:
    assert {obj["metadata"]["namespace"] for obj in rendered(name)} == {NAMESPACE}
    assert of_kind(name, "Namespace") == []  # helm install --namespace makes it


def test_the_chart_and_its_image_carry_dragomans_version() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["version"] == chart["appVersion"] == version
    images = {c["image"] for w in workloads("defaults") for c in containers(w)}
    assert images == {f"dragoman:{version}"}


@pytest.mark.parametrize("name", NAMES)
def test_every_container_runs_a_real_command(name: str) -> None:
    cli: Any = typer.main.get_command(dragoman_cli.app)
    for workload in workloads(name):
        for container in containers(workload):
            assert "command" not in container  # the image's entrypoint is dragoman
            command, args, path = cli, list(container["args"]), []
            # Down the groups ("models install"), then the options parse as the real command
            # line does: no unknown option, no bad value.
            while hasattr(command, "get_command"):
                path.append(args.pop(0))
                ctx = command.make_context("dragoman", [path[-1]], resilient_parsing=True)
                command = command.get_command(ctx, path[-1])
                assert command is not None, path
            assert tuple(path) in COMMANDS
            command.make_context(path[-1], args)


@pytest.mark.parametrize("name", NAMES)
def test_every_variable_is_a_setting_dragoman_reads(name: str) -> None:
    names = set(of_kind(name, "ConfigMap")[0]["data"])
    for workload in workloads(name):
        for container in containers(workload):
            names |= set(env_of(container))
    assert names - SETTINGS - OTHER_VARIABLES == set()
    assert "DRAGOMAN_MODELS_DIR" in names


@pytest.mark.parametrize("name", NAMES)
def test_every_reference_to_a_setting_resolves(name: str) -> None:
    """envFrom names the chart's ConfigMap; each URL comes from the chart's Secret (which has
    the key) or from the Secret the values name."""
    values = values_of(name)
    secrets = {s["metadata"]["name"]: s["stringData"] for s in of_kind(name, "Secret")}
    [configmap] = of_kind(name, "ConfigMap")
    for workload in workloads(name):
        for container in containers(workload):
            refs = [ref["configMapRef"]["name"] for ref in container["envFrom"]]
            assert refs == [configmap["metadata"]["name"]]
            for setting, section in (
                ("DRAGOMAN_DATABASE_URL", "database"),
                ("DRAGOMAN_BROKER_URL", "broker"),
            ):
                if container["args"][0] == "models":
                    assert setting not in env_of(container)  # installs need neither
                    continue
                ref = env_of(container)[setting]["valueFrom"]["secretKeyRef"]
                given = values[section]
                if "existingSecret" in given:
                    assert ref == {
                        "name": given["existingSecret"],
                        "key": given["existingSecretKey"],
                    }
                else:
                    assert secrets[ref["name"]][ref["key"]] == given["url"]


def test_a_secret_is_rendered_only_for_urls_given_inline() -> None:
    [secret] = of_kind("defaults", "Secret")
    assert secret["stringData"] == {
        "database-url": URLS["database"]["url"],
        "broker-url": URLS["broker"]["url"],
    }
    assert of_kind("existing-secrets", "Secret") == []
    assert of_kind("keda-existing-secrets", "Secret") == []


@pytest.mark.parametrize("name", NAMES)
def test_every_pod_runs_under_the_restricted_profile(name: str) -> None:
    for workload in workloads(name):
        spec = pod(workload)
        context = spec["securityContext"]
        assert context["runAsNonRoot"] is True
        assert (context["runAsUser"], context["runAsGroup"]) == (UID, GID)
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}
        # Only the builtin scaler talks to the Kubernetes API.
        assert spec["automountServiceAccountToken"] is (component(workload) == "scaler")
        writable = {m["mountPath"] for c in containers(workload) for m in c["volumeMounts"]}
        scratch = {v["name"] for v in spec["volumes"] if "emptyDir" in v}
        assert {"tmp", "home"} <= scratch
        for container in containers(workload):
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False
            assert security["capabilities"] == {"drop": ["ALL"]}
            assert security["readOnlyRootFilesystem"] is True
        assert {"/tmp", "/var/lib/dragoman"} <= writable
        assert not any(c["image"].endswith(":latest") for c in containers(workload))


@pytest.mark.parametrize("name", NAMES)
def test_every_probe_and_port_flag_targets_the_containers_port(name: str) -> None:
    for workload in workloads(name):
        annotations = workload["spec"]["template"]["metadata"].get("annotations", {})
        for container in containers(workload):
            ports = {port["name"]: port["containerPort"] for port in container.get("ports", [])}
            if "--port" not in container["args"]:
                assert ports == {}  # the install Job serves nothing
                continue
            assert ports == {"http": int(option(container["args"], "--port"))}
            assert annotations["prometheus.io/port"] == str(ports["http"])
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                if probe in container:
                    assert container[probe]["httpGet"]["port"] == "http"
                    assert container[probe]["httpGet"]["path"] in {"/healthz", "/readyz"}


@pytest.mark.parametrize("name", NAMES)
def test_every_selector_matches_its_own_pods_only(name: str) -> None:
    selectors = []
    for deployment in of_kind(name, "Deployment"):
        selector = deployment["spec"]["selector"]["matchLabels"]
        assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
        selectors.append(selector)
    for selector in selectors:  # no Deployment's selector takes another's pods
        others = [s for s in selectors if s is not selector and selector.items() <= s.items()]
        assert others == []


def test_the_api_is_served_probed_and_kept_up_during_disruptions() -> None:
    api = named("defaults", "Deployment", "dragoman-api")
    service = named("defaults", "Service", "dragoman-api")
    budget = named("defaults", "PodDisruptionBudget", "dragoman-api")
    assert service["spec"]["selector"] == api["spec"]["selector"]["matchLabels"]
    assert budget["spec"]["selector"] == api["spec"]["selector"]
    assert api["spec"]["replicas"] >= 2 and budget["spec"]["maxUnavailable"] == 1
    [port] = service["spec"]["ports"]
    [container] = containers(api)
    assert port["targetPort"] in {p["name"] for p in container["ports"]}
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    watchdog = named("defaults", "Deployment", "dragoman-watchdog")
    assert watchdog["spec"]["replicas"] == 2


def test_the_notes_tell_how_to_reach_the_api_and_follow_the_models_job() -> None:
    args = ["install", "dragoman", str(CHART), "--namespace", NAMESPACE, "--dry-run=client"]
    notes = helm(*args, values=values_of("models-install"))
    assert notes.returncode == 0, notes.stderr
    assert "kubectl -n dragoman port-forward svc/dragoman-api 8080:8080" in notes.stdout
    assert "kubectl -n dragoman logs job/dragoman-models-install" in notes.stdout


def refusal(values: Object) -> str:
    result = template(values)
    assert result.returncode != 0, "rendered, though it should have been refused"
    return result.stderr


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({"broker": URLS["broker"]}, "set database.url or database.existingSecret"),
        ({"database": URLS["database"]}, "set broker.url or broker.existingSecret"),
        (
            {"database": {"url": "sqlite:///dragoman.db"}, "broker": URLS["broker"]},
            "database.url: a PostgreSQL URL",
        ),
        (
            {**URLS, "database": {**URLS["database"], "existingSecret": "postgres"}},
            "database: set url or existingSecret, not both",
        ),
        ({**URLS, "image": {"tag": "latest"}}, '"latest" is refused'),
        ({**URLS, "image": {"repository": "registry.example.com/dragoman:latest"}}, "latest"),
        ({**URLS, "scaler": {"mode": "keda"}}, "set scaler.keda.managementUrl"),
        ({**URLS, "scaler": {"mode": "hpa"}}, "none of builtin, keda, none"),
        ({**URLS, "config": {"DRAGOMAN_MODELS_DIR": "/elsewhere"}}, "set by the chart"),
        ({**URLS, "config": {"DRAGOMAN_CPU_MAX_WORKERS": "3"}}, "set by the chart"),
        ({**URLS, "config": {"LOG_LEVEL": "DEBUG"}}, "only DRAGOMAN_* settings"),
        ({**URLS, "workers": {"cpu": {"maxReplicas": 0}}}, "at least one CPU worker"),
    ],
)
def test_values_that_cannot_work_are_refused_with_the_reason(values: Object, reason: str) -> None:
    assert reason in refusal(values)
