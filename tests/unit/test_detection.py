"""Language identification: per text, among the given languages only, confidence 0-100."""

from __future__ import annotations

from dragoman.detection import Detection, detect, supported

ENGLISH = "The weather is lovely today, and we are going to the beach."
FRENCH = "Il fait très beau aujourd'hui, et nous allons à la plage."


def test_each_text_gets_its_own_language() -> None:
    found = detect([ENGLISH, FRENCH], ["en", "fr", "ca"])
    assert [ranked[0].language for ranked in found] == ["en", "fr"]
    assert all(ranked[0].confidence > 90 for ranked in found)


def test_candidates_are_only_the_languages_given_best_first() -> None:
    (ranked,) = detect([FRENCH], ["en", "es"])
    assert {d.language for d in ranked} == {"en", "es"}
    assert ranked == sorted(ranked, key=lambda d: d.confidence, reverse=True)
    assert all(0 <= d.confidence <= 100 for d in ranked)


def test_one_candidate_is_certain_unless_there_is_nothing_to_tell() -> None:
    assert detect([ENGLISH, "  :-) 42 "], ["en"]) == [
        [Detection("en", 100.0)],
        [Detection("en", 0.0)],
    ]


def test_text_without_letters_has_no_confidence() -> None:
    (ranked,) = detect(["12 + 30 = 42"], ["en", "fr"])
    assert all(d.confidence == 0.0 for d in ranked)


def test_languages_the_model_does_not_know_are_left_out() -> None:
    assert supported(["en", "fr", "tlh", "ast"]) == ["en", "fr"]
    assert detect([ENGLISH], ["tlh"]) == [[]]
