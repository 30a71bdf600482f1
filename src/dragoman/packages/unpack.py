"""Unpacking archives from elsewhere: no member may land outside the target, none may be a
link or a device, and the unpacked size is capped (a zip bomb stops at the cap)."""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

from dragoman.packages.errors import NoSpace, PackageError

_CHUNK = 1 << 20


def unpack(archive: Path, into: Path, *, max_bytes: int) -> None:
    """Unpacks a zip (``.argosmodel``) or a tar (plain or compressed) into ``into``."""
    if zipfile.is_zipfile(archive):
        _unzip(archive, into, max_bytes)
    elif tarfile.is_tarfile(archive):
        _untar(archive, into, max_bytes)
    else:
        raise PackageError(f"{archive.name} is neither a zip nor a tar archive")


def _safe_name(name: str, archive: Path) -> PurePosixPath:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise PackageError(f"{archive.name} is refused: member {name!r} points outside it")
    return path


class _Budget:
    def __init__(self, archive: Path, max_bytes: int) -> None:
        self.archive = archive
        self.left = max_bytes

    def take(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise PackageError(f"{self.archive.name} unpacks to more than the allowed size")


def _unzip(archive: Path, into: Path, max_bytes: int) -> None:
    budget = _Budget(archive, max_bytes)
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            name = _safe_name(info.filename, archive)
            mode = info.external_attr >> 16
            if (mode & 0o170000) not in (0, 0o100000, 0o040000):  # links, devices, fifos
                raise PackageError(f"{archive.name} is refused: {info.filename!r} is a link")
            target = into / name
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, target.open("wb") as out:
                _copy(src, out, budget)


def _untar(archive: Path, into: Path, max_bytes: int) -> None:
    budget = _Budget(archive, max_bytes)
    try:
        with tarfile.open(archive) as tf:
            for member in tf:
                name = _safe_name(member.name, archive)
                if not (member.isfile() or member.isdir()):
                    raise PackageError(f"{archive.name} is refused: {member.name!r} is a link")
                target = into / name
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tf.extractfile(member)
                if src is None:
                    raise PackageError(f"{archive.name}: cannot read {member.name!r}")
                with src, target.open("wb") as out:
                    _copy(src, out, budget)
    except (tarfile.TarError, EOFError) as exc:
        raise PackageError(f"{archive.name} is not a whole tar archive: {exc}") from None


def _copy(src: IO[bytes], out: IO[bytes], budget: _Budget) -> None:
    try:
        while chunk := src.read(_CHUNK):
            budget.take(len(chunk))
            out.write(chunk)
    except OSError as exc:
        if exc.errno == 28:
            raise NoSpace("no space left on the device while unpacking") from None
        raise


def free_bytes(path: Path) -> int:
    """Free bytes on the file system of ``path`` (or of its nearest existing parent)."""
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free
