"""The chart's models volume: filled by the install Job, read-only everywhere else, so that
no worker downloads anything when it starts."""

from __future__ import annotations

import pytest

from tests.deploy.helm import Object, template
from tests.deploy.releases import (
    NAMES,
    URLS,
    component,
    config,
    containers,
    of_kind,
    pod,
    values_of,
    workloads,
)

HOOK = "helm.sh/hook"


def models_volume(workload: Object) -> tuple[Object, Object]:
    """The models volume of a pod and the container's mount of it."""
    [volume] = [v for v in pod(workload)["volumes"] if v["name"] == "models"]
    [container] = containers(workload)
    [mount] = [m for m in container["volumeMounts"] if m["name"] == "models"]
    return volume, mount


def claim_of(name: str) -> str:
    """The claim the values name, else the one the chart makes."""
    given: str = values_of(name).get("models", {}).get("persistence", {}).get("existingClaim", "")
    if given:
        return given
    [claim] = of_kind(name, "PersistentVolumeClaim")
    made: str = claim["metadata"]["name"]
    return made


@pytest.mark.parametrize("name", NAMES)
def test_the_api_and_the_workers_read_the_models_and_cannot_write_them(name: str) -> None:
    readers = [w for w in workloads(name) if component(w) in {"api", "worker"}]
    assert readers
    for workload in readers:
        volume, mount = models_volume(workload)
        assert volume["persistentVolumeClaim"] == {"claimName": claim_of(name), "readOnly": True}
        assert mount["readOnly"] is True
        assert mount["mountPath"] == config(name)["DRAGOMAN_MODELS_DIR"] == "/models"
    for workload in workloads(name):  # nothing else mounts them
        if component(workload) not in {"api", "worker", "models-install"}:
            assert "models" not in {v["name"] for v in pod(workload)["volumes"]}


def test_the_chart_makes_the_claim_unless_given_one_and_keeps_it() -> None:
    [claim] = of_kind("defaults", "PersistentVolumeClaim")
    assert claim["metadata"]["name"] == "dragoman-models"
    assert claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]  # written once, read by many
    assert of_kind("models-offline", "PersistentVolumeClaim") == []


def test_no_install_job_unless_asked_for() -> None:
    assert of_kind("defaults", "Job") == []


@pytest.mark.parametrize("name", ["models-install", "models-offline"])
def test_the_install_job_writes_the_volume_after_each_install_and_upgrade(name: str) -> None:
    [job] = of_kind(name, "Job")
    assert job["metadata"]["annotations"][HOOK] == "post-install,post-upgrade"
    assert job["metadata"]["annotations"]["helm.sh/hook-delete-policy"] == "before-hook-creation"
    assert pod(job)["restartPolicy"] == "Never"
    volume, mount = models_volume(job)
    assert volume["persistentVolumeClaim"] == {"claimName": claim_of(name)}
    assert mount["mountPath"] == config(name)["DRAGOMAN_MODELS_DIR"]
    assert not mount.get("readOnly", False)


def test_the_install_job_installs_the_pairs_from_the_index() -> None:
    [job] = of_kind("models-install", "Job")
    [container] = containers(job)
    assert container["args"] == [
        "models",
        "install",
        "en-es",
        "es-en",
        "--index",
        "https://mirror.example.com/index.json",
        "--accept-licence",
    ]


def test_the_install_job_installs_offline_from_a_read_only_source() -> None:
    [job] = of_kind("models-offline", "Job")
    [container] = containers(job)
    assert container["args"] == ["models", "install", "--from", "/source/models.tar"]
    [source] = [v for v in pod(job)["volumes"] if v["name"] == "source"]
    assert source == {"name": "source", "persistentVolumeClaim": {"claimName": "bundles"}}
    [mount] = [m for m in container["volumeMounts"] if m["name"] == "source"]
    assert mount == {"name": "source", "mountPath": "/source", "readOnly": True}


@pytest.mark.parametrize(
    ("install", "reason"),
    [
        ({"enabled": True}, "name pairs (from the index) or a file with from"),
        ({"enabled": True, "from": "/source/models.tar"}, "needs sourceVolume"),
        (
            {
                "enabled": True,
                "from": "/source/a.argosmodel",
                "pairs": ["en-es", "es-en"],
                "sourceVolume": {"emptyDir": {}},
            },
            "name at most one pair",
        ),
    ],
)
def test_an_install_job_that_cannot_work_is_refused(install: Object, reason: str) -> None:
    result = template({**URLS, "models": {"install": install}})
    assert result.returncode != 0 and reason in result.stderr
