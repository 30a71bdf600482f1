"""Tiny packages in the forms the installer takes, made from a tiny CTranslate2 model."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any


def argos_package(
    ct2_model: Path,
    out: Path,
    *,
    source: str,
    target: str,
    version: str = "1.0",
    extra: dict[str, tuple[str, bytes]] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Path:
    """An ``.argosmodel`` as Argos's trainer zips one: a single top folder holding
    ``metadata.json``, ``model/`` and ``sentencepiece.model``. ``extra`` adds raw members
    (name -> (kind, data)), for hostile archives: kind "file" or "symlink"."""
    top = f"translate-{source}_{target}-{version.replace('.', '_')}"
    meta = {
        "package_version": version,
        "argos_version": "1.9.0",
        "from_code": source,
        "from_name": source,
        "to_code": target,
        "to_name": target,
        **(metadata or {}),
    }
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(f"{top}/metadata.json", json.dumps(meta))
        zf.writestr(f"{top}/README.md", "A tiny test model; it translates nonsense.\n")
        for name in ("model.bin", "config.json", "shared_vocabulary.json"):
            if (ct2_model / name).is_file():
                zf.write(ct2_model / name, f"{top}/model/{name}")
        zf.write(ct2_model / "source.spm", f"{top}/sentencepiece.model")
        for name, (kind, data) in (extra or {}).items():
            info = zipfile.ZipInfo(name)
            if kind == "symlink":
                info.external_attr = 0o120777 << 16
            zf.writestr(info, data)
    return out


def index_entry(
    package: Path,
    links: list[str],
    *,
    source: str,
    target: str,
    version: str = "1.0",
    **ours: Any,
) -> dict[str, Any]:
    """An entry in Argos's index format, with dragoman's sha256 and size unless overridden."""
    data = package.read_bytes()
    entry: dict[str, Any] = {
        "package_version": version,
        "argos_version": "1.9.0",
        "from_code": source,
        "from_name": source,
        "to_code": target,
        "to_name": target,
        "links": links,
        "code": f"translate-{source}_{target}",
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "licence": "CC-BY-4.0",
        "some_future_key": {"ignored": True},
    }
    entry.update(ours)
    return {k: v for k, v in entry.items() if v is not None}


def write_index(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path
