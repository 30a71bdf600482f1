"""Segments longer than the model's input, on both engines: every sentence reaches the model,
in parts within its limit counted by its own tokenizer, and comes back in the output."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from dragoman.engines.ct2 import Ct2Model, CTranslate2Engine
from dragoman.engines.hf import HfModel, TransformersEngine
from dragoman.engines.model_cache import ModelCache
from dragoman.engines.scores import Hypothesis
from dragoman.formats.segment import sentence_ends
from tests.conftest import CORPUS_DIR
from tests.neural.conftest import EN_FR

LIMIT = 512  # the engines' default, and the tiny models' positions
MB = 1024 * 1024

Engine = CTranslate2Engine | TransformersEngine


class Spy:
    """The batches an engine's model is given, and how many tokens each input is."""

    def __init__(self, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
        self.batches: list[list[str]] = []
        self.lengths: list[int] = []
        run = engine._run_scored

        def spy(model: Any, texts: list[str]) -> list[Hypothesis]:
            self.batches.append(texts)
            self.lengths += [input_length(model, text) for text in texts]
            return run(model, texts)

        monkeypatch.setattr(engine, "_run_scored", spy)


def input_length(model: Ct2Model | HfModel, text: str) -> int:
    """Tokens the model reads for ``text``, the </s> included, before any truncation."""
    if isinstance(model, Ct2Model):
        return len(model.encode(text, 1 << 20))
    return len(model.tokenizer(text)["input_ids"])


@pytest.fixture(params=["ctranslate2", "transformers"])
async def engine(request: pytest.FixtureRequest, tiny_models: Path) -> AsyncIterator[Engine]:
    # float32: int8 is not bit-identical across batch shapes, and the tests compare.
    cache = ModelCache(512 * MB)
    built: Engine
    if request.param == "ctranslate2":
        built = CTranslate2Engine(
            tiny_models, cache=cache, compute_type="float32", max_output_tokens=16
        )
    else:
        built = TransformersEngine(tiny_models, cache=cache, dtype="float32", max_output_tokens=16)
    yield built
    await built.close()


def corpus_sentences(count: int) -> list[str]:
    """The first ``count`` distinct sentences of the licence texts."""
    text = " ".join((CORPUS_DIR / "en_licenses.txt").read_text(encoding="utf-8").split())
    found: list[str] = []
    start = 0
    for end in sentence_ends(text[:6000], "en"):
        sentence = text[start:end].strip()
        start = end
        if sentence not in found:
            found.append(sentence)
    assert len(found) >= count
    return found[:count]


async def test_every_sentence_of_a_long_segment_reaches_the_model_and_the_output(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    sentences = corpus_sentences(40)
    alone = await engine.translate(EN_FR, sentences)
    spy = Spy(engine, monkeypatch)

    [translation] = await engine.translate(EN_FR, [" ".join(sentences)])

    assert sum(spy.lengths) > 3 * LIMIT
    assert spy.batches == [sentences]
    assert max(spy.lengths) <= LIMIT
    assert translation == " ".join(alone)


async def test_a_sentence_longer_than_the_limit_is_cut_where_its_tokens_fill_the_limit(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each "a" is one piece: 511 of them and the </s> fill the limit exactly.
    sentence = " ".join(["a"] * 1300)
    parts = [" ".join(["a"] * n) for n in (511, 511, 278)]
    alone = await engine.translate(EN_FR, parts)
    spy = Spy(engine, monkeypatch)

    [translation] = await engine.translate(EN_FR, [sentence])

    assert spy.batches == [parts]
    assert spy.lengths == [LIMIT, LIMIT, 279]
    assert translation == " ".join(alone)


async def test_segments_within_the_limit_reach_the_model_as_they_are(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = " ".join(["a"] * 511)  # with the </s>, exactly the limit
    segments = [" ".join(corpus_sentences(3)), full, "  Hello.\n"]
    spy = Spy(engine, monkeypatch)

    translations = await engine.translate(EN_FR, segments)

    assert spy.batches == [segments]
    assert spy.lengths[1] == LIMIT
    assert translations == [(await engine.translate(EN_FR, [text]))[0] for text in segments]


async def test_long_and_short_segments_go_to_the_model_in_one_batch(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    sentences = corpus_sentences(40)
    segments = ["Hello.", " ".join(sentences), "Goodbye."]
    alone = await engine.translate(EN_FR, ["Hello.", *sentences, "Goodbye."])
    spy = Spy(engine, monkeypatch)

    translations = await engine.translate(EN_FR, segments)

    assert spy.batches == [["Hello.", *sentences, "Goodbye."]]
    assert translations == [alone[0], " ".join(alone[1:-1]), alone[-1]]
