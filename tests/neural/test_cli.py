"""``dragoman models``: build the tiny models, then list what the models folder serves."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from dragoman.cli import app
from tests.conftest import CORPUS_DIR


def test_models_tiny_builds_both_engines_and_models_list_shows_them(tmp_path: Path) -> None:
    runner = CliRunner()
    models = tmp_path / "models"
    built = runner.invoke(app, ["models", "tiny", str(models), "--corpus-dir", str(CORPUS_DIR)])
    assert built.exit_code == 0, built.output
    assert (models / "en-fr" / "ctranslate2" / "model.bin").is_file()
    assert (models / "en-fr" / "transformers" / "config.json").is_file()
    listed = runner.invoke(app, ["models", "list", "--models-dir", str(models)])
    assert listed.exit_code == 0, listed.output
    assert "en-fr" in listed.output
    assert "ctranslate2, transformers" in listed.output
