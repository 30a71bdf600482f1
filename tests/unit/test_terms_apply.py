"""``keep_terms`` around an engine that loses or repeats placeholders, as a neural model
may: the fallback translates again without them and puts each target where the term's own
translation is; one engine call when nothing is lost, two when something is."""

from __future__ import annotations

from collections.abc import Sequence

from dragoman.engines import Scored
from dragoman.glossaries import Entry, Terms, keep_terms
from dragoman.glossaries.apply import keep_terms_scored

WORDS = {
    "the": "le",
    "software": "logiciel",
    "is": "est",
    "free": "libre",
    "dragoman": "drogman",
    "server": "serveur",
    "runs": "tourne",
    "and": "et",
}


class WordEngine:
    """Word by word through a dictionary; a word it does not know is dropped (a placeholder
    lost) or, with ``echo``, written twice (a placeholder repeated)."""

    def __init__(self, *, echo: bool = False) -> None:
        self.echo = echo
        self.calls: list[list[str]] = []

    async def translate(self, texts: Sequence[str]) -> list[str]:
        self.calls.append(list(texts))
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> str:
        out = []
        for word in text.replace(".", " .").split():
            found = WORDS.get(word.lower())
            if found is None and word != ".":
                out += [word, word] if self.echo else []
                continue
            found = found or word
            out.append(found.capitalize() if word[:1].isupper() else found)
        return " ".join(out).replace(" .", ".")


TERMS = Terms.of(
    [
        Entry("software", "programme"),
        Entry("Dragoman", "Dragoman"),
        Entry("license", "licence"),
    ]
)


async def test_a_lost_placeholder_falls_back_to_the_terms_own_translation() -> None:
    engine = WordEngine()
    out = await keep_terms(engine.translate, [("The software is free.", TERMS)])
    assert out == ["Le programme est libre."]
    assert engine.calls == [["The ZXQA is free."], ["The software is free.", "software"]]


async def test_a_repeated_placeholder_falls_back_too() -> None:
    engine = WordEngine(echo=True)
    out = await keep_terms(engine.translate, [("Software is free.", TERMS)])
    assert out == ["Programme est libre."]  # the capital carried from where it was found


async def test_a_kept_term_replaces_its_translation_or_stays_where_copied() -> None:
    engine = WordEngine()
    out = await keep_terms(engine.translate, [("Dragoman runs the server.", TERMS)])
    assert out == ["Dragoman tourne le serveur."]  # "drogman" gave way to the kept name


async def test_a_term_found_nowhere_leaves_the_translation_as_it_is() -> None:
    engine = WordEngine()
    out = await keep_terms(engine.translate, [("The license is free.", TERMS)])
    assert out == ["Le est libre."]  # neither "license" nor its translation is there


async def test_only_the_segments_that_lost_a_placeholder_go_again() -> None:
    engine = WordEngine()
    items = [("The server runs.", None), ("The software is free.", TERMS), ("Free.", TERMS)]
    out = await keep_terms(engine.translate, items)
    assert out == ["Le serveur tourne.", "Le programme est libre.", "Libre."]
    assert len(engine.calls) == 2 and engine.calls[1] == ["The software is free.", "software"]


async def test_marked_segments_fall_back_with_their_codes() -> None:
    async def drop_placeholders(texts: Sequence[str]) -> list[str]:
        return [t.replace("ZXQA", "").replace("software", "logiciel") for t in texts]

    out = await keep_terms(
        drop_placeholders, [("<g1>software</g1> &amp; more", TERMS)], marked=True
    )
    assert out == ["<g1>programme</g1> &amp; more"]


async def test_each_output_keeps_the_score_of_the_engine_output_it_was_made_from() -> None:
    engine = WordEngine()
    calls = 0

    async def scored(texts: list[str]) -> list[Scored]:
        nonlocal calls
        calls += 1
        return [Scored(text, calls / 10) for text in await engine.translate(texts)]

    items = [("The server runs.", None), ("The software is free.", TERMS), ("Free.", TERMS)]
    out = await keep_terms_scored(scored, items)
    assert [o.text for o in out] == ["Le serveur tourne.", "Le programme est libre.", "Libre."]
    # The second went again (its placeholder was lost): its score is that call's. Only it
    # had a term.
    assert [(o.confidence, o.terms) for o in out] == [(0.1, False), (0.2, True), (0.1, False)]
