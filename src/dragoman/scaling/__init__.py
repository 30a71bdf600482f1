"""Autoscaling of the worker pools: what can change their number.

The seam is the ``ReplicaController`` that one scaler per pool drives (in-process tasks,
local processes, or a Kubernetes Deployment's scale subresource). The scaler reads the
worker registry (``WorkerInfo`` rows, which each worker refreshes while it lives).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from dragoman.models import Pool, WorkerInfo

# The pool's live workers, read from the worker registry when a controller must pick victims.
WorkerSource = Callable[[], Awaitable[list[WorkerInfo]]]


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

    async def close(self) -> None:
        """Lets go of the backend (local worker processes drain and exit)."""
        ...


# The backends of ``dragoman scaler --backend``.
CONTROLLER_BACKENDS = ("process", "kubernetes")


def open_controller(
    backend: str,
    pool: Pool,
    workers: WorkerSource | None = None,
    *,
    deployment: str | None = None,
    namespace: str | None = None,
) -> ReplicaController:
    """The controller of a standalone scaler: ``process`` runs ``dragoman worker`` processes
    on this host; ``kubernetes`` scales the pool's Deployment (``deployment``, by default
    ``dragoman-worker-<pool>``, in ``namespace`` or the pod's own), ranking the ``workers``
    it removes. ``ValueError`` names the backends for any other."""
    if backend == "process":
        from dragoman.scaling.process import ProcessController

        return ProcessController(pool)
    if backend == "kubernetes":
        from dragoman.scaling.kubernetes import kubernetes_controller

        if workers is None:
            return kubernetes_controller(pool, deployment=deployment, namespace=namespace)
        return kubernetes_controller(
            pool, deployment=deployment, namespace=namespace, workers=workers
        )
    raise ValueError(f"backend must be one of {', '.join(CONTROLLER_BACKENDS)}, not {backend!r}")
