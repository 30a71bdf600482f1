"""The corpora in the repository: the tests' own, and the copy packaged for tiny models."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from dragoman.engines.tiny import default_corpus
from tests.conftest import CORPUS_DIR


def _script(name: str) -> Any:
    """A corpus script of tests/data (a folder of data, not a package) as a module."""
    spec = importlib.util.spec_from_file_location(name, CORPUS_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


short_corpus = _script("make_short_corpus")


def test_the_packaged_tiny_corpus_is_the_tests_corpus() -> None:
    english, french = default_corpus()

    assert english.read_bytes() == (CORPUS_DIR / "en_licenses.txt").read_bytes()
    assert french.read_bytes() == (CORPUS_DIR / "fr_sentences.txt").read_bytes()


def test_every_corpus_line_is_one_segment_of_reasonable_length() -> None:
    for name in ("en_licenses.txt", "fr_sentences.txt"):
        lines = (CORPUS_DIR / name).read_text(encoding="utf-8").splitlines()

        assert len(lines) >= 80, name
        assert all(line.strip() == line and 0 < len(line) < 1000 for line in lines), name
        assert len(set(lines)) == len(lines), name


def test_the_short_corpus_is_lines_of_about_a_dozen_plain_words() -> None:
    lines = (CORPUS_DIR / "en_short.txt").read_text(encoding="utf-8").splitlines()
    words = [len(line.split()) for line in lines]

    assert 800 <= len(lines) <= 2000
    assert len(set(lines)) == len(lines)
    assert min(words) >= 8 and max(words) <= 25
    assert 9 <= sum(words) / len(words) <= 13
    assert all(line.isascii() and line[0].isupper() for line in lines)


@pytest.mark.skipif(
    not short_corpus.SOURCE_DIR.is_dir(), reason="Debian's python3.11 library is not installed"
)
def test_the_short_corpus_is_what_its_script_makes_of_its_source() -> None:
    stored = (CORPUS_DIR / "en_short.txt").read_text(encoding="utf-8")

    assert short_corpus.build() == stored
