"""The installed Apertium modes, one per pair, and each one's null-flush shell pipeline."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from dragoman.errors import InvalidRequest
from dragoman.languages import canonical
from dragoman.models import Pair


@dataclass(frozen=True, slots=True)
class Mode:
    pair: Pair
    name: str
    path: Path


def discover_modes(modes_dir: Path) -> dict[Pair, Mode]:
    """The installed ``xxx-yyy.mode`` files; variants (``_valencia``) and others are skipped."""
    modes: dict[Pair, Mode] = {}
    for path in sorted(modes_dir.glob("*.mode")) if modes_dir.is_dir() else []:
        parts = path.stem.split("-")
        if len(parts) != 2 or "_" in path.stem:
            continue
        try:
            pair = Pair(canonical(parts[0]), canonical(parts[1]))
        except InvalidRequest:
            continue
        modes.setdefault(pair, Mode(pair, path.stem, path))
    return modes


def null_flush_script(mode: Mode) -> str:
    """The shell pipeline of ``mode`` with every stage in null-flush mode."""
    result = subprocess.run(
        ["apertium-wblank-mode", "-z", str(mode.path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()
