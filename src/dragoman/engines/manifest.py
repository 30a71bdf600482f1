"""``dragoman-model.json``: what an installed model is, where it came from, and the sha256 of
every file, written when it is installed and read by ``verify``, listings and the API."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

MANIFEST = "dragoman-model.json"
_CHUNK = 1 << 20


class Manifest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    format: int = 1
    pair: str  # "en-es"
    engine: str  # "ctranslate2"
    version: str  # the index's package_version, or "local"
    licence: str | None = None  # SPDX-like: "CC-BY-4.0", "CC-BY-NC-4.0"
    attribution: str | None = None
    source: str  # the URL or path it was installed from
    sha256: str | None = None  # of the package file as downloaded, when there was one
    files: dict[str, str] = Field(default_factory=dict)  # relative path -> sha256
    installed_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


def read_manifest(model_dir: Path) -> Manifest | None:
    """The manifest of ``model_dir``; ``None`` when it has none or it cannot be read (a model
    laid out by hand still serves)."""
    try:
        return Manifest.model_validate_json((model_dir / MANIFEST).read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def write_manifest(model_dir: Path, manifest: Manifest) -> None:
    text = json.dumps(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False)
    (model_dir / MANIFEST).write_text(text + "\n", encoding="utf-8")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def hash_files(model_dir: Path) -> dict[str, str]:
    """The sha256 of each file under ``model_dir`` but the manifest, by relative POSIX path."""
    return {
        path.relative_to(model_dir).as_posix(): file_sha256(path)
        for path in sorted(model_dir.rglob("*"))
        if path.is_file() and path.name != MANIFEST
    }


def mismatches(model_dir: Path, manifest: Manifest) -> list[str]:
    """What differs between ``model_dir`` and its manifest: missing, changed and extra files."""
    found = hash_files(model_dir)
    problems = [f"missing {name}" for name in manifest.files if name not in found]
    problems += [
        f"changed {name}"
        for name, digest in manifest.files.items()
        if name in found and found[name] != digest
    ]
    problems += [f"unexpected {name}" for name in found if name not in manifest.files]
    return problems
