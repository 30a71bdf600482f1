"""What an installed Apertium pair is, as one string: it changes when the pair's data or
programs change, so the segment cache never serves an output of other data.

The version hashes the mode file and, for every file it names and every program it runs
(found on ``PATH``), the path, size and modification time. Packages install files with the
times they were built with, so two hosts with the same packages agree, and an upgrade or a
recompiled pair gives a new version.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
import time
from pathlib import Path

from dragoman import __version__

REFRESH_S = 60.0


def _stat_of(word: str) -> str | None:
    path = Path(word) if word.startswith("/") else None
    if path is None:
        found = shutil.which(word)
        path = Path(found) if found else None
    if path is None or not path.is_file():
        return None
    stat = path.stat()
    return f"{path}:{stat.st_size}:{stat.st_mtime_ns}"


def pair_version(mode_file: Path) -> str:
    """``apertium-<sha256 prefix>`` of the mode file, the files and programs it names, and
    the version of dragoman (whose stream handling is part of every output)."""
    digest = hashlib.sha256()
    digest.update(__version__.encode())
    digest.update(b"unmarked")  # the generator leaves unknown words unmarked (-n)
    script = mode_file.read_bytes()
    digest.update(script)
    for word in shlex.split(script.decode("utf-8", "replace"), posix=True):
        stat = _stat_of(word)
        if stat is not None:
            digest.update(stat.encode("utf-8", "surrogateescape"))
    return f"apertium-{digest.hexdigest()[:16]}"


class Versions:
    """``pair_version`` of each mode, computed again at most every ``REFRESH_S``."""

    def __init__(self) -> None:
        self._known: dict[Path, tuple[float, str]] = {}

    def of(self, mode_file: Path) -> str:
        now = time.monotonic()
        known = self._known.get(mode_file)
        if known is None or now - known[0] >= REFRESH_S:
            known = (now, pair_version(mode_file))
            self._known[mode_file] = known
        return known[1]
