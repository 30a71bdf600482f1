"""LibreTranslate's translation and detection, done by dragoman's own parts.

Plain text goes through ``service.translator``, the dynamic batcher of ``/v1/translate``, so
the facade's answers equal v1's and its requests share engine passes with v1's. HTML goes
through the markup path of file jobs (``formats`` + ``engines.translate_marked``), in
memory, so tags stay on the words they were on. ``source=auto`` detects each text on its
own, among the sources of the installed pairs into the target.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from dragoman.api.compat.lt_request import LtError
from dragoman.api.deps import ApiParts
from dragoman.batcher import Asker
from dragoman.detection import Detection, detect, per_language
from dragoman.errors import InvalidRequest
from dragoman.formats import by_name, for_file, prepare, rebuild
from dragoman.glossaries import Terms, keep_terms
from dragoman.languages import canonical
from dragoman.models import Pair

_TAG = re.compile(r"<[^>]*>")
_SAMPLE_UNITS = 200  # of a file, for source=auto
_SAMPLE_CHARS = 5_000

NAMES = {
    "ar": "Arabic", "ast": "Asturian", "br": "Breton", "ca": "Catalan", "cs": "Czech",
    "cy": "Welsh", "da": "Danish", "de": "German", "el": "Greek", "en": "English",
    "eo": "Esperanto", "es": "Spanish", "eu": "Basque", "fi": "Finnish", "fr": "French",
    "ga": "Irish", "gl": "Galician", "he": "Hebrew", "hi": "Hindi", "hu": "Hungarian",
    "id": "Indonesian", "is": "Icelandic", "it": "Italian", "ja": "Japanese", "ko": "Korean",
    "nb": "Norwegian Bokmål", "nl": "Dutch", "nn": "Norwegian Nynorsk", "oc": "Occitan",
    "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak",
    "sl": "Slovenian", "sv": "Swedish", "tr": "Turkish", "uk": "Ukrainian", "zh": "Chinese",
}  # fmt: skip


def name_of(code: str) -> str:
    return NAMES.get(code, code)


@dataclass(frozen=True, slots=True)
class Outcome:
    texts: list[str]
    detected: list[Detection] | None  # per text, with source=auto


def installed(service: ApiParts) -> set[Pair]:
    return {pair for pair, _ in service.engines.languages()}


def language(code: str) -> str:
    """A code as dragoman spells it, or LibreTranslate's "xx is not supported"."""
    try:
        return canonical(code)
    except InvalidRequest:
        raise LtError(f"{code} is not supported") from None


def check_limits(service: ApiParts, texts: Sequence[str]) -> None:
    """LibreTranslate's limits, with its message: the characters of each text, the count."""
    chars = service.settings.max_segment_chars
    for text in texts:
        if len(text) > chars:
            raise LtError(f"Invalid request: request ({len(text)}) exceeds text limit ({chars})")
    count = service.settings.sync_max_segments
    if len(texts) > count:
        raise LtError(f"Invalid request: request ({len(texts)}) exceeds text limit ({count})")


def pair_of(service: ApiParts, source: str, target: str) -> Pair:
    """The installed pair ``source`` → ``target`` (both explicit), or LibreTranslate's 400."""
    src, tgt = language(source), language(target)
    pairs = installed(service)
    if src not in {p.source for p in pairs}:
        raise LtError(f"{source} is not supported")
    if tgt not in {p.target for p in pairs}:
        raise LtError(f"{target} is not supported")
    if Pair(src, tgt) not in pairs:
        raise LtError(
            f"{name_of(tgt)} ({tgt}) is not available as a target language from "
            f"{name_of(src)} ({src})"
        )
    return Pair(src, tgt)


async def detect_sources(
    texts: Sequence[str], candidates: Sequence[str], *, html: bool = False
) -> list[Detection]:
    """The best candidate for each text (confidence 0 when nothing can be told)."""
    plain = [_TAG.sub(" ", t) if html else t for t in texts]
    ranked = await asyncio.to_thread(detect, plain, candidates)
    return [found[0] if found else Detection(candidates[0], 0.0) for found in ranked]


def auto_pair(service: ApiParts, target: str) -> tuple[str, list[str]]:
    """The target of a ``source=auto`` request and the sources that could be detected."""
    tgt = language(target)
    candidates = sorted({p.source for p in installed(service) if p.target == tgt})
    if not candidates:
        raise LtError(f"{target} is not supported")
    return tgt, candidates


async def file_pair(service: ApiParts, source: str, target: str, name: str, data: bytes) -> Pair:
    """The pair of an upload; ``auto`` detects the language of its first units' text."""
    if source.lower() != "auto":
        return pair_of(service, source, target)
    tgt, candidates = auto_pair(service, target)
    units = await asyncio.to_thread(for_file(name).extract, data, filename=name)
    sample = " ".join(unit.plain for unit in units[:_SAMPLE_UNITS])
    (found,) = await detect_sources([sample[:_SAMPLE_CHARS]], candidates)
    return Pair(found.language, tgt)


async def translate(
    service: ApiParts,
    source: str,
    target: str,
    texts: Sequence[str],
    *,
    html: bool,
    segmentation: bool = True,
    terms: Terms | None = None,
    asker: Asker | None = None,
) -> Outcome:
    """Each text translated; with ``source == "auto"``, each from its detected language.
    ``segmentation`` (HTML only) splits each block into sentences before translating it.
    ``terms`` (a glossary's, for an explicit source) are kept in plain and HTML texts.
    ``asker``: plain texts go through that tenant's segment cache."""
    if source.lower() != "auto":
        pair = pair_of(service, source, target)
        return Outcome(
            await _translate(service, pair, texts, html, segmentation, terms, asker), None
        )
    tgt, candidates = auto_pair(service, target)
    detected = await detect_sources(texts, candidates, html=html)
    results = await per_language(
        texts,
        detected,
        lambda src, mine: _translate(
            service, Pair(src, tgt), mine, html, segmentation, asker=asker
        ),
    )
    return Outcome(results, detected)


async def _translate(
    service: ApiParts,
    pair: Pair,
    texts: Sequence[str],
    html: bool,
    segmentation: bool,
    terms: Terms | None = None,
    asker: Asker | None = None,
) -> list[str]:
    if not html:
        return await service.translator.translate(
            pair.source, pair.target, texts, terms=terms, asker=asker
        )
    return await _translate_html(service, pair, texts, segmentation, terms)


async def _translate_html(
    service: ApiParts,
    pair: Pair,
    texts: Sequence[str],
    segmentation: bool,
    terms: Terms | None = None,
) -> list[str]:
    """Each text as a one-file HTML document: prepared, translated with its codes, rebuilt."""
    fmt = by_name("html")
    prepared = [
        await asyncio.to_thread(
            prepare,
            fmt,
            t.encode(),
            filename="q.html",
            source_lang=pair.source,
            segmentation=segmentation,
        )
        for t in texts
    ]
    segments = [s for p in prepared for s in p.segments]
    if not segments:
        return list(texts)
    engine = service.engines.resolve(pair).name
    call = functools.partial(service.engines.translate_marked, engine, pair)
    translated = await keep_terms(call, [(s, terms) for s in segments], marked=True)
    results, start = [], 0
    for text, p in zip(texts, prepared, strict=True):
        mine = translated[start : start + len(p.segments)]
        start += len(p.segments)
        rebuilt = await asyncio.to_thread(
            rebuild,
            fmt,
            text.encode(),
            filename="q.html",
            layout=p.layout,
            translations=mine,
            target_lang=pair.target,
        )
        results.append(rebuilt.decode())
    return results
