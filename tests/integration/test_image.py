"""The image that ``deploy/image/build.sh`` builds, run by podman as a user would run it: the
embedded service answers and translates, and the distributed processes take a job through
the real PostgreSQL and RabbitMQ, all as user 10001, with no compiler and no test tools inside.

The image is built once per content of its inputs (``src/``, ``pyproject.toml``, ``README.md``,
``deploy/image/``) into ``build/cache/images/``; a later run with the same inputs reuses it."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from filelock import FileLock

from dragoman import __version__
from tests.integration.cluster import BROKER_URL, Cluster, wait_for
from tests.integration.server import free_port

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "deploy" / "image" / "build.sh"
CACHE = ROOT / "build" / "cache" / "images"
IMAGE = f"localhost/dragoman:{__version__}"
TOOLS = ("mmdebstrap", "buildah", "podman", "runc")
MISSING = [tool for tool in TOOLS if shutil.which(tool) is None]
# The CPU image; PyTorch alone would take it past this.
MAX_IMAGE_BYTES = 800_000_000

pytestmark = [
    pytest.mark.integration,
    # A first build takes one to three minutes; a cached one none.
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        bool(MISSING),
        reason=f"{', '.join(MISSING)} not installed: the image is not built here "
        "(make image-tools installs them)",
    ),
]


def inputs_key() -> str:
    """A digest of everything the image is built from in this tree."""
    digest = hashlib.sha256()
    paths = [ROOT / "pyproject.toml", ROOT / "README.md"]
    for folder in ("src", "deploy/image"):
        paths += sorted(
            path
            for path in (ROOT / folder).rglob("*")
            if path.is_file()
            and "__pycache__" not in path.parts
            and not any(part.endswith(".egg-info") for part in path.parts)
        )
    for path in paths:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@pytest.fixture(scope="module")
def archive() -> Path:
    """The OCI archive of this tree's image, built unless a build of the same inputs is
    cached. Test processes that need it at once wait for the one that builds it."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"dragoman-{inputs_key()}.oci.tar"
    with FileLock(CACHE / "build.lock"):
        if not path.exists():
            for stale in CACHE.glob("dragoman-*.oci.tar"):
                stale.unlink()
            built = subprocess.run(
                [BUILD, "--output", path], capture_output=True, text=True, timeout=840
            )
            assert built.returncode == 0, built.stderr[-6000:]
            assert built.stdout.splitlines()[-1] == str(path)
    return path


class Podman:
    """podman on storage of its own, as it runs on a machine whose runc may not set rlimits
    and with no systemd: runc, cgroupfs and low explicit ulimits. Overlay storage where the
    kernel allows it (a container starts at once), else vfs (which copies the image for each
    container)."""

    def __init__(self, storage: Path, driver: str) -> None:
        self.storage = storage
        self.base = ["podman", "--root", str(storage / "root"), "--runroot", str(storage / "run")]
        self.base += ["--tmpdir", str(storage / "tmp"), "--storage-driver", driver]
        self.base += ["--runtime", "runc", "--cgroup-manager", "cgroupfs"]
        self.base += ["--events-backend", "none"]

    def __call__(self, *args: str, timeout_s: float = 120) -> str:
        done = subprocess.run(
            [*self.base, *args], capture_output=True, text=True, timeout=timeout_s
        )
        assert done.returncode == 0, f"podman {' '.join(args)}:\n{done.stderr}"
        return done.stdout

    def start(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Starts a container of the image on the host's network; returns its id."""
        options = ["run", "--detach", "--network", "host"]
        options += ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"]
        for name, value in (env or {}).items():
            options += ["--env", f"{name}={value}"]
        return self(*options, IMAGE, *args).strip()

    def answers(self, container: str, url: str) -> bool:
        """Whether ``url`` answers 200, failing with the logs if the container has ended."""
        state = self("inspect", "--format", "{{.State.Status}}", container).strip()
        assert state == "running", f"{state}:\n{self('logs', container)}"
        try:
            return httpx.get(url, timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def shell(self, container: str, script: str) -> str:
        return self("exec", container, "sh", "-c", script)


@pytest.fixture(scope="module")
def podman(archive: Path) -> Iterator[Podman]:
    # A short path: podman refuses a runroot longer than 50 characters.
    storage = Path(tempfile.mkdtemp(prefix="dragoman-podman-", dir="/tmp"))
    podman = Podman(storage, "overlay")
    try:
        try:
            loaded = podman("load", "--input", str(archive), timeout_s=300)
        except AssertionError:
            shutil.rmtree(storage / "root", ignore_errors=True)
            podman = Podman(storage, "vfs")
            loaded = podman("load", "--input", str(archive), timeout_s=300)
        assert f"Loaded image: {IMAGE}" in loaded
        yield podman
    finally:
        subprocess.run([*podman.base, "rm", "--all", "--force", "--time", "5"], timeout=120)
        shutil.rmtree(storage, ignore_errors=True)


def oci_blob(archive: tarfile.TarFile, digest: str) -> Any:
    member = archive.extractfile(f"blobs/sha256/{digest.removeprefix('sha256:')}")
    assert member is not None, digest
    return json.load(member)


def test_the_archive_holds_one_image_tagged_with_the_version_and_labelled(
    archive: Path,
) -> None:
    with tarfile.open(archive) as oci:
        index = json.load(oci.extractfile("index.json"))  # type: ignore[arg-type]
        [manifest] = index["manifests"]
        assert manifest["annotations"]["org.opencontainers.image.ref.name"] == (
            f"dragoman:{__version__}"
        )
        image = oci_blob(oci, oci_blob(oci, manifest["digest"])["config"]["digest"])
    config = image["config"]
    assert config["Entrypoint"] == ["dragoman"]
    assert config["Cmd"] == ["--help"]
    assert config["User"] == "10001:10001"
    assert config["WorkingDir"] == "/var/lib/dragoman"
    assert set(config["ExposedPorts"]) == {"8080/tcp", "9100/tcp"}
    assert config["Labels"]["org.opencontainers.image.version"] == __version__
    assert config["Labels"]["org.opencontainers.image.licenses"] == "Apache-2.0"


def test_serve_answers_and_translates_as_user_10001_with_no_compiler(podman: Podman) -> None:
    assert int(podman("image", "inspect", "--format", "{{.Size}}", IMAGE)) < MAX_IMAGE_BYTES
    port = free_port()
    container = podman.start("serve", "--host", "127.0.0.1", "--port", str(port))
    url = f"http://127.0.0.1:{port}"
    wait_for(lambda: podman.answers(container, f"{url}/healthz"), 60, "serve's /healthz")

    request = {"source_lang": "en", "target_lang": "es", "segments": ["Good morning."]}
    answer = httpx.post(f"{url}/v1/translate", json=request, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["translations"] == ["Buenos días."]

    assert "\nUid:\t10001\t10001\t10001\t10001\n" in podman.shell(container, "cat /proc/1/status")
    found = podman.shell(container, "command -v gcc cc c++ clang make || true")
    assert found == ""
    modules = ("pytest", "torch", "ctranslate2", "transformers")
    absent = f"import importlib.util as u; print([m for m in {modules!r} if u.find_spec(m)])"
    assert podman("exec", container, "python", "-c", absent).strip() == "[]"


def test_the_distributed_processes_translate_a_job(podman: Podman, tmp_path: Path) -> None:
    cluster = Cluster(tmp_path)
    try:
        env = {
            "DRAGOMAN_DATABASE_URL": cluster.database_url,
            "DRAGOMAN_BROKER_URL": BROKER_URL,
            "DRAGOMAN_QUEUE_PREFIX": cluster.prefix,
        }
        worker, watchdog, api = free_port(), free_port(), free_port()
        container = podman.start("worker", "--pool", "cpu", "--port", str(worker), env=env)
        podman("exec", "--detach", container, "dragoman", "watchdog", "--port", str(watchdog))
        podman("exec", "--detach", container, "dragoman", "api", "--port", str(api))
        for role, port in (("worker", worker), ("watchdog", watchdog), ("api", api)):
            url = f"http://127.0.0.1:{port}/readyz"
            wait_for(lambda url=url: podman.answers(container, url), 60, f"the {role}")

        base = f"http://127.0.0.1:{api}"
        job = {
            "source_lang": "en",
            "target_lang": "es",
            "documents": [{"name": "a.txt", "segments": ["Good morning."]}],
        }
        submitted = httpx.post(f"{base}/v1/jobs", json=job, timeout=30)
        assert submitted.status_code == 202, submitted.text
        job_url = f"{base}/v1/jobs/{submitted.json()['id']}"

        def finished() -> str | None:
            status: str = httpx.get(job_url, timeout=10).json()["status"]
            return status if status in {"succeeded", "failed", "cancelled"} else None

        assert wait_for(finished, 60, "the job to end") == "succeeded"
        result = httpx.get(f"{job_url}/result", timeout=10).json()
        assert result["documents"][0]["segments"] == ["Buenos días."]

        # SIGTERM, as `podman stop` or Kubernetes sends it: the worker drains and exits 0.
        podman("stop", "--time", "60", container, timeout_s=90)
        assert podman("inspect", "--format", "{{.State.ExitCode}}", container).strip() == "0"
    finally:
        cluster.close()
