"""The neural engines score their outputs: a confidence in (0, 1], the geometric mean of the
chosen tokens' probabilities as the model itself gives them, with exactly the translations
of ``translate``, in a batch as alone."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dragoman.engines import Engine, Scores
from dragoman.engines.ct2 import CTranslate2Engine, load_ct2
from dragoman.engines.hf import TransformersEngine, load_hf
from dragoman.engines.model_cache import ModelCache
from tests.neural.conftest import EN_FR
from tests.neural.test_engines import MB, corpus_segments, engine, make_engine

__all__ = ["engine"]  # the fixture, over both engines


async def test_each_output_is_scored_with_the_translation_it_gets_unscored(
    engine: Engine,
) -> None:
    segments = corpus_segments(60)
    assert isinstance(engine, Scores)

    scored = await engine.translate_scored(EN_FR, segments)

    assert [text for text, _ in scored] == await engine.translate(EN_FR, segments)
    for source, (_, confidence) in zip(segments, scored, strict=True):
        if source.strip():
            assert confidence is not None and 0 < confidence <= 1
        else:
            assert confidence is None  # no output, no score
    assert len({confidence for _, confidence in scored}) > 5


async def test_a_segment_gets_in_a_batch_the_score_it_gets_alone(engine: Engine) -> None:
    assert isinstance(engine, Scores)
    segments = corpus_segments(40)
    together = await engine.translate_scored(EN_FR, segments)
    probes = sorted(set(segments), key=len)
    probes = [*probes[:4], *probes[-4:]]
    alone = {text: (await engine.translate_scored(EN_FR, [text]))[0] for text in probes}
    assert [alone[t] for t in segments if t in alone] == [
        out for t, out in zip(segments, together, strict=True) if t in alone
    ]


async def test_a_long_segment_is_scored_over_all_its_parts(models_dir: Path) -> None:
    engine = make_engine("ctranslate2", models_dir, ModelCache(512 * MB))
    assert isinstance(engine, CTranslate2Engine)
    engine._max_input_tokens = 24  # every sentence of the corpus fits; a paragraph does not
    try:
        sentences = ["The software is free.", "You can copy it.", "Change it as you like."]
        parts = await engine.translate_scored(EN_FR, sentences)
        [whole] = await engine.translate_scored(EN_FR, [" ".join(sentences)])
    finally:
        await engine.close()
    assert whole.text == " ".join(text for text, _ in parts)
    # Each part's 16 tokens weigh the same: the whole is the geometric mean of the parts'.
    logs = [math.log(confidence or 0) for _, confidence in parts]
    assert whole.confidence == pytest.approx(math.exp(sum(logs) / len(logs)), abs=2e-4)


async def test_ctranslate2_scores_are_the_mean_log_probability_the_model_gives_its_tokens(
    models_dir: Path,
) -> None:
    engine = make_engine("ctranslate2", models_dir, ModelCache(512 * MB))
    segments = [segment for segment in corpus_segments(12) if segment.strip()][:8]
    try:
        scored = await engine.translate_scored(EN_FR, segments)
    finally:
        await engine.close()
    model = load_ct2(models_dir / str(EN_FR) / "ctranslate2", compute_type="float32")
    sources = [model.encode(text, 512) for text in segments]
    outputs = model.translator.translate_batch(sources, beam_size=1, max_decoding_length=16)
    targets = [result.hypotheses[0] for result in outputs]
    # score_batch reads each target as given, teacher-forced, and scores an end token after
    # it: the tiny model never ends before the limit, so that one is not the model's choice.
    for (_, confidence), scoring in zip(
        scored, model.translator.score_batch(sources, targets), strict=True
    ):
        chosen = scoring.log_probs[:-1]
        assert confidence == pytest.approx(math.exp(sum(chosen) / len(chosen)), abs=1e-4)


async def test_transformers_scores_agree_with_the_library_s_own_transition_scores(
    models_dir: Path,
) -> None:
    import torch

    engine = make_engine("transformers", models_dir, ModelCache(512 * MB))
    assert isinstance(engine, TransformersEngine)
    segments = ["The software is free.", "Copy it.", "You may change it and share it."]
    try:
        scored = await engine.translate_scored(EN_FR, segments)
    finally:
        await engine.close()
    loaded = load_hf(models_dir / str(EN_FR) / "transformers", device="cpu")
    for text, (_, confidence) in zip(segments, scored, strict=True):
        inputs = loaded.tokenizer([text], return_tensors="pt")
        with torch.inference_mode():
            out = loaded.model.generate(
                **inputs,
                num_beams=1,
                do_sample=False,
                max_new_tokens=16,
                output_scores=True,
                return_dict_in_generate=True,
            )
        steps = loaded.model.compute_transition_scores(
            out.sequences, out.scores, normalize_logits=True
        )[0]
        assert confidence == pytest.approx(math.exp(float(steps.mean())), abs=1e-4)
