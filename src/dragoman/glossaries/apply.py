"""One engine call for a batch of segments, each keeping its own glossary's terms.

Segments of several jobs (or requests) with different glossaries share one engine batch:
each is masked with its own terms, the batch is translated once, and each is unmasked.
A segment whose placeholders did not all come back exactly once (a neural model may drop,
repeat or translate one) falls back: it is translated again without placeholders, beside
each of its terms alone, and wherever the term's translation (or the term itself, copied)
appears in the output, the glossary's target takes its place. A term found in neither way
stays as the engine put it; that is logged, never an error.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence

from dragoman.engines.scores import Scored
from dragoman.formats.markup import Marked, Token, parse_stored
from dragoman.glossaries.masking import Masked, mask, unmask
from dragoman.glossaries.matching import Hit, Terms, carry_case
from dragoman.models import Output

log = logging.getLogger(__name__)

Translate = Callable[[list[str]], Awaitable[list[str]]]
ScoredTranslate = Callable[[list[str]], Awaitable[list[Scored]]]
Item = tuple[str, Terms | None]  # a segment and the terms it keeps (None: no glossary)


def _read(text: str, marked: bool) -> Marked:
    return parse_stored(text) if marked else Marked.of([text])


def _write(segment: Marked, marked: bool) -> str:
    return segment.stored() if marked else segment.plain


async def keep_terms(
    translate: Translate, items: Sequence[Item], *, marked: bool = False
) -> list[str]:
    """Each segment translated by ``translate`` (one call, two when a fallback is needed)
    with its terms kept. ``marked``: segments in the stored form of inline codes, given to
    and taken from ``translate`` in that form."""

    async def unscored(texts: list[str]) -> list[Scored]:
        return [Scored(text) for text in await translate(texts)]

    return [out.text for out in await keep_terms_scored(unscored, items, marked=marked)]


async def keep_terms_scored(
    translate: ScoredTranslate, items: Sequence[Item], *, marked: bool = False
) -> list[Output]:
    """``keep_terms`` through an engine that scores its outputs: each output with the
    confidence of the engine output it was made from, and whether terms were found in it."""
    masks = [mask(_read(text, marked), terms) if terms else None for text, terms in items]
    # A segment without a term goes as it came.
    sent = [
        _write(m.sent, marked) if m and m.placeholders else text
        for m, (text, _) in zip(masks, items, strict=True)
    ]
    translated = await translate(sent)
    results = [text for text, _ in translated]
    confidences = [confidence for _, confidence in translated]
    again: list[int] = []
    for i, found in enumerate(masks):
        if found is None or not found.placeholders:
            continue
        back = unmask(_read(results[i], marked), found)
        if back is None:
            again.append(i)
        else:
            results[i] = _write(back, marked)
    if again:
        await _fall_back(translate, again, items, masks, (results, confidences), marked)
    return [
        Output(text, confidence, bool(m and m.placeholders))
        for text, confidence, m in zip(results, confidences, masks, strict=True)
    ]


async def _fall_back(
    translate: ScoredTranslate,
    indices: list[int],
    items: Sequence[Item],
    masks: Sequence[Masked | None],
    outputs: tuple[list[str], list[float | None]],
    marked: bool,
) -> None:
    """The segments at ``indices`` again, without placeholders, and their terms alone, in
    one call; each term's translation found in the output gives way to its target."""
    hits: dict[int, list[Hit]] = {}
    for i in indices:
        found = masks[i]
        assert found is not None
        hits[i] = [p.hit for p in found.placeholders]
    terms = sorted({hit.matched for found in hits.values() for hit in found})
    sent = [items[i][0] for i in indices] + [_write(Marked.of([t]), marked) for t in terms]
    out = await translate(sent)
    alone = {
        term: _read(text, marked).plain.strip()
        for term, (text, _) in zip(terms, out[len(indices) :], strict=True)
    }
    results, confidences = outputs
    for i, (text, confidence) in zip(indices, out, strict=False):
        segment, missed = substitute(_read(text, marked), hits[i], alone)
        results[i], confidences[i] = _write(segment, marked), confidence
        if missed:
            log.info(
                "glossary: %d of %d terms not found in a segment's translation",
                missed,
                len(hits[i]),
            )


def substitute(out: Marked, hits: Sequence[Hit], alone: dict[str, str]) -> tuple[Marked, int]:
    """``out`` with each hit's term, as translated alone (``alone``) or as it was, replaced by
    its target, left to right; and how many could not be found."""
    tokens: list[Token] = list(out.tokens)
    cursor = [0] * len(tokens)  # per text token: where the next search starts
    missed = 0
    for hit in hits:
        needles = [n for n in dict.fromkeys((alone.get(hit.matched, ""), hit.matched)) if n]
        if not _replace_first(tokens, cursor, needles, hit):
            missed += 1
    return Marked.of(tokens), missed


def _replace_first(tokens: list[Token], cursor: list[int], needles: list[str], hit: Hit) -> bool:
    for needle in needles:
        body = r"\s+".join(re.escape(word) for word in needle.split())
        pattern = re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)
        for k, token in enumerate(tokens):
            if not isinstance(token, str):
                continue
            found = pattern.search(token, cursor[k])
            if found is None:
                continue
            entry = hit.entry
            if entry.keeps:
                target = hit.matched
            elif entry.exact_case:
                target = entry.target
            else:
                target = carry_case(found.group(), entry.target)
            tokens[k] = token[: found.start()] + target + token[found.end() :]
            cursor[k] = found.start() + len(target)
            return True
    return False
