"""Translation engines behind one protocol, and the set of them that picks one per pair."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from dragoman.errors import UnsupportedPair
from dragoman.models import Pair, Pool

if TYPE_CHECKING:
    from dragoman.settings import Settings

__all__ = ["Engine", "Engines", "Pair", "open_engines"]


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


class Engines:
    """The engines of one process; the first engine listed for a pair is its default."""

    def __init__(self, engines: Iterable[Engine]) -> None:
        self._engines = {engine.name: engine for engine in engines}

    def languages(self) -> list[tuple[Pair, list[str]]]:
        table: dict[Pair, list[str]] = {}
        for engine in self._engines.values():
            for pair in engine.pairs():
                table.setdefault(pair, []).append(engine.name)
        return sorted(table.items())

    def resolve(self, pair: Pair, engine: str | None = None) -> Engine:
        """The engine to use for ``pair``, or ``UnsupportedPair`` naming what is installed."""
        candidates = [e for e in self._engines.values() if pair in e.pairs()]
        if not candidates:
            raise UnsupportedPair(f"language pair {pair} is not installed; see /v1/languages")
        if engine is None:
            return candidates[0]
        for candidate in candidates:
            if candidate.name == engine:
                return candidate
        why = f"does not serve {pair}" if engine in self._engines else "is not installed"
        served_by = ", ".join(e.name for e in candidates)
        raise UnsupportedPair(f"engine {engine!r} {why}; engines for {pair}: {served_by}")

    async def translate(self, engine: str, pair: Pair, segments: Sequence[str]) -> list[str]:
        return await self.resolve(pair, engine).translate(pair, segments)

    def version(self, engine: str, pair: Pair) -> str:
        return self.resolve(pair, engine).version(pair)

    async def translate_marked(self, engine: str, pair: Pair, segments: Sequence[str]) -> list[str]:
        """Segments of file jobs: text with inline codes, in its stored form both ways."""
        from dragoman.engines.markup import translate_stored

        return await translate_stored(self.resolve(pair, engine), pair, segments)

    def warm_models(self) -> frozenset[str]:
        """What is loaded now, as ``engine:source-target`` (the worker registry's form)."""
        return frozenset(
            f"{engine.name}:{pair}"
            for engine in self._engines.values()
            for pair in engine.warm_pairs()
        )

    async def close(self) -> None:
        for engine in self._engines.values():
            await engine.close()


def open_engines(settings: Settings, pool: Pool = Pool.CPU) -> Engines:
    """The engines of one process, the pair's default first (``engine_order``). Neural
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
    return Engines(built[name] for name in order)


def _neural_engines(settings: Settings, pool: Pool) -> dict[str, Engine]:
    from dragoman.engines.ct2 import CTranslate2Engine
    from dragoman.engines.hf import TransformersEngine
    from dragoman.engines.model_cache import ModelCache

    on_cpu = pool is Pool.CPU
    device = "cpu" if on_cpu else settings.gpu_device
    batch_tokens = settings.neural_batch_tokens if on_cpu else settings.gpu_batch_tokens
    cache = ModelCache(settings.model_memory_mb * 2**20)
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
            batch_tokens=batch_tokens,
            max_output_tokens=settings.neural_max_output_tokens,
        ),
    }
