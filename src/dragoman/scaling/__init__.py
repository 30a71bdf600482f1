"""Autoscaling of the worker pools: who the workers are, and what can change their number.

The seams: the worker registry (each worker's ``WorkerInfo``, refreshed while it lives) and
the ``ReplicaController`` that one scaler per pool drives (in-process tasks, local processes,
or a Kubernetes Deployment's scale subresource).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from dragoman.models import Pool


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """One live worker as the registry last saw it."""

    id: str
    pool: Pool
    host: str  # host name, or the pod's name on Kubernetes
    busy: bool
    # What it has loaded, as "engine:source-target" ("apertium:en-es", ...)
    warm_pairs: frozenset[str] = field(default_factory=frozenset)
    last_seen: datetime | None = None
    pid: int | None = None


class ReplicaController(Protocol):
    """Changes how many workers one pool runs."""

    async def replicas(self) -> int:
        """How many workers the backend runs or is starting now."""
        ...

    async def scale(self, replicas: int, remove: Sequence[WorkerInfo] = ()) -> None:
        """Sets the pool's size. At a scale-down, ``remove`` names the workers to take away
        (idle ones, chosen by the policy); a backend that cannot pick its victims makes them
        the cheapest to remove."""
        ...
