"""BatchRequestsQueue: which waiting job goes next, per pool.

Higher priority first; within a priority, tenants take turns; within a tenant, the earliest
deadline first, then the jobs without one, oldest first (ADR 0024). Each push and pop costs
O(log n): a tenant's jobs are a heap.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace

from dragoman.messages import Queued
from dragoman.models import Job, Pool, Priority


@dataclass(frozen=True, slots=True)
class Waiting(Queued):
    """A queued job as the queue orders it: its ``Queued`` notice and when it arrived."""

    since: float = field(default_factory=time.monotonic)

    @classmethod
    def of(cls, job: Job) -> Waiting:
        return cls.of_notice(Queued.of(job))

    @classmethod
    def of_notice(cls, notice: Queued) -> Waiting:
        return cls(**{f.name: getattr(notice, f.name) for f in fields(Queued)})

    def moved_to(self, pool: Pool) -> Waiting:
        return replace(self, pool=pool)


# A tenant's heap entry: (deadline as a timestamp, or infinity; arrival number; the item).
_Entry = tuple[float, int, Waiting]
_BY_RANK = sorted(Priority, key=lambda p: p.rank, reverse=True)


class _Lane:
    """One priority of one pool: a round-robin over tenants, each tenant's jobs by deadline,
    then by arrival. Entries that ``live`` refuses (removed jobs) are dropped when met."""

    def __init__(self) -> None:
        self._tenants: OrderedDict[str | None, list[_Entry]] = OrderedDict()

    def push(self, entry: _Entry) -> None:
        heapq.heappush(self._tenants.setdefault(entry[2].tenant, []), entry)

    def pop(self, live: Callable[[Waiting], bool]) -> Waiting | None:
        while self._tenants:
            tenant, jobs = next(iter(self._tenants.items()))
            item = heapq.heappop(jobs)[2]
            alive = live(item)
            if not jobs:
                del self._tenants[tenant]
            elif alive:
                self._tenants.move_to_end(tenant)
            if alive:
                return item
            # A withdrawn job is no turn: its tenant stays first.
        return None

    def ordered(self, live: Callable[[Waiting], bool]) -> list[Waiting]:
        """What ``pop`` would give, in order, if nothing came in."""
        turns = [deque(e[2] for e in sorted(jobs) if live(e[2])) for jobs in self._tenants.values()]
        turns = [jobs for jobs in turns if jobs]
        out: list[Waiting] = []
        while turns:
            out += [jobs.popleft() for jobs in turns]
            turns = [jobs for jobs in turns if jobs]
        return out


class BatchRequestsQueue:
    """In-memory order of queued jobs; the store stays the truth, this is only the order."""

    def __init__(self) -> None:
        self._lanes = {(pool, prio): _Lane() for pool in Pool for prio in Priority}
        self._members: dict[str, Waiting] = {}
        self._arrivals = itertools.count()

    def push(self, item: Waiting) -> None:
        if item.job_id in self._members:
            return
        self._members[item.job_id] = item
        deadline = item.deadline.timestamp() if item.deadline is not None else math.inf
        self._lanes[(item.pool, item.priority)].push((deadline, next(self._arrivals), item))

    def _live(self, item: Waiting) -> bool:
        # By identity: a job removed, or removed and pushed again (moved to another pool),
        # leaves entries behind that are no longer its own.
        return self._members.get(item.job_id) is item

    def pop(self, pool: Pool) -> Waiting | None:
        for priority in _BY_RANK:
            item = self._lanes[(pool, priority)].pop(self._live)
            if item is not None:
                return self._members.pop(item.job_id)
        return None

    def ordered(self, pool: Pool) -> list[Waiting]:
        """The pool's waiting jobs in the order they would be popped (batching aside)."""
        return [item for p in _BY_RANK for item in self._lanes[(pool, p)].ordered(self._live)]

    def take_batch(self, first: Waiting, *, limit: int, max_segments: int) -> list[Waiting]:
        """Up to ``limit`` more waiting jobs that can share ``first``'s engine batch: same
        pool, priority and key, not alone, all together within ``max_segments``. Oldest
        first (tenants' turns do not apply within one engine batch)."""
        taken: list[Waiting] = []
        total = first.segments
        for item in self._members.values():
            if len(taken) >= limit:
                break
            if (
                item.pool is first.pool
                and item.priority is first.priority
                and item.batch_key == first.batch_key
                and not item.alone
                and total + item.segments <= max_segments
            ):
                taken.append(item)
                total += item.segments
        for item in taken:
            self.remove(item.job_id)
        return taken

    def waiting(self, pool: Pool) -> list[Waiting]:
        return [item for item in self._members.values() if item.pool is pool]

    def remove(self, job_id: str) -> bool:
        """Drops a waiting job (cancelled); it is skipped lazily when its turn comes."""
        return self._members.pop(job_id, None) is not None

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._members

    def depth(self, pool: Pool) -> int:
        return sum(1 for item in self._members.values() if item.pool is pool)
