"""The work of ``/v2/translate``: DeepL's options read and checked, the texts translated.

Every text goes through ``translation``, as ``/v1/translate``'s do, so plain texts come
back exactly as v1 gives them; ``tag_handling`` texts are HTML there, XML rewritten to HTML
first and back after (``tags``). Without ``source_lang`` each text is detected on its own,
by ``detection``'s rule: one already in the target comes back as it is.

What each option does here:

- ``split_sentences``: ``0`` keeps each block of a tagged text whole; ``1`` and
  ``nonewlines`` split it into sentences. A plain text is always given whole to the
  engine, which reads sentences by itself.
- ``model_type``: ``latency_optimized`` prefers a pair's Apertium pipeline and
  ``quality_optimized`` its neural model, where it has both (``prefer_`` alike); a pair
  with one kind of engine runs it, as both the fastest and the best it has. So what ran is
  always of the kind asked for, or the pair's only kind, and ``model_type_used`` echoes it.
- ``preserve_formatting``, ``outline_detection``, ``non_splitting_tags``, ``context``,
  ``show_billed_characters``: checked and accepted; dragoman's engines
  never correct formatting and take no context (every text is translated as if alone),
  every tag is non-splitting unless named in ``splitting_tags``, and ``billed_characters``
  is always answered (deepl-python needs it).
- ``formality``: ``default``, ``prefer_more`` and ``prefer_less`` are accepted and change
  nothing; ``more`` and ``less`` are DeepL's 400 for a language without formality (none
  has one here).
- ``glossary_id`` (or ``glossary_ids`` with one id): the tenant's glossary for the pair;
  its terms are kept in plain and tagged texts alike (``glossaries``).
- ``translation_memory_id``, ``translation_memory_threshold``: the tenant's memory, its
  exact matches applied (``memories``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from dragoman.api.deepl.errors import DeepLRefusal
from dragoman.api.deepl.params import DeepLParams
from dragoman.api.deepl.tags import (
    Rewritten,
    mark_ignored,
    restore_xml,
    rewrite_xml,
    unmark_ignored,
)
from dragoman.api.deps import ApiParts
from dragoman.detection import AUTO
from dragoman.translation import TextRequest

_FORMALITIES = ("default", "prefer_more", "prefer_less", "more", "less")
_MODEL_TYPES = (
    "quality_optimized",
    "latency_optimized",
    "prefer_quality_optimized",
    "prefer_latency_optimized",
)


@dataclass(frozen=True, slots=True)
class TextOptions:
    tag_handling: str | None  # "html", "xml" or None (plain text)
    split: bool  # a tagged text's blocks split into sentences
    ignore: tuple[str, ...] = ()
    splitting: tuple[str, ...] = ()
    model_type: str | None = None  # one of _MODEL_TYPES, or None (the pair's default)


def text_options(params: DeepLParams) -> TextOptions:
    """The options of a ``/v2/translate`` request, each checked as DeepL checks it."""
    split = params.choice("split_sentences", ("0", "1", "nonewlines"), "1")
    tag_handling = params.choice("tag_handling", ("html", "xml", ""), "") or None
    for name in ("preserve_formatting", "outline_detection", "show_billed_characters"):
        params.flag(name, default=False)
    for name in ("context", "tag_handling_version"):
        params.text(name)
    params.tags("non_splitting_tags")
    return TextOptions(
        tag_handling=tag_handling,
        split=split != "0",
        ignore=tuple(params.tags("ignore_tags")),
        splitting=tuple(params.tags("splitting_tags")),
        model_type=params.choice("model_type", _MODEL_TYPES, "") or None,
    )


def model_type_used(options: TextOptions) -> str | None:
    """DeepL's ``model_type_used`` (None: not asked, not answered). The kind asked for ran
    wherever the pair has both; where it has one kind, that engine is the pair's best and
    fastest at once, so the answer is the kind asked for in every case."""
    if options.model_type is None:
        return None
    return options.model_type.removeprefix("prefer_")


def check_formality(params: DeepLParams) -> None:
    if params.choice("formality", _FORMALITIES, "default") in ("more", "less"):
        raise DeepLRefusal("'formality' is not supported for given 'target_lang'.")


async def translate_texts(
    service: ApiParts,
    tenant: str | None,
    texts: Sequence[str],
    languages: tuple[str | None, str],
    options: TextOptions,
    glossary: str | None = None,
    memories: tuple[int, ...] = (),
) -> tuple[list[str], list[str]]:
    """Each text's translation and source language (given, or detected), in order; the
    languages are ``(source or None, target)``. A text whose source is its target comes
    back as it is, as DeepL gives it. ``memories``' exact matches come first (``memories``
    module)."""
    source, target = languages
    html = options.tag_handling is not None
    rewritten: list[Rewritten] = []
    if options.tag_handling == "xml":
        rewritten = [
            rewrite_xml(t, ignore=options.ignore, splitting=options.splitting) for t in texts
        ]
        sent = [r.html for r in rewritten]
    else:
        sent = [mark_ignored(t, options.ignore) if html else t for t in texts]
    request = TextRequest(
        tenant=tenant,
        source=source or AUTO,
        target=target,
        texts=sent,
        glossary=glossary,
        kind="html" if html else "plain",
        segmentation=options.split,
        echo_same=True,
        memories=memories,
        neural=None if options.model_type is None else "quality" in options.model_type,
    )
    result = await service.translation.translate(request)
    if source == target:  # checked and charged: the texts as they came
        return list(texts), [target] * len(texts)
    detected = [d.language for d in result.detected] if result.detected else None
    found = detected or [source or target] * len(texts)
    if not rewritten:
        return [unmark_ignored(t) if html else t for t in result.texts], found
    results = []
    for text, out, how, language in zip(texts, result.texts, rewritten, found, strict=True):
        restored = restore_xml(out, how)
        if restored is None:  # the markers did not pair up: the text as HTML, unrewritten
            again = await service.translation.translate(
                replace(request, source=language, texts=[text], charge=False)
            )
            restored = again.texts[0]
        results.append(restored)
    return results, found
