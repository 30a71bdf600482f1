"""Language identification of short texts, offline: py3langid's model ships in its wheel.

Each text is identified on its own (a batch of mixed languages gets one answer per item),
among a given set of languages only: the sources of the installed pairs, so the answer is
always a language the service can translate from. Confidence is 0-100, as LibreTranslate
reports it. The model is loaded once, on first use; one identifier is kept per language set,
because restricting an identifier changes it.

``source_lang: "auto"`` (``AUTO``) works the same everywhere: a text of ``/v1/translate``
is detected on its own, a document of a job from a sample of its first segments, each among
the sources of the installed pairs into the target.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from dragoman.engines import Engines
from dragoman.errors import InvalidRequest, UnsupportedPair
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


AUTO = "auto"  # a source language to be detected
SAMPLE_SEGMENTS = 200  # of a document, for detection
SAMPLE_CHARS = 5_000


def sources_into(engines: Engines, target: str, engine: str | None = None) -> list[str]:
    """The languages that can be translated into ``target`` (by ``engine``, if named):
    what a text of unknown language may be detected as."""
    return sorted(
        pair.source
        for pair, names in engines.languages()
        if pair.target == target and (engine is None or engine in names)
    )


def candidates(engines: Engines, target: str, engine: str | None = None) -> list[str]:
    """``sources_into``, or ``UnsupportedPair`` when nothing translates into ``target``:
    what ``auto`` may be detected as, for a text of ``/v1/translate`` or a job's document."""
    found = sources_into(engines, target, engine)
    if not found:
        raise UnsupportedPair(
            f"no installed pair translates into {target}; see /v1/languages",
            target=target,
            missing="target",
        )
    return found


def best(texts: Sequence[str], languages: Collection[str]) -> list[Detection]:
    """The most likely of ``languages`` for each text (confidence 0 when nothing tells).
    Blocking: run it in a thread."""
    fallback = min(languages)
    return [found[0] if found else Detection(fallback, 0.0) for found in detect(texts, languages)]


def sample(segments: Sequence[str]) -> str:
    """What detection reads of a document: its first segments, up to ``SAMPLE_CHARS``."""
    return " ".join(segments[:SAMPLE_SEGMENTS])[:SAMPLE_CHARS]


async def per_language(
    texts: Sequence[str],
    found: Sequence[Detection],
    translate: Callable[[str, list[str]], Awaitable[list[str]]],
) -> list[str]:
    """Each text translated from its detected language: ``translate(language, texts)`` once
    per language, all at once, the answers in the texts' order."""
    groups: dict[str, list[int]] = {}
    for i, detection in enumerate(found):
        groups.setdefault(detection.language, []).append(i)
    outs = await asyncio.gather(
        *(translate(language, [texts[i] for i in where]) for language, where in groups.items())
    )
    results = list(texts)
    for where, out in zip(groups.values(), outs, strict=True):
        for i, text in zip(where, out, strict=True):
            results[i] = text
    return results
