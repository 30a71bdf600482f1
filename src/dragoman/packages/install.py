"""Installing one model: from an index entry (downloaded, resumed, verified) or from a local
file or folder; unpacked and probed in a hidden staging folder, then moved into place."""

from __future__ import annotations

import asyncio
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from dragoman.engines.manifest import Manifest, file_sha256, hash_files, write_manifest
from dragoman.errors import DragomanError, InvalidRequest
from dragoman.languages import canonical
from dragoman.models import Pair
from dragoman.packages.errors import NoSpace, PackageError
from dragoman.packages.http import Network
from dragoman.packages.index import IndexEntry, parse_version
from dragoman.packages.layout import ModelsFolder
from dragoman.packages.report import Reporter
from dragoman.packages.unpack import free_bytes, unpack

ENGINE = "ctranslate2"  # every package the installer handles ends as a CTranslate2 model
PROBE = "Hello, world."
_MIN_UNPACK_CAP = 256 * 2**20
_MARGIN = 16 * 2**20


@dataclass(frozen=True, slots=True)
class Provenance:
    """What the manifest records of where a model came from."""

    source: str
    version: str
    licence: str | None = None
    attribution: str | None = None
    sha256: str | None = None


class Installer:
    def __init__(
        self,
        models_dir: Path,
        *,
        network: Network,
        reporter: Reporter,
        probe: bool = True,
    ) -> None:
        self.folder = ModelsFolder(models_dir)
        self._network = network
        self._report = reporter
        self._probe = probe

    def install_entry(
        self, entry: IndexEntry, *, accept_licence: bool = False, force: bool = False
    ) -> Manifest:
        """Downloads, verifies, probes and installs ``entry``; a newer ``package_version``
        replaces the installed one, the same or an older one is kept unless ``force``."""
        pair = entry.pair
        check_licence(pair, entry.licence, accept_licence)
        with self.folder.lock(pair):
            current = self._current(pair, entry.engine)
            if current and not force and parse_version(current.version) >= entry.version:
                self._report.status("already installed", version=current.version)
                return current
            size = entry.size if entry.size is not None else self._network.head_size(entry.links)
            partial = self.folder.download_path(entry.file_name)
            self._check_space(partial, size)
            self._report.status("downloading", version=entry.package_version, total=size)
            url = self._network.download(
                entry.links, partial, size=size, progress=self._report.progress
            )
            digest = self._verify(partial, entry)
            provenance = Provenance(
                url, entry.package_version, entry.licence, entry.attribution, digest
            )
            try:
                return self._install_archive(partial, pair, entry.engine, provenance)
            finally:
                partial.unlink(missing_ok=True)

    def install_archive(
        self,
        archive: Path,
        *,
        pair: Pair | None,
        licence: str | None,
        accept_licence: bool,
        version: str | None = None,
    ) -> Manifest:
        """An ``.argosmodel`` (or a tar of a model folder) already on disk."""
        with self.folder.staging() as staging:
            unpacked = staging / "unpacked"
            self._unpack(archive, unpacked)
            root = package_root(unpacked)
            meta = read_metadata(root)
            pair = pair_of(root, meta, pair)
            licence = licence or _text(meta, "licence", "license")
            check_licence(pair, licence, accept_licence)
            provenance = Provenance(
                str(archive.resolve()),
                version or _text(meta, "package_version") or "local",
                licence,
                sha256=file_sha256(archive),
            )
            with self.folder.lock(pair):
                return self._finish(root, staging, pair, ENGINE, provenance)

    def install_folder(
        self,
        source: Path,
        *,
        pair: Pair | None,
        licence: str | None,
        accept_licence: bool,
        version: str | None = None,
    ) -> Manifest:
        """A CTranslate2 folder (OPUS-MT layout), an unpacked Argos package, or a Hugging Face
        Marian folder (converted to CTranslate2, int8)."""
        from dragoman.packages.convert import is_hf_marian, model_card_licence

        meta = read_metadata(source)
        pair = pair_of(source, meta, pair)
        licence = licence or _text(meta, "licence", "license") or model_card_licence(source)
        check_licence(pair, licence, accept_licence)
        provenance = Provenance(
            str(source.resolve()), version or _text(meta, "package_version") or "local", licence
        )
        with self.folder.staging() as staging, self.folder.lock(pair):
            copy = staging / "copy"
            if is_hf_marian(source):
                from dragoman.packages.convert import convert_marian

                self._report.status("converting", detail="to CTranslate2 (int8)")
                convert_marian(source, copy)
            else:
                self._check_space(copy, _tree_size(source))
                shutil.copytree(source, copy, symlinks=False)
            return self._finish(copy, staging, pair, ENGINE, provenance)

    def _install_archive(
        self, archive: Path, pair: Pair, engine: str, provenance: Provenance
    ) -> Manifest:
        with self.folder.staging() as staging:
            unpacked = staging / "unpacked"
            self._unpack(archive, unpacked)
            root = package_root(unpacked)
            check_metadata(root, pair, provenance.version)
            return self._finish(root, staging, pair, engine, provenance)

    def _finish(
        self, root: Path, staging: Path, pair: Pair, engine: str, provenance: Provenance
    ) -> Manifest:
        """Probes the model in ``root`` where only this install sees it, writes its manifest
        and moves it into place."""
        from dragoman.engines.ct2 import detect_layout

        try:
            detect_layout(root)
        except DragomanError as exc:
            raise PackageError(f"not a CTranslate2 model: {exc.message}") from None
        served = staging / "served" / str(pair) / engine
        served.parent.mkdir(parents=True)
        root.rename(served)
        if self._probe:
            self._report.status("probing", detail=f"translating {PROBE!r}")
            probe(staging / "served", pair, engine)
        self._report.status("hashing files")
        manifest = Manifest(
            pair=str(pair),
            engine=engine,
            version=provenance.version,
            licence=provenance.licence,
            attribution=provenance.attribution or attribution_for(provenance.licence),
            source=provenance.source,
            sha256=provenance.sha256,
            files=hash_files(served),
        )
        write_manifest(served, manifest)
        target = self.folder.put(served, pair, engine)
        self._report.status("success", path=str(target), version=manifest.version)
        return manifest

    def _unpack(self, archive: Path, into: Path) -> None:
        size = archive.stat().st_size
        self._check_space(into, size)
        self._report.status("unpacking")
        into.mkdir(parents=True)
        unpack(archive, into, max_bytes=max(_MIN_UNPACK_CAP, 8 * size))

    def _verify(self, partial: Path, entry: IndexEntry) -> str:
        self._report.status("verifying sha256")
        size = partial.stat().st_size
        if entry.size is not None and size != entry.size:
            partial.unlink()
            raise PackageError(
                f"{entry.file_name}: downloaded {size} bytes, the index says {entry.size};"
                " the download was removed, run the install again"
            )
        digest = file_sha256(partial)
        if entry.sha256 is not None and digest != entry.sha256.lower():
            partial.unlink()
            raise PackageError(
                f"{entry.file_name}: sha256 {digest} does not match the index's {entry.sha256};"
                " the download was removed and nothing was installed"
            )
        return digest

    def _check_space(self, where: Path, size: int | None) -> None:
        """Enough room to download and unpack ``size`` bytes (twice: the archive and its
        contents), checked before starting rather than failing half-way."""
        if size is None:
            return
        kept = where.stat().st_size if where.is_file() else 0
        need = (size - kept) + size + _MARGIN
        free = free_bytes(where)
        if free < need:
            raise NoSpace(
                f"not enough free space in {self.folder.root}: {_mb(need)} needed, {_mb(free)} free"
            )

    def _current(self, pair: Pair, engine: str) -> Manifest | None:
        from dragoman.engines.manifest import read_manifest

        return read_manifest(self.folder.model_dir(pair, engine))


def probe(models_dir: Path, pair: Pair, engine: str) -> None:
    """Loads the model through the engine that will serve it and translates one sentence."""
    from dragoman.engines.ct2 import CTranslate2Engine
    from dragoman.engines.model_cache import ModelCache

    async def run() -> list[str]:
        served = CTranslate2Engine(models_dir, cache=ModelCache(2**40), threads=1)
        try:
            return await served.translate(pair, [PROBE])
        finally:
            await served.close()

    try:
        # A thread of its own: the caller may be inside an event loop (tests, the API).
        with ThreadPoolExecutor(1) as thread:
            outputs = thread.submit(asyncio.run, run()).result()
    except DragomanError as exc:
        raise PackageError(f"the model does not load or translate: {exc.message}") from None
    if len(outputs) != 1 or not outputs[0].strip():
        raise PackageError("the model loaded but translated the probe sentence to nothing")


def check_licence(pair: Pair, licence: str | None, accepted: bool) -> None:
    from dragoman.packages.index import NON_COMMERCIAL

    if licence and any(m in licence.upper() for m in NON_COMMERCIAL) and not accepted:
        raise PackageError(
            f"the model for {pair} is licensed {licence}, which forbids commercial use;"
            " add --accept-licence to install it anyway"
        )


def attribution_for(licence: str | None) -> str | None:
    if licence and licence.upper().startswith("CC-BY"):
        return f"Model licensed {licence}: credit its authors (OPUS-MT: Helsinki-NLP)"
    return None


def package_root(unpacked: Path) -> Path:
    """The folder holding the model: the archive's single top folder, or its top."""
    entries = [p for p in unpacked.iterdir() if not p.name.startswith(("__MACOSX", "."))]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return unpacked


def read_metadata(root: Path) -> dict[str, object]:
    path = root / "metadata.json"
    if not path.is_file():
        return {}
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise PackageError(f"{path.name} in the package is not valid JSON") from None
    if not isinstance(meta, dict):
        raise PackageError(f"{path.name} in the package is not a JSON object")
    return meta


def pair_of(root: Path, meta: dict[str, object], given: Pair | None) -> Pair:
    """The pair named by the package's metadata, which must agree with ``given``."""
    source, target = _text(meta, "from_code"), _text(meta, "to_code")
    if source and target:
        try:
            found = Pair(canonical(source), canonical(target))
        except InvalidRequest as exc:
            raise PackageError(f"metadata.json: {exc.message}") from None
        if given is not None and given != found:
            raise PackageError(f"the package is for {found}, not {given}")
        return found
    if given is None:
        raise PackageError(f"{root.name} does not say its language pair: name it, e.g. en-es")
    return given


def check_metadata(root: Path, pair: Pair, version: str) -> None:
    """An Argos package's ``metadata.json`` must be for the entry's pair and version."""
    meta = read_metadata(root)
    if not meta:
        return
    pair_of(root, meta, pair)
    found = _text(meta, "package_version")
    if found and parse_version(found) != parse_version(version):
        raise PackageError(f"the package is version {found}, the index says {version}")


def _text(meta: dict[str, object], *keys: str) -> str | None:
    for key in keys:
        value = meta.get(key)
        if isinstance(value, str | int | float) and str(value).strip():
            return str(value).strip()
    return None


def _tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _mb(size: int) -> str:
    return f"{size / 2**20:.0f} MiB"


def parse_pair(text: str) -> Pair:
    """``en-es`` (or ``eng-spa``) as a pair; ``PackageError`` otherwise."""
    source, sep, target = text.partition("-")
    try:
        if not sep:
            raise InvalidRequest(f"{text!r} is not a language pair like en-es")
        return Pair(canonical(source), canonical(target))
    except InvalidRequest as exc:
        raise PackageError(exc.message) from None


__all__ = ["Installer", "NoSpace", "Provenance", "parse_pair"]
