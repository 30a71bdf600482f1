"""Tiny random models, built once per test session: real models that translate nonsense."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from dragoman.engines import Pair
from dragoman.engines.tiny import build_tiny_models
from tests.conftest import CORPUS_DIR

EN_FR = Pair("en", "fr")

# Test processes run side by side on few cores: one thread each, rather than every process
# spinning a thread per core against the others.
torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A read-only models dir holding en-fr for both neural engines."""
    out = tmp_path_factory.mktemp("tiny-models")
    build_tiny_models(
        out,
        pair=EN_FR,
        source_corpus=CORPUS_DIR / "en_licenses.txt",
        target_corpus=CORPUS_DIR / "fr_sentences.txt",
    )
    return out


@pytest.fixture
def models_dir(tiny_models: Path, tmp_path: Path) -> Path:
    """A models dir of this test's own, to add pairs to or break: en-fr, and en-de as a copy."""
    models = tmp_path / "models"
    shutil.copytree(tiny_models / str(EN_FR), models / str(EN_FR))
    shutil.copytree(tiny_models / str(EN_FR), models / "en-de")
    return models
