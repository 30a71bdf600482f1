"""Pairs no engine serves directly, translated through a pivot language: source→P, then P→target.

``PivotEngine`` is the ``pivot`` engine that ``Engines`` builds over the direct ones. Models
come and go while the service runs, so every answer is worked out from the direct pairs of
that moment. A pair goes through one pivot language, English where it qualifies (most models
go into or out of English), else the first in code order; each leg through its own default
engine. ``Engines.resolve`` gives a ``PivotRoute``, the pair with its two legs chosen, so a
pair's pool and cache key follow the engines of its legs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from dragoman.engines.markup import translate_stored
from dragoman.errors import UnsupportedPair
from dragoman.formats.markup import Marked, parse_stored
from dragoman.models import Pair

if TYPE_CHECKING:
    from dragoman.engines import Engine
    from dragoman.engines.legs import Legs

NAME = "pivot"
PREFERRED = "en"


def pivots(direct: Collection[Pair]) -> dict[Pair, str]:
    """Each pair missing from ``direct`` that two of its pairs chain into, with its pivot."""
    targets: dict[str, set[str]] = {}
    for pair in direct:
        targets.setdefault(pair.source, set()).add(pair.target)
    found: dict[Pair, str] = {}
    for source, middles in targets.items():
        for via in sorted(middles, key=lambda code: (code != PREFERRED, code)):
            for target in targets.get(via, ()):
                pair = Pair(source, target)
                if target != source and pair not in direct:
                    found.setdefault(pair, via)
    return found


def pivot_of(pair: Pair, direct: Collection[Pair]) -> str | None:
    """``pivots(direct).get(pair)``, reading ``direct`` once."""
    if pair in direct or pair.source == pair.target:
        return None
    vias = {p.target for p in direct if p.source == pair.source}
    vias &= {p.source for p in direct if p.target == pair.target}
    return min(vias, key=lambda code: (code != PREFERRED, code), default=None)


class Direct(Protocol):
    def direct(self) -> Mapping[Pair, Sequence[Engine]]:
        """Each directly served pair with its engines, its default first."""
        ...


@dataclass(frozen=True, slots=True)
class Leg:
    engine: Engine
    pair: Pair

    def warm(self) -> bool:
        return self.pair in self.engine.warm_pairs()


class PivotRoute:
    """One pair through its pivot, each leg by its default engine as chosen when resolved."""

    name = NAME

    def __init__(self, pair: Pair, first: Leg, second: Leg, shared: Legs | None = None) -> None:
        self.pair = pair
        self.legs = (first, second)
        self._shared = shared
        # A GPU worker serves the pair only if it can run both legs there.
        self.gpu_capable = first.engine.gpu_capable and second.engine.gpu_capable

    @property
    def via(self) -> str:
        return self.legs[0].pair.target

    def pairs(self) -> frozenset[Pair]:
        return frozenset({self.pair})

    def version(self, pair: Pair) -> str:
        """Both legs' engines and versions: either changing changes the output."""
        self._check(pair)
        legs = " + ".join(f"{leg.engine.name} {leg.engine.version(leg.pair)}" for leg in self.legs)
        return f"via {self.via}: {legs}"

    def warm_pairs(self) -> frozenset[Pair]:
        return self.pairs() if all(leg.warm() for leg in self.legs) else frozenset()

    async def translate(
        self, pair: Pair, segments: Sequence[str], share: str | None = None
    ) -> list[str]:
        """The whole batch through the first leg, then through the second: two engine
        calls. With ``share`` (a tenant whose jobs may reuse translations), the first leg's
        outputs are shared in this process with the tenant's other requests (``legs``)."""
        self._check(pair)
        first, second = self.legs
        if self._shared is None or share is None:
            middle = await first.engine.translate(first.pair, segments)
        else:
            shared = await self._shared.translate(first.engine, first.pair, segments, share)
            middle = [output.text for output in shared]
        return await second.engine.translate(second.pair, middle)

    async def translate_marked(self, pair: Pair, cores: Sequence[Marked]) -> list[Marked]:
        """Segments with inline codes, each leg as ``Engines.translate_marked`` would do it."""
        self._check(pair)
        texts = [core.stored() for core in cores]
        for leg in self.legs:
            texts = await translate_stored(leg.engine, leg.pair, texts)
        return [parse_stored(text) for text in texts]

    async def close(self) -> None:
        """Nothing of its own: ``Engines`` closes the legs' engines."""

    def _check(self, pair: Pair) -> None:
        if pair != self.pair:
            raise UnsupportedPair(f"this pivot route serves {self.pair}, not {pair}")


class PivotEngine:
    """The ``pivot`` engine: every pair reachable through one pivot language and not served
    directly, each translated by the ``PivotRoute`` of the moment."""

    name = NAME
    gpu_capable = False  # a pair's own is its route's, which is what Engines.resolve gives

    def __init__(self, direct: Direct, shared: Legs | None = None) -> None:
        self._direct = direct
        self._shared = shared

    def pairs(self) -> frozenset[Pair]:
        return frozenset(pivots(self._direct.direct()))

    def route(self, pair: Pair) -> PivotRoute | None:
        """``pair`` with its legs as installed now; None where it has no pivot."""
        return pivot_route(pair, self._direct.direct(), self._shared)

    def version(self, pair: Pair) -> str:
        return self._route(pair).version(pair)

    def warm_pairs(self) -> frozenset[Pair]:
        """Pairs whose two legs are both warm in their default engines."""
        table = self._direct.direct()
        defaults = {engines[0].name: engines[0] for engines in table.values()}
        loaded = {(name, pair) for name, engine in defaults.items() for pair in engine.warm_pairs()}
        warm = {pair for pair, engines in table.items() if (engines[0].name, pair) in loaded}
        return frozenset(
            pair
            for pair, via in pivots(table.keys()).items()
            if Pair(pair.source, via) in warm and Pair(via, pair.target) in warm
        )

    async def translate(self, pair: Pair, segments: Sequence[str]) -> list[str]:
        return await self._route(pair).translate(pair, segments)

    async def translate_marked(self, pair: Pair, cores: Sequence[Marked]) -> list[Marked]:
        return await self._route(pair).translate_marked(pair, cores)

    async def close(self) -> None:
        """Nothing of its own: ``Engines`` closes the legs' engines."""

    def _route(self, pair: Pair) -> PivotRoute:
        route = self.route(pair)
        if route is None:
            raise UnsupportedPair(f"{NAME} has no pivot language for {pair}")
        return route


def pivot_route(
    pair: Pair, table: Mapping[Pair, Sequence[Engine]], shared: Legs | None = None
) -> PivotRoute | None:
    """``pair`` through its pivot, each leg by its default engine in ``table``; its first
    leg through ``shared`` when given."""
    via = pivot_of(pair, table.keys())
    if via is None:
        return None
    first, second = Pair(pair.source, via), Pair(via, pair.target)
    return PivotRoute(pair, Leg(table[first][0], first), Leg(table[second][0], second), shared)
