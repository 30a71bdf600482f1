"""Language identification: honest over every language the model knows, the preferred
languages breaking only near-ties of short texts; confidence 0-100."""

from __future__ import annotations

import pytest

from dragoman.detection import (
    CONFIDENT,
    Detection,
    check_routes,
    identify,
    rank,
)
from dragoman.errors import UnroutedLanguage

ENGLISH = "The weather is lovely today, and we are going to the beach."
FRENCH = "Il fait très beau aujourd'hui, et nous allons à la plage."
GERMAN = "Ich habe heute keine Zeit für das Treffen."


def test_each_text_gets_its_own_language() -> None:
    found = identify([ENGLISH, FRENCH], ["en", "fr", "ca"])
    assert [d.language for d in found] == ["en", "fr"]
    assert all(d.confidence > 90 for d in found)


def test_a_confident_answer_is_never_overruled_by_the_preferred_languages() -> None:
    found = identify([GERMAN, FRENCH], ["en", "es"])
    assert [d.language for d in found] == ["de", "fr"]
    assert all(d.confidence > 90 for d in found)


def test_a_short_near_tie_goes_to_a_preferred_language() -> None:
    ranked = rank("proton beam")
    assert ranked[0][0] != "en" and ranked[0][1] < CONFIDENT  # the model alone is unsure
    (found,) = identify(["proton beam"], ["en", "es", "fr"])
    assert found.language == "en"
    assert found.confidence == round(100 * dict(ranked)["en"], 2)


def test_a_short_text_far_from_every_preferred_language_keeps_its_own() -> None:
    ranked = rank("Guten Morgen")
    assert ranked[0][0] == "de" and ranked[0][1] < CONFIDENT
    assert identify(["Guten Morgen"], ["en", "es", "fr"])[0].language == "de"


def test_the_ranking_covers_every_language_best_first() -> None:
    ranked = rank(FRENCH)
    assert len(ranked) > 100
    assert [p for _, p in ranked] == sorted((p for _, p in ranked), reverse=True)
    assert sum(p for _, p in ranked) == pytest.approx(1, abs=0.01)


def test_text_without_letters_gets_the_first_preferred_with_no_confidence() -> None:
    assert identify(["12 + 30 = 42", " :-) "], ["es", "en"]) == [
        Detection("es", 0.0),
        Detection("es", 0.0),
    ]


def test_a_language_without_a_route_is_refused_naming_both() -> None:
    found = [Detection("en", 99.0), Detection("es", 80.0), Detection("de", 99.0)]
    check_routes(found[:2], ["en"], "es")  # the target itself needs no route
    with pytest.raises(UnroutedLanguage) as refused:
        check_routes(found, ["en"], "es")
    assert (refused.value.source, refused.value.target, refused.value.status) == ("de", "es", 400)
    assert refused.value.message.startswith("text 3 was detected as German (de)")
    with pytest.raises(UnroutedLanguage, match=r"^notes\.txt was detected"):
        check_routes(found[2:], ["en"], "es", ["notes.txt"])
