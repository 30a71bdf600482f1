"""A CTranslate2 model's batch size measured when it loads (DRAGOMAN_NEURAL_BATCH_TOKENS=auto)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from dragoman.engines import batch_size
from dragoman.engines.ct2 import CTranslate2Engine
from dragoman.engines.model_cache import ModelCache
from dragoman.settings import Settings
from tests.neural.conftest import EN_FR

SIZES = (64, 128, 256)
SEGMENTS = ["The licence is granted.", "", "You may copy the work.", "  Notices stay.  "] * 5


def engine(models_dir: Path, batch_tokens: int | str) -> CTranslate2Engine:
    # float32: int8 is not bit-identical across batch shapes, and the test compares outputs.
    return CTranslate2Engine(
        models_dir,
        cache=ModelCache(512 * 2**20),
        compute_type="float32",
        batch_tokens=batch_tokens,  # type: ignore[arg-type]
        max_output_tokens=12,
    )


async def test_auto_measures_the_size_at_load_and_translates_as_a_configured_size(
    models_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(batch_size, "CPU_SIZES", SIZES)
    probed: list[int] = []
    measure = CTranslate2Engine._probe

    def probe(self: CTranslate2Engine, model: object, size: int) -> float:
        probed.append(size)
        return measure(self, model, size)  # type: ignore[arg-type]

    monkeypatch.setattr(CTranslate2Engine, "_probe", probe)
    auto, fixed = engine(models_dir, "auto"), engine(models_dir, 16384)
    try:
        with caplog.at_level(logging.INFO, logger="dragoman.engines.ct2"):
            measured = await auto.translate(EN_FR, SEGMENTS)
        assert measured == await fixed.translate(EN_FR, SEGMENTS)
        assert probed[0] == 1 and set(probed[1:]) <= set(SIZES) and probed[1] == SIZES[0]
        lines = [r.getMessage() for r in caplog.records if "the fastest measured" in r.message]
        assert len(lines) == 1 and "en-fr" in lines[0], lines
        chosen = int(lines[0].split("batches of ")[1].split()[0])
        assert chosen in SIZES
        probed.clear()
        await auto.translate(EN_FR, ["Again."])  # the model stays loaded: no second probe
        await auto.close()  # unloads it, as the cache does to make room
        assert await auto.translate(EN_FR, SEGMENTS) == measured
        assert probed == []  # loaded again, the same folder: measured once
        upgraded = models_dir / "en-fr" / "ctranslate2"
        shutil.copytree(upgraded, models_dir / "new")
        shutil.rmtree(upgraded)
        (models_dir / "new").rename(upgraded)  # another folder in its place, as an upgrade
        await auto.translate(EN_FR, ["Again."])
        assert probed[0] == 1  # a new model is measured
    finally:
        await auto.close()
        await fixed.close()


async def test_a_configured_size_is_used_without_a_probe(
    models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def probe(self: CTranslate2Engine, model: object, size: int) -> float:
        raise AssertionError("no probe when the size is configured")

    monkeypatch.setattr(CTranslate2Engine, "_probe", probe)
    fixed = engine(models_dir, 512)
    try:
        assert len(await fixed.translate(EN_FR, SEGMENTS)) == len(SEGMENTS)
    finally:
        await fixed.close()


@pytest.mark.parametrize("value", ["0", "-1", "fast", ""])
def test_the_setting_takes_a_positive_size_or_auto_and_nothing_else(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRAGOMAN_NEURAL_BATCH_TOKENS", value)
    with pytest.raises(ValueError, match="neural_batch_tokens"):
        Settings()


def test_auto_is_read_for_both_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAGOMAN_NEURAL_BATCH_TOKENS", "auto")
    monkeypatch.setenv("DRAGOMAN_GPU_BATCH_TOKENS", "4096")
    settings = Settings()
    assert (settings.neural_batch_tokens, settings.gpu_batch_tokens) == ("auto", 4096)
