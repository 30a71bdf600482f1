"""How many workers a pool should run, and which idle ones go first at a scale-down.

Pure and synchronous: a pool's scaler calls ``ScalePolicy.decide`` every ``scale_interval_s``
with the pool's counts and applies the answer through a ``ReplicaController``. Time comes from
the clock it is given (monotonic seconds), so tests and the simulation drive it by hand.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from dragoman.models import Pool, WorkerInfo
from dragoman.settings import Settings


@dataclass(frozen=True, slots=True)
class PoolPolicy:
    """One pool's autoscaling knobs (the ``{pool}_*`` settings)."""

    min_workers: int
    max_workers: int
    standby_workers: int
    scale_down_delay_s: float
    scale_interval_s: float
    scale_with_queued: bool
    queued_cap: int

    def __post_init__(self) -> None:
        if not 0 <= self.min_workers <= self.max_workers:
            raise ValueError(
                f"need 0 <= min_workers ({self.min_workers}) <= max_workers ({self.max_workers})"
            )
        if self.standby_workers < 0 or self.queued_cap < 0:
            raise ValueError("standby_workers and queued_cap cannot be negative")
        if self.scale_down_delay_s < 0 or self.scale_interval_s <= 0:
            raise ValueError("need scale_down_delay_s >= 0 and scale_interval_s > 0")

    @classmethod
    def from_settings(cls, settings: Settings, pool: Pool) -> PoolPolicy:
        def knob(name: str) -> Any:
            return getattr(settings, f"{pool.value}_{name}")

        return cls(
            min_workers=knob("min_workers"),
            max_workers=knob("max_workers"),
            standby_workers=knob("standby_workers"),
            scale_down_delay_s=knob("scale_down_delay_s"),
            scale_interval_s=knob("scale_interval_s"),
            scale_with_queued=knob("scale_with_queued"),
            queued_cap=knob("queued_cap"),
        )

    def target(self, *, in_flight: int, queued: int) -> int:
        """Jobs in flight + standby workers (+ queued jobs, capped), within [min, max]."""
        wanted = in_flight + self.standby_workers
        if self.scale_with_queued:
            wanted += min(queued, self.queued_cap)
        return self.clamp(wanted)

    def clamp(self, replicas: int) -> int:
        return max(self.min_workers, min(self.max_workers, replicas))


class Reason(StrEnum):
    """Why a decision came out as it did (a label for logs and metrics)."""

    UP = "up"  # the target is above the current count: start workers now
    STEADY = "steady"  # the target is the current count
    WAITING = "waiting"  # a lower target, held back by the delay window or by busy workers
    DOWN = "down"  # a lower target confirmed: remove idle workers


@dataclass(frozen=True, slots=True)
class Decision:
    replicas: int  # what the pool should run now
    target: int  # this round's target, before the scale-down delay smooths it
    reason: Reason


class ScalePolicy:
    """Turns a pool's counts into a replica count: up at once, down only once confirmed.

    A scale-down needs the policy to have watched the pool for ``scale_down_delay_s``; it then
    goes to the highest target seen over that window (both ends included), never below the
    busy workers, and never up on the way down. ``max_workers`` wins over everything else.
    """

    def __init__(self, policy: PoolPolicy, clock: Callable[[], float]) -> None:
        self.policy = policy
        self._clock = clock
        self._since: float | None = None
        self._targets: deque[tuple[float, int]] = deque()  # (time, target), oldest first

    def decide(self, *, in_flight: int, queued: int, busy: int, current: int) -> int:
        """The replica count the pool should run now."""
        return self.explain(in_flight=in_flight, queued=queued, busy=busy, current=current).replicas

    def explain(self, *, in_flight: int, queued: int, busy: int, current: int) -> Decision:
        """``decide``, with the round's target and the reason."""
        now = self._clock()
        target = self.policy.target(in_flight=in_flight, queued=queued)
        highest = self._remember(now, target)
        if target >= current:
            return Decision(target, target, Reason.UP if target > current else Reason.STEADY)
        replicas = current
        if self._since is not None and now - self._since >= self.policy.scale_down_delay_s:
            replicas = min(current, max(highest, busy))
        replicas = self.policy.clamp(replicas)
        return Decision(replicas, target, Reason.DOWN if replicas < current else Reason.WAITING)

    def _remember(self, now: float, target: int) -> int:
        """Records this round's target; returns the highest one within the delay window."""
        if self._since is None:
            self._since = now
        self._targets.append((now, target))
        cutoff = now - self.policy.scale_down_delay_s
        while self._targets[0][0] < cutoff:
            self._targets.popleft()
        return max(seen for _, seen in self._targets)


def choose_victims(workers: Sequence[WorkerInfo], count: int) -> list[WorkerInfo]:
    """Up to ``count`` idle workers to remove, the cheapest to lose first.

    Busy workers are never chosen. Among idle ones: fewest warm language pairs first (least
    to reload elsewhere), then the one seen longest ago (never seen counts as oldest), then by
    id so the choice is stable. Fewer come back when fewer are idle.
    """
    idle = sorted((w for w in workers if not w.busy), key=_removal_order)
    return idle[: max(count, 0)]


def _removal_order(worker: WorkerInfo) -> tuple[int, float, str]:
    seen = worker.last_seen.timestamp() if worker.last_seen is not None else float("-inf")
    return (len(worker.warm_pairs), seen, worker.id)
