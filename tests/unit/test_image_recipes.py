"""The Dockerfile and ``deploy/image/build.sh`` describe one image: the same version, language
pairs, user, ports and entrypoint. The second is built and run by
``tests/integration/test_image.py``; no Docker daemon builds the first here."""

from __future__ import annotations

import re
from pathlib import Path

from dragoman import __version__

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
BUILD_SH = (ROOT / "deploy" / "image" / "build.sh").read_text()
MAKEFILE = (ROOT / "Makefile").read_text()


def makefile_default(name: str) -> str:
    match = re.search(rf"^{name} \?= (.*)$", MAKEFILE, re.MULTILINE)
    assert match, name
    return match[1]


def test_both_install_the_makefiles_language_pairs() -> None:
    pairs = makefile_default("PAIRS")
    match = re.search(r'^ARG APERTIUM_PACKAGES="(.*)"$', DOCKERFILE, re.MULTILINE)
    assert match
    assert match[1].split() == ["apertium", *(f"apertium-{pair}" for pair in pairs.split())]
    assert f"pairs=${{PAIRS:-{pairs}}}" in BUILD_SH


def test_both_give_the_gpu_image_the_makefiles_pytorch_and_cuda_12s_cublas() -> None:
    torch = makefile_default("TORCH")
    assert f"ARG TORCH={torch}" in DOCKERFILE
    assert f"TORCH:-{torch}" in BUILD_SH
    assert "ARG CUBLAS=nvidia-cublas-cu12" in DOCKERFILE
    assert "CUBLAS=nvidia-cublas-cu12" in BUILD_SH
    for recipe in (DOCKERFILE, BUILD_SH):
        assert "> /etc/ld.so.conf.d/cublas-cu12.conf" in recipe


def test_both_label_the_version_and_the_licence() -> None:
    assert f"org.opencontainers.image.version={__version__} " in DOCKERFILE
    for recipe in (DOCKERFILE, BUILD_SH):
        assert "org.opencontainers.image.licenses=Apache-2.0" in recipe


def test_both_run_dragoman_as_user_10001_with_the_same_ports() -> None:
    facts = {
        'ENTRYPOINT ["dragoman"]': "--entrypoint '[\"dragoman\"]'",
        'CMD ["--help"]': "--cmd '[\"--help\"]'",
        "USER 10001:10001": "--user 10001:10001",
        "WORKDIR /var/lib/dragoman": "--workingdir /var/lib/dragoman",
        "EXPOSE 8080 9100": "--port 8080/tcp --port 9100/tcp",
        "ENV PATH=/opt/dragoman/bin:": "--env PATH=/opt/dragoman/bin:",
    }
    for dockerfile, build_sh in facts.items():
        assert dockerfile in DOCKERFILE
        assert build_sh in BUILD_SH
    for user in ("--uid 10001 --gid 10001", "install -d -o 10001 -g 10001"):
        assert user in DOCKERFILE
        assert user in BUILD_SH
