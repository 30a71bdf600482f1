"""Translation engines behind one protocol, and the registry that picks one per pair."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True, order=True)
class Pair:
    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source}-{self.target}"


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

    def warm_pairs(self) -> frozenset[Pair]:
        """Pairs whose models or pipelines are loaded right now."""
        ...

    async def close(self) -> None:
        """Stops every process or model this engine holds."""
        ...
