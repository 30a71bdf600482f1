"""A pair's default engine: ``pair_engines`` where it names an engine of the pair, else the
first of ``engine_order`` that serves it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from dragoman.engines import Engines, Pair, open_engines
from dragoman.errors import UnsupportedPair
from tests.conftest import ScriptedEngine

EN_ES = Pair("en", "es")


class Named(ScriptedEngine):
    def __init__(self, name: str, pairs: list[Pair]) -> None:
        super().__init__(pairs)
        self.name = name


def test_a_configured_default_comes_first_and_is_resolved() -> None:
    engines = Engines(
        [Named("neural", [EN_ES]), Named("apertium", [EN_ES])], pair_defaults={EN_ES: "apertium"}
    )
    assert engines.languages() == [(EN_ES, ["apertium", "neural"])]
    assert engines.resolve(EN_ES).name == "apertium"
    assert engines.resolve(EN_ES, "neural").name == "neural"


def test_a_default_that_does_not_serve_the_pair_leaves_the_order_as_it_was() -> None:
    engines = Engines(
        [Named("neural", [EN_ES]), Named("apertium", [Pair("es", "en")])],
        pair_defaults={EN_ES: "apertium", Pair("de", "fr"): "neural"},
    )
    assert engines.resolve(EN_ES).name == "neural"


def test_open_engines_reads_pair_engines(make_settings: Any, tmp_path: Path) -> None:
    models, modes = tmp_path / "models", tmp_path / "modes"
    (models / "en-es" / "ctranslate2").mkdir(parents=True)
    modes.mkdir()
    (modes / "en-es.mode").write_text("true\n", encoding="utf-8")
    settings = dict(models_dir=models, apertium_modes_dir=modes)
    assert open_engines(make_settings(**settings)).resolve(EN_ES).name == "ctranslate2"
    chosen = open_engines(make_settings(**settings, pair_engines="eng-spa=apertium"))
    assert chosen.resolve(EN_ES).name == "apertium"
    assert chosen.languages() == [(EN_ES, ["apertium", "ctranslate2"])]


@pytest.mark.parametrize(
    "value", ["en-es", "en=apertium", "en-es=", "english-es=apertium", "en-es=apertium,fr"]
)
def test_a_malformed_pair_engines_is_refused_by_name(make_settings: Any, value: str) -> None:
    with pytest.raises(ValidationError, match="DRAGOMAN_PAIR_ENGINES must look like"):
        make_settings(pair_engines=value)


def test_pair_engines_may_be_empty_or_spaced(make_settings: Any) -> None:
    assert make_settings(pair_engines="").pair_engine_defaults == {}
    spaced = make_settings(pair_engines=" en-es = apertium , fr-en=ctranslate2,")
    assert spaced.pair_engine_defaults == {"en-es": "apertium", "fr-en": "ctranslate2"}


def test_the_table_of_pairs_follows_an_engine_whose_pairs_change() -> None:
    neural = Named("neural", [])
    engines = Engines([Named("apertium", [EN_ES]), neural])
    assert engines.resolve(EN_ES).name == "apertium"
    assert engines.direct() is engines.direct()  # kept while no engine's set changed
    neural._pairs = frozenset({EN_ES, Pair("en", "de")})
    assert [e.name for e in engines.direct()[EN_ES]] == ["apertium", "neural"]
    assert engines.resolve(Pair("en", "de")).name == "neural"
    neural._pairs = frozenset()
    with pytest.raises(UnsupportedPair):
        engines.resolve(Pair("en", "de"))
