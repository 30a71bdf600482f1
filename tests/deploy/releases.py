"""The sets of values the chart's tests render (each once), and how to look into a render."""

from __future__ import annotations

from functools import cache
from typing import Any

from tests.deploy.helm import Object, render

DATABASE = "postgresql://dragoman:secret@postgres:5432/dragoman"
BROKER = "amqp://dragoman:secret@rabbitmq:5672/"
URLS: Object = {"database": {"url": DATABASE}, "broker": {"url": BROKER}}
GPU: Object = {"workers": {"gpu": {"enabled": True}}}
EXISTING: Object = {
    "database": {"existingSecret": "postgres", "existingSecretKey": "url"},
    "broker": {"existingSecret": "rabbitmq", "existingSecretKey": "amqp"},
}

# name: (release, values)
RELEASES: dict[str, tuple[str, Object]] = {
    "defaults": ("dragoman", URLS),
    "gpu": ("dragoman", {**URLS, **GPU}),
    "keda": (
        "dragoman",
        {
            "database": {"url": DATABASE},
            "broker": {"url": BROKER + "translation"},  # the vhost "translation"
            "config": {"DRAGOMAN_QUEUE_PREFIX": "mt"},
            "scaler": {
                "mode": "keda",
                "keda": {"managementUrl": "http://dragoman:secret@rabbitmq:15672"},
            },
            **GPU,
        },
    ),
    "keda-existing-secrets": (
        "mt",
        {
            **EXISTING,
            "scaler": {
                "mode": "keda",
                "keda": {"existingSecret": "rabbitmq", "existingSecretKey": "management"},
            },
        },
    ),
    "none": ("dragoman", {**URLS, **GPU, "scaler": {"mode": "none"}}),
    "existing-secrets": (
        "translation",
        {**EXISTING, **GPU, "imagePullSecrets": [{"name": "registry"}]},
    ),
    "models-install": (
        "dragoman",
        {
            **URLS,
            "models": {
                "install": {
                    "enabled": True,
                    "pairs": ["en-es", "es-en"],
                    "index": "https://mirror.example.com/index.json",
                    "acceptLicence": True,
                }
            },
        },
    ),
    "models-offline": (
        "dragoman",
        {
            **URLS,
            "models": {
                "persistence": {"existingClaim": "translation-models"},
                "install": {
                    "enabled": True,
                    "from": "/source/models.tar",
                    "sourceVolume": {"persistentVolumeClaim": {"claimName": "bundles"}},
                },
            },
        },
    ),
}
NAMES = list(RELEASES)


def values_of(name: str) -> Object:
    return RELEASES[name][1]


@cache
def rendered(name: str) -> tuple[Object, ...]:
    release, values = RELEASES[name]
    return render(values, release)


def of_kind(name: str, kind: str) -> list[Object]:
    return [obj for obj in rendered(name) if obj["kind"] == kind]


def named(name: str, kind: str, object_name: str) -> Object:
    [obj] = [obj for obj in of_kind(name, kind) if obj["metadata"]["name"] == object_name]
    return obj


def component(obj: Object) -> str:
    labels: dict[str, str] = obj["metadata"]["labels"]
    return labels["app.kubernetes.io/component"]


def workloads(name: str) -> list[Object]:
    """The Deployments and Jobs: everything that runs pods."""
    return [obj for obj in rendered(name) if obj["kind"] in {"Deployment", "Job"}]


def pod(workload: Object) -> Object:
    spec: Object = workload["spec"]["template"]["spec"]
    return spec


def containers(workload: Object) -> list[Object]:
    found: list[Object] = pod(workload)["containers"]
    return found


def option(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def env_of(container: Object) -> dict[str, Any]:
    return {env["name"]: env for env in container.get("env", [])}


def worker(name: str, pool: str) -> Object:
    [found] = [
        obj
        for obj in of_kind(name, "Deployment")
        if component(obj) == "worker" and obj["metadata"]["labels"]["dragoman.io/pool"] == pool
    ]
    return found


def config(name: str) -> dict[str, str]:
    [configmap] = of_kind(name, "ConfigMap")
    data: dict[str, str] = configmap["data"]
    return data
