"""``dragoman models``: the catalogue, installing models you can trust, and what is on disk."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from dragoman.cli.app import ExitCode, app, console, fail

if TYPE_CHECKING:
    from dragoman.packages.install import Installer
    from dragoman.settings import Settings

models_app = typer.Typer(
    help="Neural models: the catalogue, install, verify, remove, air-gapped bundles.",
    no_args_is_help=True,
)
app.add_typer(models_app, name="models")

ModelsDir = Annotated[
    Path | None, typer.Option("--models-dir", help="Default: DRAGOMAN_MODELS_DIR (./models)")
]
IndexOption = Annotated[
    str | None, typer.Option("--index", help="URL or path; default: DRAGOMAN_MODEL_INDEX")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")]


class ProgressMode(StrEnum):
    AUTO = "auto"  # a bar on a terminal, plain lines otherwise
    JSON = "json"  # NDJSON on stdout
    NONE = "none"


def _settings(**overrides: Any) -> Settings:
    from dragoman.settings import Settings

    logging.basicConfig(level=os.environ.get("DRAGOMAN_LOG_LEVEL", "WARNING"))
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


@contextmanager
def _failures() -> Iterator[None]:
    """A failure ends the command with one line and no traceback."""
    from dragoman.errors import DragomanError, InvalidRequest

    try:
        yield
    except InvalidRequest as exc:
        fail(exc.message, ExitCode.USAGE)
    except DragomanError as exc:
        fail(exc.message, ExitCode.FAILED)
    except OSError as exc:
        fail(f"{exc.filename or 'models folder'}: {exc.strerror or exc}", ExitCode.FAILED)


@models_app.command("catalogue")
def models_catalogue(
    index: IndexOption = None, models_dir: ModelsDir = None, as_json: JsonOption = False
) -> None:
    """What can be installed: the index's neural packages and Debian's Apertium pairs (those
    are listed even when the index cannot be read)."""
    from dragoman.packages.catalogue import catalogue_rows
    from dragoman.packages.errors import PackageError
    from dragoman.packages.http import Network
    from dragoman.packages.index import IndexEntry, read_index

    settings = _settings(models_dir=models_dir, model_index=index)
    entries: list[IndexEntry] = []
    try:
        entries = read_index(settings.model_index, Network(offline=settings.offline))
    except PackageError as exc:
        typer.echo(f"dragoman: {exc.message}; neural packages are not listed", err=True)
    with _failures():
        rows = catalogue_rows(entries, settings.models_dir)
    if not rows:
        fail("nothing to list: no package index and no Debian Apertium pairs", ExitCode.FAILED)
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("pair", "kind", "version", "size", "licence", "status", "Debian")
    for row in rows:
        status = "upgradable" if row["upgradable"] else "installed" if row["installed"] else ""
        size = f"{row['size'] / 2**20:.0f} MiB" if row["size"] else ""
        table.add_row(
            row["pair"],
            row["kind"],
            row["version"] if row["kind"] == "neural" else "",
            size,
            row["licence"] or "",
            status,
            row["package"].removeprefix("apertium-") if row["kind"] == "rule-based" else "",
        )
    Console().print(table)


@models_app.command("install")
def models_install(
    pairs: Annotated[list[str] | None, typer.Argument(help="Pairs such as en-es")] = None,
    source: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="No network: an .argosmodel file, a CTranslate2 or Hugging Face Marian folder,"
            " or a bundle made by `models export`",
        ),
    ] = None,
    index: IndexOption = None,
    models_dir: ModelsDir = None,
    accept_licence: Annotated[
        bool, typer.Option("--accept-licence", help="Accept a non-commercial licence")
    ] = False,
    licence: Annotated[
        str | None, typer.Option("--licence", help="The licence of a model installed --from")
    ] = None,
    force: Annotated[bool, typer.Option(help="Install again even if up to date")] = False,
    progress: Annotated[ProgressMode, typer.Option(help="auto, json (NDJSON) or none")] = (
        ProgressMode.AUTO
    ),
) -> None:
    """Download, verify, probe and install models; each appears whole or not at all."""
    settings = _settings(models_dir=models_dir, model_index=index)
    names = pairs or []
    if source is None and not names:
        fail("name a pair to install (e.g. en-es), or a file with --from", ExitCode.USAGE)
    if source is not None and len(names) > 1:
        fail("--from installs one model: name at most one pair", ExitCode.USAGE)
    with _failures():
        if source is not None:
            _install_from(settings, source, names, licence, accept_licence, progress)
            return
        from dragoman.packages.http import Network
        from dragoman.packages.index import newest, read_index
        from dragoman.packages.install import parse_pair

        wanted = [parse_pair(name) for name in names]
        network = Network(offline=settings.offline)
        entries = read_index(settings.model_index, network)
        chosen = [newest(entries, pair) for pair in wanted]
        for entry in chosen:
            installer = _installer(settings, str(entry.pair), progress, network)
            installer.install_entry(entry, accept_licence=accept_licence, force=force)


def _install_from(
    settings: Settings,
    source: Path,
    names: list[str],
    licence: str | None,
    accept_licence: bool,
    progress: ProgressMode,
) -> None:
    from dragoman.packages.bundle import import_bundle, is_bundle
    from dragoman.packages.install import parse_pair

    pair = parse_pair(names[0]) if names else None
    installer = _installer(settings, names[0] if names else source.name, progress)
    if not source.exists():
        fail(f"{source}: no such file or folder", ExitCode.USAGE)
    if source.is_dir():
        installer.install_folder(source, pair=pair, licence=licence, accept_licence=accept_licence)
    elif is_bundle(source):
        for manifest in import_bundle(installer, source):
            console.print(f"imported {manifest.pair} ({manifest.engine} {manifest.version})")
    else:
        installer.install_archive(source, pair=pair, licence=licence, accept_licence=accept_licence)


def _installer(
    settings: Settings, label: str, progress: ProgressMode, network: object = None
) -> Installer:
    from dragoman.packages.http import Network
    from dragoman.packages.install import Installer
    from dragoman.packages.report import JsonReporter, QuietReporter, Reporter, RichReporter

    reporter: Reporter
    if progress is ProgressMode.JSON:
        reporter = JsonReporter(label)
    elif progress is ProgressMode.NONE:
        reporter = QuietReporter()
    else:
        reporter = RichReporter(label, console)
    if not isinstance(network, Network):
        network = Network(offline=settings.offline)
    return Installer(settings.models_dir, network=network, reporter=reporter)


@models_app.command("list")
def models_list(models_dir: ModelsDir = None, as_json: JsonOption = False) -> None:
    """Installed models with version, licence and attribution, and every pair served."""
    from dragoman.engines import open_engines
    from dragoman.packages.layout import ModelsFolder

    settings = _settings(models_dir=models_dir)
    models = [
        {
            "pair": f"{path.parent.name}",
            "engine": path.name,
            "version": m.version if m else None,
            "licence": m.licence if m else None,
            "attribution": m.attribution if m else None,
            "installed_at": m.installed_at.isoformat() if m else None,
            "source": m.source if m else None,
        }
        for path, m in ModelsFolder(settings.models_dir).installed()
    ]
    served: list[dict[str, Any]] = [
        {"pair": str(pair), "engines": names} for pair, names in open_engines(settings).languages()
    ]
    if as_json:
        typer.echo(json.dumps({"models": models, "pairs": served}, indent=2))
        return
    out = Console()
    table = Table("pair", "engine", "version", "licence", "installed", title="Installed models")
    for row in models:
        licence = row["licence"] or "unknown"
        if row["attribution"]:
            licence += f"\n{row['attribution']}"
        table.add_row(
            row["pair"],
            row["engine"],
            row["version"] or "(by hand)",
            licence,
            (row["installed_at"] or "")[:19],
        )
    out.print(table)
    pairs = Table("pair", "engines", title="Pairs served (default engine first)")
    for item in served:
        pairs.add_row(item["pair"], ", ".join(item["engines"]))
    out.print(pairs)


@models_app.command("verify")
def models_verify(
    pair: Annotated[str | None, typer.Argument(help="One pair; default: every model")] = None,
    models_dir: ModelsDir = None,
) -> None:
    """Re-hashes every file against dragoman-model.json; exits 1 naming a model that differs."""
    from dragoman.engines.manifest import mismatches
    from dragoman.packages.layout import ModelsFolder

    settings = _settings(models_dir=models_dir)
    installed = ModelsFolder(settings.models_dir).installed()
    if pair is not None:
        with _failures():
            from dragoman.packages.install import parse_pair

            name = str(parse_pair(pair))
        installed = [(path, m) for path, m in installed if path.parent.name == name]
        if not installed:
            fail(f"{name} is not installed in {settings.models_dir}", ExitCode.FAILED)
    bad = []
    for path, manifest in installed:
        label = f"{path.parent.name} ({path.name})"
        if manifest is None:
            console.print(f"{label}: no dragoman-model.json (laid out by hand), not verified")
            continue
        problems = mismatches(path, manifest)
        if problems:
            bad.append(path.parent.name)
            console.print(f"{label}: FAILED: {', '.join(problems[:5])}")
        else:
            console.print(f"{label}: OK, {len(manifest.files)} files")
    if bad:
        fail(f"verification failed for {', '.join(sorted(set(bad)))}", ExitCode.FAILED)


@models_app.command("remove")
def models_remove(
    pair: Annotated[str, typer.Argument(help="The pair, e.g. en-es")],
    engine: Annotated[str, typer.Option(help="The engine whose model goes")] = "ctranslate2",
    models_dir: ModelsDir = None,
) -> None:
    """Removes a model; a running service stops offering it at once."""
    from dragoman.packages.install import parse_pair
    from dragoman.packages.layout import ModelsFolder

    settings = _settings(models_dir=models_dir)
    with _failures():
        wanted = parse_pair(pair)
        folder = ModelsFolder(settings.models_dir)
        with folder.lock(wanted):
            removed = folder.take_out(wanted, engine)
    if not removed:
        fail(f"no {engine} model for {wanted} in {settings.models_dir}", ExitCode.FAILED)
    console.print(f"removed {wanted} ({engine})")


@models_app.command("export")
def models_export(
    pairs: Annotated[list[str], typer.Argument(help="Pairs to put in the bundle")],
    out: Annotated[Path, typer.Option("-o", "--output", help="The bundle (.tar) to write")],
    models_dir: ModelsDir = None,
) -> None:
    """Writes installed models and their manifests to one tar for an air-gapped machine."""
    from dragoman.packages.bundle import export_bundle
    from dragoman.packages.install import parse_pair

    settings = _settings(models_dir=models_dir)
    with _failures():
        exported, skipped = export_bundle(settings.models_dir, [parse_pair(p) for p in pairs], out)
    for folder in skipped:
        console.print(f"left out {folder}: no dragoman-model.json (laid out by hand)")
    for manifest in exported:
        console.print(f"exported {manifest.pair} ({manifest.engine} {manifest.version})")
    console.print(f"wrote {out}: dragoman models import {out.name} on the other side")


@models_app.command("import")
def models_import(
    bundle: Annotated[Path, typer.Argument(help="A bundle made by `dragoman models export`")],
    models_dir: ModelsDir = None,
) -> None:
    """Installs every model of a bundle after checking each file against its manifest."""
    from dragoman.packages.bundle import import_bundle, is_bundle

    settings = _settings(models_dir=models_dir)
    if not is_bundle(bundle):
        fail(f"{bundle} is not a bundle made by `dragoman models export`", ExitCode.USAGE)
    with _failures():
        imported = import_bundle(_installer(settings, bundle.name, ProgressMode.AUTO), bundle)
    for manifest in imported:
        console.print(f"imported {manifest.pair} ({manifest.engine} {manifest.version})")


@models_app.command("debian-packages", hidden=True)
def models_debian_packages(pairs: Annotated[list[str], typer.Argument()]) -> None:
    """The Debian Apertium packages of pairs such as eng-spa (for `make run PAIRS=...`)."""
    from dragoman.packages.debian import packages_for

    with _failures():
        typer.echo(" ".join(packages_for(pairs)))


@models_app.command("tiny")
def models_tiny(
    models_dir: Annotated[Path, typer.Argument(help="Where to write <pair>/<engine>/")],
    corpus_dir: Annotated[
        Path | None,
        typer.Option(
            help="Folder with en_licenses.txt and fr_sentences.txt; default: the packaged corpus"
        ),
    ] = None,
) -> None:
    """Build a tiny random en-fr model for both neural engines (for trying the neural path
    out and for tests; its translations are nonsense)."""
    from dragoman.cli.app import setup_logging
    from dragoman.engines.tiny import build_tiny_models

    setup_logging()
    if corpus_dir is None:
        built = build_tiny_models(models_dir)
    else:
        built = build_tiny_models(
            models_dir,
            source_corpus=corpus_dir / "en_licenses.txt",
            target_corpus=corpus_dir / "fr_sentences.txt",
        )
    for engine, path in built.items():
        console.print(f"{engine}: {path}")
