"""Language identification of short texts, offline: py3langid's model ships in its wheel.

Each text is identified on its own (a batch of mixed languages gets one answer per item),
among a given set of languages only: the sources of the installed pairs, so the answer is
always a language the service can translate from. Confidence is 0-100, as LibreTranslate
reports it. The model is loaded once, on first use; one identifier is kept per language set,
because restricting an identifier changes it.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from dragoman.errors import InvalidRequest
from dragoman.languages import canonical


@dataclass(frozen=True, slots=True)
class Detection:
    language: str  # canonical, as ``dragoman.languages.canonical`` gives it
    confidence: float  # 0-100


_lock = threading.Lock()


@cache
def _labels() -> dict[str, str]:
    """The model's languages: canonical code -> the model's label."""
    labels: dict[str, str] = {}
    for label in _full().labels:
        try:
            labels.setdefault(canonical(label), label)
        except InvalidRequest:  # a label that is not an ISO 639 code is never asked for
            continue
    return labels


@cache
def _full() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@cache
def _identifier(labels: frozenset[str]) -> Any:
    """A shallow copy of the full one: restricting replaces its tables, never edits them."""
    identifier = copy.copy(_full())
    identifier.set_languages(sorted(labels))
    return identifier


def supported(languages: Collection[str]) -> list[str]:
    """Those of ``languages`` (canonical codes) that the model knows."""
    with _lock:
        known = _labels()
    return sorted(code for code in set(languages) if code in known)


def detect(texts: Sequence[str], languages: Collection[str]) -> list[list[Detection]]:
    """For each text, the candidate languages best first. Blocking (the model loads on the
    first call): run it in a thread. An empty answer for a text means no candidate is known."""
    codes = supported(languages)
    if not codes:
        return [[] for _ in texts]
    with _lock:
        by_label = {_labels()[code]: code for code in codes}
        identifier = _identifier(frozenset(by_label))
    return [_ranked(identifier, text, by_label) for text in texts]


def _ranked(identifier: Any, text: str, by_label: dict[str, str]) -> list[Detection]:
    if len(by_label) == 1:
        (code,) = by_label.values()
        return [Detection(code, 100.0 if _has_letters(text) else 0.0)]
    if not _has_letters(text):
        return [Detection(code, 0.0) for code in by_label.values()]
    ranked = identifier.rank(text)
    return [Detection(by_label[label], round(100.0 * float(p), 2)) for label, p in ranked]


def _has_letters(text: str) -> bool:
    return any(c.isalpha() for c in text)
