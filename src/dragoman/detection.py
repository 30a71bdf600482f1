"""Language identification, offline (py3langid's model ships in its wheel), honest first.

Each text is identified on its own (a batch of mixed languages gets one answer per item)
among every language the model knows (142 labels), so the answer says what a text is, not
which installed pair it could be fed to. The candidates the caller prefers (the sources
of the pairs into the target, and the target itself) only break near-ties of short texts:

1. rank the text over the full label set (probabilities that sum to 1);
2. the top language is taken when it is *confident*: probability at least ``CONFIDENT``
   (0.6), or the text is longer than ``SHORT_CHARS`` (100 characters);
3. otherwise the best preferred candidate whose probability is at least ``NEAR_TIE``
   (a quarter) of the top's is taken; failing one, the top language still.

Calibrated on 80 UI strings of one to three words and 25 sentences in en, es, fr, de and
ca, each sent to es, en and fr (the pairs of the test installation). Sentences: 0.96 at
the median, 23 of 25 at 0.6 or more (the lowest 0.43, a five-word Catalan one). Short
strings: 0.15 at the median; the 10 at 0.6 or more were all right, but one of the 12 at
0.5 or more was wrong (*Página siguiente*: Extremaduran 0.52, Spanish 0.33), hence 0.6.
The rule gets 169 of the 240 short cases right and 74 of the 75 sentences, where choosing
among the preferred alone got 98 and 35: it can tell neither a text already in the target
nor one in a language that nothing translates from.

A text without letters tells nothing: it gets the first preferred language, confidence 0.
Confidence is the chosen language's probability, 0-100, as LibreTranslate reports it.

``source_lang: "auto"`` (``AUTO``) works the same everywhere: a text of ``/v1/translate``
(and LibreTranslate's and DeepL's) is detected on its own, a document of a job from a
sample of its first segments, LibreTranslate's ``/detect`` among every installed source.
What the callers do with the answer: a text detected as the target comes back as it is; a
document detected as the target makes a job that fails as it is taken (``jobs.auto``); a
language with no route into the target, direct or through a pivot, is ``UnroutedLanguage``
(a 400 naming both).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from dragoman.engines import Engines
from dragoman.errors import InvalidRequest, UnroutedLanguage, UnsupportedPair
from dragoman.languages import canonical, english_name

CONFIDENT = 0.6  # the top language's probability from which it is taken as it is
NEAR_TIE = 0.25  # a preferred language this close to the top's probability may win
SHORT_CHARS = 100  # longer texts always get their top language


@dataclass(frozen=True, slots=True)
class Detection:
    language: str  # canonical, as ``dragoman.languages.canonical`` gives it
    confidence: float  # 0-100


_lock = threading.Lock()


@cache
def _by_label() -> dict[str, str]:
    """The model's labels that are ISO 639 codes -> the canonical code."""
    codes: dict[str, str] = {}
    for label in _model().nb_classes:
        try:
            codes[label] = canonical(label)
        except InvalidRequest:  # a label that is not an ISO 639 code is never answered
            continue
    return codes


@cache
def _model() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def rank(text: str) -> list[tuple[str, float]]:
    """Every language the model knows, with its probability, best first. Blocking."""
    with _lock:
        model, codes = _model(), _by_label()
    return [(codes[label], float(p)) for label, p in model.rank(text) if label in codes]


def identify(texts: Sequence[str], preferred: Sequence[str]) -> list[Detection]:
    """Each text's language, by the module's rule; ``preferred`` (not empty) breaks
    near-ties of short texts, and its first language is the answer when nothing tells.
    Blocking (the model loads on the first call): run it in a thread."""
    return [_chosen(text, preferred) for text in texts]


def _chosen(text: str, preferred: Sequence[str]) -> Detection:
    if not any(c.isalpha() for c in text):
        return Detection(preferred[0], 0.0)
    ranked = rank(text)
    top, best = ranked[0]
    chosen = (top, best)
    if best < CONFIDENT and len(text.strip()) <= SHORT_CHARS and top not in preferred:
        near = (each for each in ranked[1:] if each[1] >= NEAR_TIE * best)
        chosen = next((each for each in near if each[0] in preferred), chosen)
    return Detection(chosen[0], round(100.0 * chosen[1], 2))


AUTO = "auto"  # a source language to be detected
SAMPLE_SEGMENTS = 200  # of a document, for detection
SAMPLE_CHARS = 5_000


def sources_into(engines: Engines, target: str, engine: str | None = None) -> list[str]:
    """The languages that can be translated into ``target`` (by ``engine``, if named),
    directly or through a pivot."""
    return sorted(
        pair.source
        for pair, names in engines.languages()
        if pair.target == target and (engine is None or engine in names)
    )


def candidates(engines: Engines, target: str, engine: str | None = None) -> list[str]:
    """``sources_into``, or ``UnsupportedPair`` when nothing translates into ``target``:
    with the target itself, what ``auto`` prefers in a near-tie."""
    found = sources_into(engines, target, engine)
    if not found:
        raise UnsupportedPair(
            f"no installed pair translates into {target}; see /v1/languages",
            target=target,
            missing="target",
        )
    return found


def preferring(sources: Sequence[str], target: str) -> list[str]:
    """What ``identify`` prefers for a text into ``target``: the sources that translate into
    it (the first of them when nothing tells), and the target itself."""
    return [*sources, target]


def check_routes(
    found: Sequence[Detection],
    sources: Collection[str],
    target: str,
    names: Sequence[str] = (),
) -> None:
    """``UnroutedLanguage`` for the first language detected that is neither ``target`` nor
    one of ``sources`` (those with a route into it); ``names`` names what each detection
    is of (by default "the text", or "text n" of several)."""
    for at, detection in enumerate(found):
        language = detection.language
        if language == target or language in sources:
            continue
        name = names[at] if names else "the text" if len(found) == 1 else f"text {at + 1}"
        raise UnroutedLanguage(
            f"{name} was detected as {english_name(language)} ({language}), and no installed "
            f"pair translates {language} into {target}, directly or through a pivot; name "
            "the source language, or see /v1/languages",
            source=language,
            target=target,
        )


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
