"""The models folder as the installer keeps it: ``<pair>/<engine>/`` for each model, and hidden
folders beside them that no engine lists (``.staging``, ``.downloads``, ``.locks``, ``.trash``)."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from dragoman.engines.manifest import Manifest, read_manifest
from dragoman.models import Pair
from dragoman.packages.errors import PackageError

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def exchange(a: Path, b: Path) -> bool:
    """Swaps two existing paths atomically (Linux ``renameat2`` with ``RENAME_EXCHANGE``);
    False where the C library or the file system cannot."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if done == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(error, os.strerror(error), str(b))


class ModelsFolder:
    def __init__(self, root: Path) -> None:
        self.root = root

    def model_dir(self, pair: Pair, engine: str) -> Path:
        return self.root / str(pair) / engine

    def download_path(self, file_name: str) -> Path:
        """Where a download is kept while it is incomplete (and resumed from)."""
        folder = self.root / ".downloads"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{file_name}.partial"

    @contextmanager
    def staging(self) -> Iterator[Path]:
        """A fresh hidden folder on the models' file system, removed afterwards whatever
        happened (what was moved out of it stays where it went)."""
        folder = self.root / ".staging" / uuid.uuid4().hex
        folder.mkdir(parents=True)
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @contextmanager
    def lock(self, pair: Pair, *, wait_s: float = 3600.0) -> Iterator[None]:
        """One install or removal of ``pair`` at a time, across processes."""
        folder = self.root / ".locks"
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(folder / f"{pair}.lock")
        try:
            lock.acquire(timeout=wait_s)
        except Timeout:
            raise PackageError(f"another install of {pair} holds its lock; try again") from None
        try:
            yield
        finally:
            lock.release()

    def put(self, staged: Path, pair: Pair, engine: str) -> Path:
        """Moves the finished model ``staged`` to its place. An older one there is swapped
        out in one step where the kernel can (``renameat2``'s exchange): a reader sees the
        old model or the new one, never none; elsewhere two renames leave the path empty
        for an instant."""
        target = self.model_dir(pair, engine)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            os.rename(staged, target)
            return target
        if exchange(staged, target):
            shutil.rmtree(staged, ignore_errors=True)  # the old model, swapped out
            return target
        old = self._trash_path()
        os.rename(target, old)
        os.rename(staged, target)
        shutil.rmtree(old, ignore_errors=True)
        return target

    def take_out(self, pair: Pair, engine: str) -> bool:
        """Removes the model of ``pair``: renamed away at once, then deleted."""
        target = self.model_dir(pair, engine)
        if not target.exists():
            return False
        old = self._trash_path()
        os.rename(target, old)
        shutil.rmtree(old, ignore_errors=True)
        with contextlib.suppress(OSError):
            target.parent.rmdir()  # the pair's folder, once no engine is left in it
        return True

    def installed(self) -> list[tuple[Path, Manifest | None]]:
        """Every ``<pair>/<engine>/`` folder with its manifest (``None``: laid out by hand)."""
        if not self.root.is_dir():
            return []
        return [
            (model, read_manifest(model))
            for folder in sorted(self.root.iterdir())
            if folder.is_dir() and not folder.name.startswith(".")
            for model in sorted(folder.iterdir())
            if model.is_dir() and not model.name.startswith(".")
        ]

    def _trash_path(self) -> Path:
        folder = self.root / ".trash"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / uuid.uuid4().hex
