"""Which engines are installed, which pairs they serve, and the default engine per pair."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dragoman.engines import Engine, Pair
from dragoman.errors import UnsupportedPair


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
        if engine is not None:
            candidates = [e for e in candidates if e.name == engine]
        if not candidates:
            wanted = f"{pair}" + (f" with engine {engine!r}" if engine else "")
            raise UnsupportedPair(f"language pair {wanted} is not installed; see /v1/languages")
        return candidates[0]

    async def translate(self, engine: str, pair: Pair, segments: Sequence[str]) -> list[str]:
        return await self.resolve(pair, engine).translate(pair, segments)

    def warm_pairs(self) -> frozenset[Pair]:
        return frozenset().union(*(e.warm_pairs() for e in self._engines.values()))

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
