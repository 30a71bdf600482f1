"""BatchRequestsQueue: which waiting job goes next, per pool.

Higher priority first; within a priority, tenants take turns; within a tenant, oldest first.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
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


class _Lane:
    """One priority of one pool: a round-robin over tenants, FIFO within each."""

    def __init__(self) -> None:
        self._tenants: OrderedDict[str | None, deque[str]] = OrderedDict()

    def push(self, tenant: str | None, job_id: str) -> None:
        self._tenants.setdefault(tenant, deque()).append(job_id)

    def pop(self, skip: set[str]) -> str | None:
        while self._tenants:
            tenant, jobs = next(iter(self._tenants.items()))
            job_id = jobs.popleft()
            if jobs:
                self._tenants.move_to_end(tenant)
            else:
                del self._tenants[tenant]
            if job_id in skip:
                skip.discard(job_id)
                continue
            return job_id
        return None


class BatchRequestsQueue:
    """In-memory order of queued jobs; the store stays the truth, this is only the order."""

    def __init__(self) -> None:
        self._lanes = {(pool, prio): _Lane() for pool in Pool for prio in Priority}
        self._members: dict[str, Waiting] = {}
        self._removed: set[str] = set()

    def push(self, item: Waiting) -> None:
        if item.job_id in self._members:
            return
        self._members[item.job_id] = item
        self._lanes[(item.pool, item.priority)].push(item.tenant, item.job_id)

    def pop(self, pool: Pool) -> Waiting | None:
        for priority in sorted(Priority, key=lambda p: p.rank, reverse=True):
            job_id = self._lanes[(pool, priority)].pop(self._removed)
            if job_id is not None:
                return self._members.pop(job_id)
        return None

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
        if self._members.pop(job_id, None) is None:
            return False
        self._removed.add(job_id)
        return True

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._members

    def depth(self, pool: Pool) -> int:
        return sum(1 for item in self._members.values() if item.pool is pool)
