"""DeepL's ``model_type``, sent by DeepL's own Python SDK to a real ``dragoman serve`` whose
pairs have a neural model, Apertium, or both: ``latency_optimized`` runs Apertium and
``quality_optimized`` the model where a pair has both, and ``model_type_used`` answers the
kind that ran."""

from __future__ import annotations

import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import deepl
import pytest

from tests.integration.server import Server
from tests.neural.conftest import EN_FR

pytestmark = pytest.mark.integration

TEXT = "The cat sleeps in the house."
SPANISH = "El gato duerme en la casa."


@pytest.fixture(scope="module")
def server(tiny_models: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """en-fr (neural alone), and copies of it as en-es and es-en beside Apertium's: en-es
    defaults to Apertium, es-en to the model; en-ca is Apertium's alone."""
    root = tmp_path_factory.mktemp("deepl-model-type")
    for name in (str(EN_FR), "en-es", "es-en"):
        shutil.copytree(tiny_models / str(EN_FR), root / "models" / name)
    running = Server(
        root / "data",
        DRAGOMAN_MODELS_DIR=str(root / "models"),
        DRAGOMAN_CT2_COMPUTE_TYPE="float32",
        DRAGOMAN_NEURAL_THREADS="1",
        DRAGOMAN_PAIR_ENGINES="en-es=apertium",
    ).start(timeout_s=60)
    try:
        yield running
    finally:
        if running.proc is not None:
            running.stop(signal.SIGKILL)


@pytest.fixture
def translator(server: Server) -> Iterator[deepl.Translator]:
    found = deepl.Translator("any-key", server_url=server.url)
    yield found
    found.close()  # type: ignore[no-untyped-call]


def by_engine(server: Server, text: str, source: str, target: str, engine: str) -> str:
    body = {"source_lang": source, "target_lang": target, "segments": [text], "engine": engine}
    with server.client() as http:
        response = http.post("/v1/translate", json=body)
    assert response.status_code == 200, response.text
    translated: str = response.json()["translations"][0]
    return translated


def translate(
    translator: deepl.Translator,
    text: str,
    target: str,
    model_type: str | None,
    source: str | None = None,
) -> deepl.TextResult:
    found = translator.translate_text(
        text, source_lang=source, target_lang=target, model_type=model_type
    )
    assert isinstance(found, deepl.TextResult)
    return found


def test_an_unknown_model_type_is_deepls_400(server: Server, translator: deepl.Translator) -> None:
    with server.client() as http:
        body = {"text": [TEXT], "target_lang": "ES", "model_type": "fastest"}
        response = http.post("/v2/translate", json=body)
    assert response.status_code == 400
    assert response.json() == {"message": "Value for 'model_type' not supported."}
    with pytest.raises(deepl.DeepLException, match="Bad request"):
        translator.translate_text(TEXT, target_lang="ES", model_type="latency")


@pytest.mark.parametrize(
    ("text", "source", "target"), [(TEXT, "EN", "ES"), (SPANISH, "ES", "EN-US")]
)
def test_a_pair_with_both_runs_the_kind_asked_for(
    server: Server, translator: deepl.Translator, text: str, source: str, target: str
) -> None:
    pair = (source.lower(), target[:2].lower())
    apertium = by_engine(server, text, *pair, "apertium")
    model = by_engine(server, text, *pair, "ctranslate2")
    assert apertium != model
    for model_type, expected, used in [
        ("latency_optimized", apertium, "latency_optimized"),
        ("prefer_latency_optimized", apertium, "latency_optimized"),
        ("quality_optimized", model, "quality_optimized"),
        ("prefer_quality_optimized", model, "quality_optimized"),
    ]:
        for given in (source, None):  # named, then detected
            found = translate(translator, text, target, model_type, given)
            assert (found.text, found.model_type_used) == (expected, used), (model_type, given)
    default = translate(translator, text, target, None, source)
    assert default.model_type_used is None
    assert default.text == (apertium if pair == ("en", "es") else model)


@pytest.mark.parametrize(("target", "engine"), [("CA", "apertium"), ("FR", "ctranslate2")])
def test_a_pair_with_one_kind_runs_it_and_echoes_the_request(
    server: Server, translator: deepl.Translator, target: str, engine: str
) -> None:
    only = by_engine(server, TEXT, "en", target.lower(), engine)
    for model_type in ("latency_optimized", "quality_optimized", "prefer_quality_optimized"):
        found = translate(translator, TEXT, target, model_type, "EN")
        assert found.text == only
        assert found.model_type_used == model_type.removeprefix("prefer_")
