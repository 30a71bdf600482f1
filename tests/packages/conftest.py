"""A tiny CTranslate2 model built once, packaged per test, served from 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from dragoman.engines import Pair
from dragoman.engines.tiny import build_tiny_models
from tests.conftest import CORPUS_DIR
from tests.packages.server import PackageServer, serve

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both engines' folders of a tiny en-fr model (read-only: copy before changing)."""
    out = tmp_path_factory.mktemp("tiny")
    return build_tiny_models(
        out,
        pair=Pair("en", "fr"),
        source_corpus=CORPUS_DIR / "en_licenses.txt",
        target_corpus=CORPUS_DIR / "fr_sentences.txt",
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


@pytest.fixture
def server(repo: Path) -> Iterator[PackageServer]:
    with serve(repo) as running:
        yield running


@pytest.fixture
def models(tmp_path: Path) -> Path:
    return tmp_path / "models"
