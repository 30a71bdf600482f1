"""Air-gapped hand-over: installed models and their manifests in one tar, verified file by
file against those manifests when imported on the other side."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from dragoman.engines.manifest import MANIFEST, Manifest, mismatches, read_manifest
from dragoman.models import Pair
from dragoman.packages.errors import PackageError
from dragoman.packages.install import Installer, parse_pair, probe

BUNDLE = "dragoman-bundle.json"


def export_bundle(
    models_dir: Path, pairs: list[Pair], out: Path
) -> tuple[list[Manifest], list[Path]]:
    """Writes the installed models of ``pairs`` (every engine) to the tar ``out``; returns
    them, and the folders left out because they have no manifest (laid out by hand)."""
    chosen: list[tuple[Path, Manifest]] = []
    skipped: list[Path] = []
    for pair in pairs:
        folder = models_dir / str(pair)
        found = [(d, read_manifest(d)) for d in sorted(folder.glob("*")) if d.is_dir()]
        if not any(manifest for _, manifest in found):
            why = "has no model with a " + MANIFEST if found else "is not installed"
            raise PackageError(
                f"{pair} {why} in {models_dir}: install it with dragoman models install"
                " (--from for a model laid out by hand) so it can be verified"
            )
        chosen += [(d, m) for d, m in found if m is not None]
        skipped += [d for d, m in found if m is None]
    partial = out.with_name(out.name + ".partial")
    with tarfile.open(partial, "w") as tar:
        index = {"format": 1, "models": [f"{m.pair}/{m.engine}" for _, m in chosen]}
        info = tarfile.TarInfo(BUNDLE)
        data = json.dumps(index).encode()
        info.size = len(data)
        import io

        tar.addfile(info, io.BytesIO(data))
        for model_dir, manifest in chosen:
            tar.add(model_dir, arcname=f"{manifest.pair}/{manifest.engine}")
    partial.replace(out)
    return [m for _, m in chosen], skipped


def is_bundle(path: Path) -> bool:
    if not path.is_file() or not tarfile.is_tarfile(path):
        return False
    with tarfile.open(path) as tar:
        try:
            tar.getmember(BUNDLE)
        except KeyError:
            return False
    return True


def import_bundle(installer: Installer, bundle: Path) -> list[Manifest]:
    """Installs every model of ``bundle`` whose files match its manifest; refuses the
    bundle before installing anything when one does not."""
    from dragoman.packages.unpack import unpack

    folder = installer.folder
    with folder.staging() as staging:
        unpack(bundle, staging / "bundle", max_bytes=8 * bundle.stat().st_size + 2**20)
        names = _names(staging / "bundle")
        checked = []
        for name in names:
            model_dir = staging / "bundle" / name
            manifest = read_manifest(model_dir)
            if manifest is None or f"{manifest.pair}/{manifest.engine}" != name:
                raise PackageError(f"{bundle.name}: {name} has no matching {MANIFEST}")
            problems = mismatches(model_dir, manifest)
            if problems:
                raise PackageError(f"{bundle.name}: {name} does not verify: {problems[0]}")
            checked.append((model_dir, manifest))
        for model_dir, manifest in checked:
            pair = parse_pair(manifest.pair)
            served = staging / "served" / manifest.pair / manifest.engine
            served.parent.mkdir(parents=True)
            model_dir.rename(served)
            if manifest.engine == "ctranslate2":
                probe(staging / "served", pair, manifest.engine)
            with folder.lock(pair):
                folder.put(served, pair, manifest.engine)
        return [m for _, m in checked]


def _names(root: Path) -> list[str]:
    try:
        index = json.loads((root / BUNDLE).read_text(encoding="utf-8"))
        names = index["models"]
    except (OSError, ValueError, KeyError, TypeError):
        raise PackageError(f"not a dragoman bundle: {BUNDLE} is missing or unreadable") from None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise PackageError(f"not a dragoman bundle: {BUNDLE} lists no models")
    for name in names:
        pair, _, engine = name.partition("/")
        parse_pair(pair)
        if not engine or "/" in engine or engine.startswith("."):
            raise PackageError(f"not a dragoman bundle: bad model name {name!r}")
    return names
