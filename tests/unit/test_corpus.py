"""The corpora in the repository: the tests' own, and the copy packaged for tiny models."""

from __future__ import annotations

from dragoman.engines.tiny import default_corpus
from tests.conftest import CORPUS_DIR


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
