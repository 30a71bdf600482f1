"""What every format's tests share: an identity engine, a pseudo-translation that changes
every letter and reverses word order, and a run through prepare → translate → rebuild."""

from __future__ import annotations

import re
import string
import time
from collections.abc import Callable

from dragoman.formats import Format, prepare, rebuild
from dragoman.formats.markup import Marked, Token, parse_stored

_PSEUDO = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "ȧƀċḋḗƒġħīĵķŀḿƞǿƥʠřşŧŭṽẇẋẏẑȦƁĊḊḖƑĠĦĪĴĶĿḾȠǾƤɊŘŞŦŬṼẆẊẎẐ",
)


def pseudo_text(text: str) -> str:
    """Every letter changed and the words of each run of text reversed; outer whitespace
    kept (the words of ``Hello big world`` come back as ``ẇǿřŀḋ ƀīġ Ħḗŀŀǿ``)."""
    body = text.strip()
    if not body:
        return text
    head = text[: text.index(body)]
    tail = text[len(head) + len(body) :]
    words = re.split(r"(\s+)", body)
    return head + "".join(reversed(words)).translate(_PSEUDO) + tail


def pseudo(unit: Marked) -> Marked:
    """The pseudo-translation of a unit: its codes where they were, every text changed."""
    tokens: list[Token] = [pseudo_text(t) if isinstance(t, str) else t for t in unit.tokens]
    return Marked.of(tokens)


FORWARD = str.maketrans({c: pseudo_text(c) for c in string.ascii_letters})
BACK = str.maketrans({pseudo_text(c): c for c in string.ascii_letters})


def letters(unit: Marked) -> Marked:
    """Every letter changed, nothing moved: the output maps back to the input (``BACK``)."""
    return Marked.of(t.translate(FORWARD) if isinstance(t, str) else t for t in unit.tokens)


def changed_runs(before: str, after: str) -> str:
    """The runs of ``before`` that differ in ``after`` (same length), space-separated."""
    assert len(before) == len(after)
    marks = "".join(b if a != b else "\0" for b, a in zip(before, after, strict=True))
    return " ".join(re.findall(r"[^\0]+", marks))


def identity(unit: Marked) -> Marked:
    return unit


def run(
    fmt: Format,
    data: bytes,
    translate: Callable[[Marked], Marked] = identity,
    *,
    filename: str | None = None,
    segmentation: bool = True,
    source_lang: str = "en",
    target_lang: str = "es",
    partial: int | None = None,
) -> bytes:
    """The file as dragoman gives it back when each segment is translated by ``translate``;
    with ``partial``, only the first ``partial`` segments are."""
    name = filename or f"sample{fmt.extensions[0]}"
    prepared = prepare(fmt, data, filename=name, source_lang=source_lang, segmentation=segmentation)
    out: list[str | None] = [translate(parse_stored(s)).stored() for s in prepared.segments]
    if partial is not None:
        out = out[:partial] + [None] * (len(out) - partial)
    return rebuild(
        fmt, data, filename=name, layout=prepared.layout, translations=out, target_lang=target_lang
    )


def units(fmt: Format, data: bytes, filename: str | None = None) -> list[Marked]:
    return fmt.extract(data, filename=filename or f"sample{fmt.extensions[0]}")


def cpu_growth(work: Callable[[int], object], small: int, factor: int = 4) -> float:
    """How much more CPU time ``work(small * factor)`` takes than ``work(small)``, each the
    best of two runs: about ``factor`` for linear work, ``factor ** 2`` for quadratic. CPU
    time, not wall time, and a ratio of two runs side by side, so that a loaded machine
    moves it little."""

    def best(size: int) -> float:
        times = []
        for _ in range(2):
            started = time.process_time()
            work(size)
            times.append(time.process_time() - started)
        return min(times)

    return best(small * factor) / max(best(small), 1e-6)
