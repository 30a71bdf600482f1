"""A pivot's first leg translated once (engines/legs.py): the direct translations of a pair
and the pivot routes through it share its outputs, concurrent requests included, and an
engine's new version or failure is never served from them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from dragoman.engines import Engines, Pair
from dragoman.engines.legs import Legs
from tests.unit.test_pivot import Reorder

DE_EN, EN_FR, EN_IT, EN_ES, ES_FR = (
    Pair("de", "en"),
    Pair("en", "fr"),
    Pair("en", "it"),
    Pair("en", "es"),
    Pair("es", "fr"),
)
TEXTS = ["Der Hund schläft.", "Guten Morgen.", "Der Hund schläft."]


def sent(engine: Reorder, pair: Pair) -> list[str]:
    return [text for called, texts in engine.calls if called == pair for text in texts]


async def test_a_pair_and_a_route_through_it_translate_each_text_once() -> None:
    engine = Reorder("apertium", [EN_ES, ES_FR])
    engines = Engines([engine])
    assert engines.first_legs() == {EN_ES}
    direct = await engines.translate_scored("apertium", EN_ES, TEXTS, share="t")
    through = await engines.translate_scored("pivot", Pair("en", "fr"), TEXTS, share="t")
    assert sent(engine, EN_ES) == ["Der Hund schläft.", "Guten Morgen."]
    # The pivot's output is the second leg's of the first's, as without sharing.
    alone = Engines([Reorder("apertium", [EN_ES, ES_FR])])
    assert through == await alone.translate_scored("pivot", Pair("en", "fr"), TEXTS)
    assert [d.text for d in direct] == [
        d.text for d in await alone.translate_scored("apertium", EN_ES, TEXTS)
    ]


async def test_routes_through_one_pivot_at_once_share_its_first_leg() -> None:
    slow = Reorder("neural", [DE_EN, EN_FR, EN_IT])
    original = slow.translate

    async def translate(pair: Pair, segments: Sequence[str]) -> list[str]:
        await asyncio.sleep(0.01)  # both routes ask while the first call runs
        return await original(pair, segments)

    slow.translate = translate  # type: ignore[method-assign]
    engines = Engines([slow])
    into_fr, into_it = await asyncio.gather(
        engines.translate_scored("pivot", Pair("de", "fr"), TEXTS, share=""),
        engines.translate_scored("pivot", Pair("de", "it"), TEXTS, share=""),
    )
    assert sorted(sent(slow, DE_EN)) == sorted({*TEXTS})
    assert into_fr[0].text.endswith(":fr") and into_it[0].text.endswith(":it")
    assert engines.legs.translated == 2


async def test_nothing_is_shared_without_a_tenant_that_reuses_nor_across_tenants() -> None:
    engine = Reorder("apertium", [EN_ES, ES_FR])
    engines = Engines([engine])
    await engines.translate_scored("apertium", EN_ES, ["a"])  # a job with "cache": false
    await engines.translate_scored("pivot", Pair("en", "fr"), ["a"])
    await engines.translate_scored("apertium", EN_ES, ["a"], share="acme")
    await engines.translate_scored("pivot", Pair("en", "fr"), ["a"], share="beta")
    await engines.translate_scored("pivot", Pair("en", "fr"), ["a"], share="acme")
    assert sent(engine, EN_ES) == ["a", "a", "a", "a"]
    assert engines.legs.translated == 2


async def test_a_new_version_of_the_engine_is_asked_again() -> None:
    engine = Reorder("apertium", [EN_ES])
    legs = Legs()
    await legs.translate(engine, EN_ES, ["a"])
    await legs.translate(engine, EN_ES, ["a"])
    engine.version_tag = "2"
    await legs.translate(engine, EN_ES, ["a"])
    assert sent(engine, EN_ES) == ["a", "a"]


async def test_only_the_most_recent_outputs_are_kept() -> None:
    engine = Reorder("apertium", [EN_ES])
    legs = Legs(size=2)
    await legs.translate(engine, EN_ES, ["a", "b", "c"])
    await legs.translate(engine, EN_ES, ["c", "a"])
    assert sent(engine, EN_ES) == ["a", "b", "c", "a"]


async def test_a_failure_reaches_every_waiter_and_is_not_kept() -> None:
    engine = Reorder("apertium", [EN_ES])
    fails = True
    original = engine.translate

    async def translate(pair: Pair, segments: Sequence[str]) -> list[str]:
        await asyncio.sleep(0.01)
        if fails:
            raise RuntimeError("engine down")
        return await original(pair, segments)

    engine.translate = translate  # type: ignore[method-assign]
    legs = Legs()
    first = asyncio.create_task(legs.translate(engine, EN_ES, ["a"]))
    await asyncio.sleep(0)
    second = asyncio.create_task(legs.translate(engine, EN_ES, ["a"]))
    for task in (first, second):
        with pytest.raises(RuntimeError, match="engine down"):
            await task
    fails = False
    assert [o.text for o in await legs.translate(engine, EN_ES, ["a"])] == ["a:es"]
