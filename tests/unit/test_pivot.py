"""Pairs without a model of their own, through a pivot language (engines/pivot.py), with
fake engines whose pairs can be installed and removed while the test runs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from dragoman.bus.memory import MemoryBus
from dragoman.engines import Engine, Engines, Pair, keep_edges
from dragoman.engines.pivot import PivotEngine, pivots
from dragoman.errors import UnsupportedPair
from dragoman.jobs import LocalIntake
from dragoman.messages import Queued
from dragoman.metrics import Metrics
from dragoman.models import Document, Job, JobOptions, Output, Pool
from dragoman.queue import BatchRequestsQueue
from dragoman.runtime import Runtime
from dragoman.store.sql import SqlJobStore
from dragoman.worker.chunks import translate_chunk
from tests.conftest import FakeClock, a_manager

FR_EN, EN_ES, FR_ES = Pair("fr", "en"), Pair("en", "es"), Pair("fr", "es")


class Reorder:
    """Reverses the words and tags each with the target: every leg leaves its mark."""

    def __init__(self, name: str, pairs: Iterable[Pair], *, gpu_capable: bool = False) -> None:
        self.name = name
        self.gpu_capable = gpu_capable
        self.installed = set(pairs)
        self.warm: set[Pair] = set()
        self.calls: list[tuple[Pair, list[str]]] = []
        self.version_tag = "1"

    def pairs(self) -> frozenset[Pair]:
        return frozenset(self.installed)

    def warm_pairs(self) -> frozenset[Pair]:
        return frozenset(self.warm)

    def version(self, pair: Pair) -> str:
        if pair not in self.installed:
            raise UnsupportedPair(f"{self.name} has no {pair}")
        return f"{self.name}-{self.version_tag}"

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        assert pair in self.installed
        self.calls.append((pair, list(segments)))
        return [" ".join(f"{w}:{pair.target}" for w in reversed(s.split())) for s in segments]

    async def close(self) -> None:
        return None


SEGMENTS = ["Le chat dort.", "", "  Bonjour  le monde ", "Un"]


async def test_a_pair_without_a_model_is_offered_through_a_pivot() -> None:
    engines = Engines([Reorder("neural", [FR_EN, EN_ES])])
    assert engines.languages() == [(EN_ES, ["neural"]), (FR_EN, ["neural"]), (FR_ES, ["pivot"])]
    assert engines.pivot_via(FR_ES) == "en"
    assert engines.pivot_via(EN_ES) is None
    assert engines.pivots() == {FR_ES: "en"}
    assert engines.resolve(FR_ES).name == "pivot"
    assert engines.resolve(FR_ES, "pivot").name == "pivot"


async def test_the_pivot_gives_what_two_separate_calls_give_segment_by_segment() -> None:
    engines = Engines([Reorder("neural", [FR_EN, EN_ES])])
    through = await engines.translate("pivot", FR_ES, SEGMENTS)
    english = await engines.translate("neural", FR_EN, SEGMENTS)
    assert through == await engines.translate("neural", EN_ES, english)
    assert through[0] == "Le:en:es chat:en:es dort.:en:es"


async def test_each_leg_is_one_batched_call_of_its_default_engine() -> None:
    first, second = Reorder("a", [FR_EN]), Reorder("b", [FR_EN, EN_ES])
    engines = Engines([first, second])
    await engines.translate("pivot", FR_ES, SEGMENTS)
    assert first.calls == [(FR_EN, SEGMENTS)]
    assert [pair for pair, _ in second.calls] == [EN_ES]


async def test_marked_segments_go_through_both_legs_as_two_marked_calls() -> None:
    engines = Engines([Reorder("neural", [FR_EN, EN_ES])])
    marked = [" <g1>Le chat</g1> dort. ", "<x1/>", "Un <g2>grand</g2> chien<x3/>"]
    through = await engines.translate_marked("pivot", FR_ES, marked)
    english = await engines.translate_marked("neural", FR_EN, marked)
    assert through == await engines.translate_marked("neural", EN_ES, english)
    assert through[1] == "<x1/>"


async def test_english_is_the_preferred_pivot_else_the_first_code() -> None:
    via_en_or_de = [Pair("fr", "de"), Pair("de", "es"), FR_EN, EN_ES]
    assert pivots(set(via_en_or_de)) == {FR_ES: "en"}
    via_it_or_de = {Pair("fr", "it"), Pair("it", "es"), Pair("fr", "de"), Pair("de", "es")}
    assert pivots(via_it_or_de) == {FR_ES: "de"}
    assert Engines([Reorder("n", via_it_or_de)]).pivot_via(FR_ES) == "de"


async def test_a_round_trip_is_no_pair() -> None:
    assert pivots({EN_ES, Pair("es", "en")}) == {}


async def test_a_pair_served_directly_is_never_pivoted() -> None:
    engines = Engines([Reorder("neural", [FR_EN, EN_ES, FR_ES])])
    assert engines.pivot_via(FR_ES) is None
    assert engines.resolve(FR_ES).name == "neural"
    # Work routed through the pivot before the direct model arrived is served by it.
    assert engines.resolve(FR_ES, "pivot").name == "neural"


async def test_naming_another_engine_for_a_pivot_pair_lists_the_pivot() -> None:
    engines = Engines([Reorder("neural", [FR_EN, EN_ES])])
    with pytest.raises(UnsupportedPair, match=r"'neural' does not serve fr-es.*: pivot"):
        engines.resolve(FR_ES, "neural")


async def test_pivots_follow_the_pairs_installed_at_run_time() -> None:
    engine = Reorder("neural", [FR_EN])
    engines = Engines([engine])
    with pytest.raises(UnsupportedPair):
        engines.resolve(FR_ES)
    engine.installed.add(EN_ES)
    assert engines.resolve(FR_ES).name == "pivot"
    engine.installed.add(FR_ES)
    assert engines.resolve(FR_ES).name == "neural"
    assert (FR_ES, ["pivot"]) not in engines.languages()
    engine.installed -= {FR_ES, FR_EN}
    with pytest.raises(UnsupportedPair):
        await engines.translate("pivot", FR_ES, ["x"])


async def test_the_version_names_both_legs_and_changes_with_either() -> None:
    first, second = Reorder("a", [FR_EN]), Reorder("b", [EN_ES])
    engines = Engines([first, second])
    before = engines.version("pivot", FR_ES)
    assert "a-1" in before and "b-1" in before
    second.version_tag = "2"
    assert engines.version("pivot", FR_ES) not in {before, engines.version("b", EN_ES)}


async def test_a_pivot_pair_is_warm_once_both_legs_are() -> None:
    engine = Reorder("neural", [FR_EN, EN_ES])
    engines = Engines([engine])
    engine.warm = {FR_EN}
    assert "pivot:fr-es" not in engines.warm_models()
    engine.warm = {FR_EN, EN_ES}
    assert engines.warm_models() == {"neural:fr-en", "neural:en-es", "pivot:fr-es"}


@pytest.mark.parametrize(("first_gpu", "second_gpu"), [(True, True), (True, False), (False, True)])
async def test_a_pivot_pair_runs_on_gpus_only_if_both_legs_can(
    first_gpu: bool, second_gpu: bool
) -> None:
    engines = Engines(
        [
            Reorder("a", [FR_EN], gpu_capable=first_gpu),
            Reorder("b", [EN_ES], gpu_capable=second_gpu),
        ]
    )
    assert engines.resolve(FR_ES).gpu_capable is (first_gpu and second_gpu)


async def test_the_legs_take_each_pairs_configured_default() -> None:
    gpu, cpu = Reorder("gpu", [FR_EN, EN_ES], gpu_capable=True), Reorder("cpu", [FR_EN, EN_ES])
    engines = Engines([gpu, cpu], pair_defaults={EN_ES: "cpu"})
    await engines.translate("pivot", FR_ES, ["Un"])
    assert [pair for pair, _ in gpu.calls] == [FR_EN]
    assert [pair for pair, _ in cpu.calls] == [EN_ES]
    assert engines.resolve(FR_ES).gpu_capable is False


def a_job(job_id: str, *, markup: bool = False) -> Job:
    return Job(
        id=job_id,
        tenant=None,
        source_lang="fr",
        target_lang="es",
        engine="pivot",
        pool=Pool.CPU,
        documents=1,
        segments_total=1,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        options=JobOptions(markup=markup),
    )


async def test_a_chunk_of_several_jobs_makes_one_call_per_leg_and_kind() -> None:
    engine = Reorder("neural", [FR_EN, EN_ES])
    first, second, marked = a_job("a"), a_job("b"), a_job("c", markup=True)

    async def no_terms(engine: str, pair: Pair, items: Any) -> list[Output]:
        raise AssertionError("no job here keeps a glossary")

    items = [(first, "Un chat"), (second, "Deux chiens"), (marked, "<g1>Trois</g1> oiseaux")]
    out = await translate_chunk(Engines([engine]), no_terms, "pivot", FR_ES, items)

    # A pivot goes through two engines: no one model's confidence.
    assert out[:2] == [Output("Un:en:es chat:en:es"), Output("Deux:en:es chiens:en:es")]
    # File jobs' segments, then plain ones: each kind one call per leg for all the jobs.
    assert [pair for pair, _ in engine.calls] == [FR_EN, EN_ES, FR_EN, EN_ES]
    assert engine.calls[2] == (FR_EN, ["Un chat", "Deux chiens"])
    assert Queued.of(first).batch_key == "pivot:fr-es"  # as warm_models spells it


@pytest.mark.parametrize(("second_gpu", "pool"), [(True, Pool.GPU), (False, Pool.CPU)])
async def test_a_big_pivot_job_goes_to_gpus_only_if_both_legs_run_there(
    make_settings: Any, clock: FakeClock, second_gpu: bool, pool: Pool
) -> None:
    engines = Engines(
        [Reorder("a", [FR_EN], gpu_capable=True), Reorder("b", [EN_ES], gpu_capable=second_gpu)]
    )
    settings = make_settings(gpu_threshold_segments=2, gpu_max_workers=1)
    store = SqlJobStore("sqlite+aiosqlite:///:memory:")
    await store.open()
    runtime = Runtime(settings, store, MemoryBus(), clock, Metrics())
    queue = BatchRequestsQueue()
    manager = a_manager(runtime, engines, LocalIntake(queue, lambda: None))
    try:
        job = await manager.submit(None, FR_ES, [Document("d", ["x", "y"])], JobOptions())
    finally:
        await store.close()
    assert (job.engine, job.pool) == ("pivot", pool)


async def test_the_pivot_engine_is_an_engine_of_its_own() -> None:
    engines = Engines([Reorder("neural", [FR_EN, EN_ES])])
    pivot = PivotEngine(engines)
    assert isinstance(pivot, Engine)
    assert pivot.pairs() == {FR_ES}
    own = await pivot.translate(FR_ES, SEGMENTS)
    assert [keep_edges(s, o) for s, o in zip(SEGMENTS, own, strict=True)] == (
        await engines.translate("pivot", FR_ES, SEGMENTS)
    )
    assert pivot.version(FR_ES) + ":edges" == engines.version("pivot", FR_ES)
    with pytest.raises(UnsupportedPair):
        pivot.version(EN_ES)
