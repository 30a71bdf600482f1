"""``dragoman models``: the neural models on disk, and a tiny one to try the neural path."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dragoman.cli.app import app, console, settings_from, setup_logging

models_app = typer.Typer(help="Neural models on disk (DRAGOMAN_MODELS_DIR).", no_args_is_help=True)
app.add_typer(models_app, name="models")


@models_app.command("list")
def models_list(
    models_dir: Annotated[Path | None, typer.Option(help="Default: DRAGOMAN_MODELS_DIR")] = None,
) -> None:
    """The pairs each engine serves, the pair's default engine first."""
    from dragoman.engines import open_engines

    settings = settings_from(models_dir=models_dir)
    table = Table("pair", "engines")
    for pair, names in open_engines(settings).languages():
        table.add_row(str(pair), ", ".join(names))
    Console().print(table)


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
