"""What can be installed, beside what is: the index's neural packages and Debian's Apertium
pairs, each marked installed or upgradable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dragoman.engines.manifest import read_manifest
from dragoman.packages.debian import debian_pairs
from dragoman.packages.index import IndexEntry, parse_version


def catalogue_rows(entries: list[IndexEntry], models_dir: Path) -> list[dict[str, Any]]:
    """One row per package: the newest entry of each pair and engine, then Debian's pairs."""
    newest: dict[tuple[str, str], IndexEntry] = {}
    for entry in entries:
        key = (str(entry.pair), entry.engine)
        if key not in newest or entry.version > newest[key].version:
            newest[key] = entry
    rows = [_neural_row(e, models_dir) for _, e in sorted(newest.items())]
    rows += [
        {
            "pair": str(p.pair),
            "from_code": p.pair.source,
            "to_code": p.pair.target,
            "kind": "rule-based",
            "engine": "apertium",
            "version": p.version,
            "size": None,
            "licence": "GPL-3.0",
            "package": p.package,
            "installed": p.installed,
            "upgradable": False,
        }
        for p in debian_pairs()
    ]
    return rows


def _neural_row(entry: IndexEntry, models_dir: Path) -> dict[str, Any]:
    manifest = read_manifest(models_dir / str(entry.pair) / entry.engine)
    installed = manifest.version if manifest else None
    return {
        "pair": str(entry.pair),
        "from_code": entry.from_code,
        "to_code": entry.to_code,
        "from_name": entry.from_name,
        "to_name": entry.to_name,
        "kind": "neural",
        "engine": entry.engine,
        "version": entry.package_version,
        "size": entry.size,
        "licence": entry.licence,
        "package": entry.code,
        "installed": installed is not None,
        "installed_version": installed,
        "upgradable": installed is not None
        and parse_version(installed) < parse_version(entry.package_version),
    }
