"""The synchronous use case: a few texts translated now, whichever API asks.

``/v1/translate``, LibreTranslate's ``/translate`` and ``/detect`` and DeepL's
``/v2/translate`` read their own request shapes into one ``TextRequest`` and shape the
``TextResult`` back; everything between happens here, once, in this order:

1. the limits: the number of texts, then each text (``validation.check_segments``);
2. the languages: the pair installed, or for ``auto`` the sources that translate into the
   target (directly or through a pivot);
3. the glossary, if one is named: the tenant's, with a dictionary for the pair;
4. the charge to the tenant's usage (every character given, tags included);
5. detection, for ``auto``: each text on its own (an HTML text by its words), by
   ``detection``'s rule; a text detected as the target comes back as it is, and one in a
   language with no route into the target refuses the request (``UnroutedLanguage``);
6. each text through the tenant's segment cache and the dynamic batcher: a plain text as
   it is, an HTML text as the marked segments of a file job (``html.py``), with the
   glossary's terms masked before the cache and unmasked after. A request that names
   memories takes their exact matches first, as a job does at submission: a segment
   matched is neither looked up in the cache nor translated (nor masked), and the others
   go on exactly as they would without the memories.

Refusals are dragoman's errors with fields (``UnsupportedPair.missing``,
``PayloadTooLarge.count``), so each API words its own message. Larger work belongs in a job.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypeVar

from dragoman.detection import (
    AUTO,
    Detection,
    candidates,
    check_routes,
    identify,
    per_language,
    preferring,
)
from dragoman.engines import Engines, Pair
from dragoman.engines.view import in_one_view
from dragoman.errors import PayloadTooLarge, UnsupportedPair
from dragoman.glossaries import Terminology, Terms, keep_terms
from dragoman.languages import canonical
from dragoman.metrics import Metrics
from dragoman.models import Document
from dragoman.reuse import Reuse
from dragoman.reuse.memories import TranslationMemories
from dragoman.settings import Settings
from dragoman.translation.batcher import DynamicBatcher
from dragoman.translation.html import translate_html
from dragoman.usage import UsageMeter
from dragoman.validation import check_segments

T = TypeVar("T")

__all__ = ["DynamicBatcher", "TextRequest", "TextResult", "TextTranslation"]

Kind = Literal["plain", "html"]

_TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True, slots=True)
class TextRequest:
    tenant: str | None
    source: str  # a language code, or "auto": each text's own is detected
    target: str
    texts: Sequence[str]
    engine: str | None = None  # None: the pair's default
    # No engine named: among the pair's own engines, a neural one first (True) or one
    # without a model (False); None: the pair's default.
    neural: bool | None = None
    glossary: str | None = None  # the id of one of the tenant's glossaries
    kind: Kind = "plain"
    segmentation: bool = True  # HTML: each block split into sentences first
    mark_unknown: bool = False  # words the engine does not know come back marked (*word)
    echo_same: bool = False  # source == target: the texts come back as they are (DeepL)
    charge: bool = True  # False only for texts a request was charged for already
    memories: tuple[int, ...] = ()  # the tenant's memories (ids), the first listed wins


@dataclass(frozen=True, slots=True)
class TextResult:
    texts: list[str]
    detected: list[Detection] | None = None  # per text, for "auto"


class TextTranslation:
    """The synchronous path, for every API (see the module's docstring)."""

    def __init__(
        self,
        settings: Settings,
        engines: Engines,
        metrics: Metrics,
        *,
        usage: UsageMeter,
        terminology: Terminology,
        cache: Reuse | None = None,
        memories: TranslationMemories | None = None,
    ) -> None:
        self._settings = settings
        self._engines = engines
        self._metrics = metrics
        self._usage = usage
        self._terminology = terminology
        self._cache = cache
        self._memories = memories
        self.batcher = DynamicBatcher(
            engines,
            metrics,
            delay_s=settings.sync_batch_delay_s,
            max_segments=settings.sync_batch_max_segments,
        )

    def pairs(self) -> set[Pair]:
        """Every pair translated here, through a pivot too."""
        return {pair for pair, _ in self._engines.languages()}

    @in_one_view  # the engines installed when it came in, however often it asks
    async def translate(self, request: TextRequest) -> TextResult:
        """Each text's translation, in order, or the first refusal (nothing is charged)."""
        self.check_limits(request.texts)
        auto = request.source.lower() == AUTO
        source = None if auto else canonical(request.source)
        target = canonical(request.target)
        if source is None:
            return await self._auto(request, target)
        if source == target and request.echo_same:
            self.candidates(target)
            await self._charge(request)
            return TextResult(list(request.texts))
        engine, pair = self.resolve(source, target, self._engine(request, source, target))
        terms = await self._terminology.terms_for(request.glossary, request.tenant, pair)
        texts = await self._charged(request, lambda: self._run(request, engine, pair, terms))
        return TextResult(texts)

    async def identify(self, tenant: str | None, text: str) -> Detection | None:
        """The language of ``text``, by ``detection``'s rule with every installed source
        preferred in a near-tie (None: no pair at all), charged as a translation of it is."""
        self.check_limits([text])
        sources = sorted({pair.source for pair in self.pairs()})
        await self._usage.charge(tenant, len(text))
        if not sources:
            return None
        (found,) = await asyncio.to_thread(identify, [text], sources)
        return found

    def check_limits(self, texts: Sequence[str]) -> None:
        """The number of texts, then each text (its length, its characters)."""
        count, limit = len(texts), self._settings.sync_max_segments
        if count > limit:
            raise PayloadTooLarge(
                f"{count} segments exceed the limit of {limit} "
                "for /v1/translate; submit a job to /v1/jobs instead",
                count=count,
                limit=limit,
                unit="segments",
            )
        check_segments(
            [Document("request", list(texts))],
            max_segments=limit,
            max_chars=self._settings.max_segment_chars,
        )

    def resolve(self, source: str, target: str, engine: str | None = None) -> tuple[str, Pair]:
        """The engine and pair of canonical ``source`` → ``target``, or ``UnsupportedPair``
        saying which side, if either, no installed pair has."""
        pair = Pair(source, target)
        try:
            return self._engines.resolve(pair, engine).name, pair
        except UnsupportedPair:
            pairs = self.pairs()
            if pair in pairs:  # the engine named does not serve it
                raise
        missing = (
            "source"
            if source not in {p.source for p in pairs}
            else "target"
            if target not in {p.target for p in pairs}
            else None
        )
        raise UnsupportedPair(
            f"language pair {pair} is not installed; see /v1/languages",
            source=source,
            target=target,
            missing=missing,
        )

    def _engine(self, request: TextRequest, source: str, target: str) -> str | None:
        """The engine the request names, else the pair's first of the kind it prefers."""
        if request.engine is not None or request.neural is None:
            return request.engine
        return self._engines.preferred(Pair(source, target), neural=request.neural)

    def upload_pair(self, source: str, target: str) -> Pair:
        """The pair of a file sent for translation, refused before the file is read;
        ``auto`` stays for the file job to detect."""
        tgt = canonical(target)
        if source.lower() == AUTO:
            self.candidates(tgt)
            return Pair(AUTO, tgt)
        return self.resolve(canonical(source), tgt)[1]

    def candidates(self, target: str, engine: str | None = None) -> list[str]:
        """The languages that translate into ``target``, or ``UnsupportedPair``."""
        return candidates(self._engines, target, engine)

    async def _auto(self, request: TextRequest, target: str) -> TextResult:
        sources = self.candidates(target, request.engine)
        glossary = await self._terminology.check(request.glossary, request.tenant, None, target)

        async def each(source: str, texts: list[str]) -> list[str]:
            if source == target:  # already in the target: as it came, as DeepL does
                return texts
            engine, pair = self.resolve(source, target, self._engine(request, source, target))
            # The glossary's dictionary for the language detected, if it has one.
            kept = await self._terminology.terms_in(glossary, pair)
            return await self._run(request, engine, pair, kept, texts)

        async def detected() -> TextResult:
            plain = [_TAG.sub(" ", t) for t in request.texts] if request.kind == "html" else None
            texts = plain or request.texts
            found = await asyncio.to_thread(identify, texts, preferring(sources, target))
            check_routes(found, sources, target)
            return TextResult(await per_language(request.texts, found, each), found)

        return await self._charged(request, detected)

    async def _charge(self, request: TextRequest) -> datetime | None:
        if not request.charge:
            return None
        return await self._usage.charge(request.tenant, sum(len(t) for t in request.texts))

    async def _charged(self, request: TextRequest, work: Callable[[], Awaitable[T]]) -> T:
        """``work()``, charged: a translation that fails (an engine's error, a timeout)
        gives the request's charge back."""
        charged_at = await self._charge(request)
        try:
            return await work()
        except Exception:
            if charged_at is not None:
                characters = sum(len(t) for t in request.texts)
                self._usage.refund(request.tenant, characters, charged_at, requests=1)
            raise

    async def _run(
        self,
        request: TextRequest,
        engine: str,
        pair: Pair,
        terms: Terms | None,
        texts: Sequence[str] | None = None,
    ) -> list[str]:
        given = request.texts if texts is None else texts
        marked = request.kind == "html"
        run = functools.partial(self._segments, request, engine, pair, terms)
        if not marked:
            return await run(list(given))
        return await translate_html(given, pair, segmentation=request.segmentation, translate=run)

    async def _segments(
        self,
        request: TextRequest,
        engine: str,
        pair: Pair,
        terms: Terms | None,
        segments: list[str],
    ) -> list[str]:
        """The memories' matches; the other segments, with ``terms``, masked before the
        cache and the batcher and unmasked after, so requests with different glossaries
        still share a batch."""
        marked = request.kind == "html"
        recalled: list[str | None] = [None] * len(segments)
        if request.memories and self._memories is not None:
            recalled = await self._memories.recall(request.memories, pair, segments, markup=marked)
        rest = [s for s, found in zip(segments, recalled, strict=True) if found is None]
        run = functools.partial(self._cached, request, engine, pair)
        if not rest:
            translated = []
        elif terms is None:
            translated = await run(rest)
        else:
            translated = await keep_terms(run, [(s, terms) for s in rest], marked=marked)
        made = iter(translated)
        return [next(made) if found is None else found for found in recalled]

    async def _cached(
        self, request: TextRequest, engine: str, pair: Pair, segments: Sequence[str]
    ) -> list[str]:
        marked, marks = request.kind == "html", request.mark_unknown
        run = functools.partial(
            self.batcher.translate, engine, pair, marked=marked, mark_unknown=marks
        )
        if self._cache is None:
            return await run(segments)
        out, hits = await self._cache.through_cache(
            request.tenant, engine, pair, segments, run, markup=marked, mark_unknown=marks
        )
        if hits:
            self._metrics.sync_segments_cached.labels(engine).inc(hits)
        return out

    async def close(self) -> None:
        await self.batcher.close()
