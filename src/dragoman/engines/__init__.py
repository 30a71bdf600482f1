"""Translation engines behind one protocol, and the set of them that picks one per pair."""

from __future__ import annotations

import logging
import operator
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from dragoman.engines.legs import Legs
from dragoman.engines.pivot import NAME as PIVOT
from dragoman.engines.pivot import PivotEngine, PivotRoute, pivot_of, pivot_route, pivots
from dragoman.engines.scores import Scored, Scores, scored
from dragoman.engines.view import in_view
from dragoman.errors import DragomanError, UnsupportedPair
from dragoman.models import Pair, Pool

if TYPE_CHECKING:
    from dragoman.engines.manifest import Manifest
    from dragoman.settings import Settings

__all__ = ["Engine", "Engines", "Pair", "Scored", "Scores", "open_engines"]

log = logging.getLogger(__name__)


@runtime_checkable
class Engine(Protocol):
    """Translates batches of segments; each segment's output is the one it would get alone."""

    name: str
    gpu_capable: bool  # can run on a CUDA device, so a GPU worker may serve it

    def pairs(self) -> frozenset[Pair]:
        """The language pairs this engine can translate."""
        ...

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        """One translation per segment, in order."""
        ...

    def version(self, pair: Pair) -> str:
        """What this engine is for ``pair``, as a string that changes whenever its output
        may change (installed data, a model's files): part of the segment cache's key.
        Cheap after the first call; ``UnsupportedPair`` for a pair it does not serve."""
        ...

    def warm_pairs(self) -> frozenset[Pair]:
        """Pairs whose models or pipelines are loaded right now."""
        ...

    async def close(self) -> None:
        """Stops every process or model this engine holds."""
        ...


@runtime_checkable
class MarksUnknown(Protocol):
    """An engine that can mark the words it does not know (Apertium's ``*word``)."""

    def marking(self) -> Engine:
        """The same engine, writing those marks."""
        ...


class Engines:
    """The engines of one process. A pair's default engine is the one ``pair_defaults``
    names when it serves the pair, else the first that does; a pair that none serves but
    that chains through a pivot language goes to the ``pivot`` engine (``pivot.py``)."""

    def __init__(
        self, engines: Iterable[Engine], *, pair_defaults: Mapping[Pair, str] | None = None
    ) -> None:
        self._engines = {engine.name: engine for engine in engines}
        self._pair_defaults = dict(pair_defaults or {})
        # A pivot's first leg, translated once for the pair itself and every route through it.
        self.legs = Legs()
        self._pivot = PivotEngine(self, self.legs)
        self._first_legs: tuple[Mapping[Pair, tuple[Engine, ...]] | None, frozenset[Pair]]
        self._first_legs = (None, frozenset())
        # The last table, with the engines' pair sets it was built from.
        self._table: tuple[tuple[frozenset[Pair], ...], Mapping[Pair, tuple[Engine, ...]]]
        self._table = ((), {})

    def direct(self) -> Mapping[Pair, tuple[Engine, ...]]:
        """Each pair some engine serves itself, with those engines, its default first.
        Built again only when an engine's set of pairs is another object: each engine
        keeps its set while nothing it reads changed, and the table is asked for several
        times per request; within ``view.one_view``, the engines are asked once."""
        return in_view(self, self._fresh_table)

    def _fresh_table(self) -> Mapping[Pair, tuple[Engine, ...]]:
        served = tuple(engine.pairs() for engine in self._engines.values())
        built_from, table = self._table
        if len(served) == len(built_from) and all(map(operator.is_, served, built_from)):
            return table
        lists: dict[Pair, list[Engine]] = {}
        for engine, pairs in zip(self._engines.values(), served, strict=True):
            for pair in pairs:
                lists.setdefault(pair, []).append(engine)
        for pair, name in self._pair_defaults.items():
            if pair in lists:
                lists[pair].sort(key=lambda engine: engine.name != name)
        table = MappingProxyType({pair: tuple(engines) for pair, engines in lists.items()})
        self._table = (served, table)
        return table

    def first_legs(self) -> frozenset[Pair]:
        """The pairs some pivot route goes through first (built again with the table)."""
        table = self.direct()
        built_from, legs = self._first_legs
        if built_from is not table:
            legs = frozenset(Pair(pair.source, via) for pair, via in pivots(table.keys()).items())
            self._first_legs = (table, legs)
        return legs

    def languages(self) -> list[tuple[Pair, list[str]]]:
        """Every pair with its engines, default first; a pivot pair's is ``pivot``."""
        table = self.direct()
        rows = [(pair, [engine.name for engine in engines]) for pair, engines in table.items()]
        rows += [(pair, [PIVOT]) for pair in pivots(table.keys())]
        return sorted(rows)

    def pivots(self) -> dict[Pair, str]:
        """Each pair served through a pivot, with its pivot language."""
        return pivots(self.direct().keys())

    def pivot_via(self, pair: Pair) -> str | None:
        """The pivot language of ``pair``; None for a pair served directly (or not at all)."""
        return pivot_of(pair, self.direct().keys())

    def resolve(self, pair: Pair, engine: str | None = None) -> Engine:
        """The engine to use for ``pair``, or ``UnsupportedPair`` naming what is installed.
        For a pivot pair, its ``PivotRoute``: the legs as installed now."""
        table = self.direct()
        candidates: Sequence[Engine] = table.get(pair, [])
        if not candidates and (route := pivot_route(pair, table, self.legs)) is not None:
            candidates = [route]
        if not candidates:
            raise UnsupportedPair(f"language pair {pair} is not installed; see /v1/languages")
        if engine is None:
            return candidates[0]
        if engine == PIVOT and pair in table:
            # A model for the pair itself arrived after this work was routed through the
            # pivot: the pair is served, directly, rather than the work failing.
            return candidates[0]
        for candidate in candidates:
            if candidate.name == engine:
                return candidate
        known = engine in self._engines or engine == PIVOT
        why = f"does not serve {pair}" if known else "is not installed"
        served_by = ", ".join(e.name for e in candidates)
        raise UnsupportedPair(f"engine {engine!r} {why}; engines for {pair}: {served_by}")

    def preferred(self, pair: Pair, *, neural: bool) -> str | None:
        """The first of ``pair``'s own engines (default first) that serves models (the
        neural ones), or that does not; None where it has none of that kind, or is served
        through a pivot: its default serves it then."""
        models = set(self.model_engines())
        for engine in self.direct().get(pair, ()):
            if (engine.name in models) == neural:
                return engine.name
        return None

    def _marking(self, pair: Pair, engine: str | None, mark_unknown: bool) -> Engine:
        """The engine for ``pair``; with ``mark_unknown``, its marking form where it has
        one (an engine that knows no unknown words has no marks to write)."""
        chosen = self.resolve(pair, engine)
        if mark_unknown and isinstance(chosen, MarksUnknown):
            return chosen.marking()
        return chosen

    async def translate(
        self, engine: str, pair: Pair, segments: Sequence[str], *, mark_unknown: bool = False
    ) -> list[str]:
        """Each segment's translation, with the source's own whitespace at its edges;
        ``mark_unknown``: words the engine does not know are marked (``*word``)."""
        outputs = await self._marking(pair, engine, mark_unknown).translate(pair, segments)
        return [keep_edges(s, o) for s, o in zip(segments, outputs, strict=True)]

    def version(self, engine: str, pair: Pair, *, mark_unknown: bool = False) -> str:
        # ":edges": outputs are trimmed to the source's edges (segment-cache keys change).
        return self._marking(pair, engine, mark_unknown).version(pair) + ":edges"

    async def translate_marked(
        self, engine: str, pair: Pair, segments: Sequence[str], *, mark_unknown: bool = False
    ) -> list[str]:
        """Segments of file jobs: text with inline codes, in its stored form both ways."""
        from dragoman.engines.markup import translate_stored

        chosen = self._marking(pair, engine, mark_unknown)
        return await translate_stored(chosen, pair, segments)

    async def translate_scored(
        self,
        engine: str,
        pair: Pair,
        segments: Sequence[str],
        *,
        markup: bool = False,
        mark_unknown: bool = False,
        share: str | None = None,
    ) -> list[Scored]:
        """``translate``, or ``translate_marked`` with ``markup``, each translation with the
        model's confidence where the engine ``Scores`` its outputs (None elsewhere)."""
        from dragoman.engines.markup import translate_stored_scored

        chosen = self._marking(pair, engine, mark_unknown)
        if markup:
            return await translate_stored_scored(chosen, pair, segments)
        if share is None or mark_unknown:
            outputs = await scored(chosen, pair, segments)
        elif isinstance(chosen, PivotRoute):
            outputs = [Scored(text) for text in await chosen.translate(pair, segments, share)]
        elif pair in self.first_legs():
            outputs = await self.legs.translate(chosen, pair, segments, share)
        else:
            outputs = await scored(chosen, pair, segments)
        return [
            Scored(keep_edges(source, text), confidence)
            for source, (text, confidence) in zip(segments, outputs, strict=True)
        ]

    def model(self, engine: str, pair: Pair) -> str | None:
        """The model a job's results name for ``pair``'s translations: an installed
        package's version (as ``/v1/models`` lists it), else the engine's version of the
        pair, an opaque string that changes with the model or the pair's data; None where
        the engine does not serve the pair."""
        found = self.manifest(engine, pair)
        if found is not None and found.version != "local":
            return found.version
        try:
            return self.resolve(pair, engine).version(pair)
        except DragomanError:
            return None

    def manifest(self, engine: str, pair: Pair) -> Manifest | None:
        """The installed model's ``dragoman-model.json`` (``None``: an engine without model
        folders, or a model laid out by hand)."""
        from dragoman.engines.manifest import read_manifest

        found = self._engines.get(engine)
        model_dir = getattr(found, "model_dir", None)
        if model_dir is None:
            return None
        try:
            return read_manifest(model_dir(pair))
        except UnsupportedPair:
            return None

    def model_engines(self) -> list[str]:
        """The engines that serve models from folders (the neural ones)."""
        return [name for name, e in self._engines.items() if hasattr(e, "model_dir")]

    def warm_models(self) -> frozenset[str]:
        """What is loaded now, as ``engine:source-target`` (the worker registry's form); a
        pivot pair counts once both its legs are."""
        return frozenset(
            f"{engine.name}:{pair}"
            for engine in [*self._engines.values(), self._pivot]
            for pair in engine.warm_pairs()
        )

    async def close(self) -> None:
        for engine in self._engines.values():
            await engine.close()


def keep_edges(source: str, output: str) -> str:
    """``output`` with the whitespace at ``source``'s edges instead of its own: an engine
    adds or drops some (Apertium's pro-drop leaves a space where the pronoun was)."""
    core = source.strip()
    if not core:
        return output
    start = source.index(core[0])
    return source[:start] + output.strip() + source[start + len(core) :]


def open_engines(settings: Settings, pool: Pool = Pool.CPU) -> Engines:
    """The engines of one process, the pair's default first (``pair_engines``, else
    ``engine_order``). Neural
    models load on first use, on the CPU for the CPU pool and on ``gpu_device`` for the GPU
    pool, into one cache per process under ``model_memory_mb``."""
    from dragoman.engines.apertium import ApertiumEngine

    built: dict[str, Engine] = {
        **_neural_engines(settings, pool),
        "apertium": ApertiumEngine(
            settings.apertium_modes_dir,
            pipelines_per_pair=settings.apertium_pipelines_per_pair,
            max_uses=settings.apertium_max_uses,
            read_timeout_s=settings.apertium_read_timeout_s,
            idle_shutdown_s=settings.apertium_idle_shutdown_s,
        ),
    }
    order = [name for name in settings.engine_preference if name in built]
    order += [name for name in built if name not in order]
    unknown = set(settings.pair_engine_defaults.values()) - set(built)
    if unknown:
        log.warning("DRAGOMAN_PAIR_ENGINES names no such engine: %s", ", ".join(sorted(unknown)))
    return Engines((built[name] for name in order), pair_defaults=_pair_defaults(settings))


def _pair_defaults(settings: Settings) -> dict[Pair, str]:
    """``pair_engines`` with its pairs as canonical codes (the settings checked their form)."""
    from dragoman.languages import canonical

    table: dict[Pair, str] = {}
    for key, engine in settings.pair_engine_defaults.items():
        source, _, target = key.partition("-")
        table[Pair(canonical(source), canonical(target))] = engine
    return table


def _neural_engines(settings: Settings, pool: Pool) -> dict[str, Engine]:
    from dragoman.engines.ct2 import CTranslate2Engine
    from dragoman.engines.hf import TransformersEngine
    from dragoman.engines.model_cache import ModelCache

    on_cpu = pool is Pool.CPU
    device = "cpu" if on_cpu else settings.gpu_device
    batch_tokens = settings.neural_batch_tokens if on_cpu else settings.gpu_batch_tokens
    cache = ModelCache(settings.model_memory_mb * 2**20, max_models=settings.max_loaded_models)
    return {
        "ctranslate2": CTranslate2Engine(
            settings.models_dir,
            cache=cache,
            device=device,
            compute_type=settings.ct2_compute_type if on_cpu else settings.ct2_gpu_compute_type,
            threads=settings.neural_threads,
            batch_tokens=batch_tokens,
            max_output_tokens=settings.neural_max_output_tokens,
        ),
        "transformers": TransformersEngine(
            settings.models_dir,
            cache=cache,
            device=device,
            dtype="float32" if on_cpu else settings.transformers_gpu_dtype,
            batch_tokens=batch_tokens if batch_tokens != "auto" else (16384 if on_cpu else 131072),
            max_output_tokens=settings.neural_max_output_tokens,
        ),
    }
