"""When jobs should end: a pool's measured speed, and a schedule of the work ranked ahead.

Pure, so that tests and the deadline simulation (``bench/deadlines_sim.py``) drive it by hand.

- ``Speed``: segments per second of one busy worker of a pool, from the increases of the
  workers' counters over their busy seconds (both from their registry rows) during the last
  ``window_s``: an engine's pace, whatever the pool's size.
- ``finish_in``: the messages in flight finish where they are, their jobs together; then
  the waiting jobs, in queue order, each on the slot (a worker's place: the pool's most
  workers) that frees first, every slot at that speed. A worker still to start counts as
  there already, so while a pool scales up the forecast is early by a start-up; each sweep
  corrects it. (Late ones would be worse: a warning sent cannot be taken back.)
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Mapping, Sequence
from typing import NamedTuple

WINDOW_S = 60.0


class Work(NamedTuple):
    """A job (or shard) and the segments it has left to translate."""

    job_id: str
    segments: int


class Speed:
    """One pool's segments per second per busy worker, over the last ``window_s``."""

    def __init__(self, window_s: float = WINDOW_S) -> None:
        self._window_s = window_s
        self._samples: deque[tuple[float, int, float]] = deque()  # (at, segments, busy s)
        self._segments = 0  # the window's sums
        self._busy_s = 0.0
        self._counters: dict[str, int] | None = None
        self._at = 0.0
        self._busy = 0
        # The last speed measured: a pool keeps it while it idles. None: never measured.
        self.rate: float | None = None

    def sample(self, at: float, counters: Mapping[str, int], busy: int) -> None:
        """Records, at monotonic time ``at``, each live worker's counter of segments
        translated since it started and how many of them are busy now. A counter lower
        than before (a restarted worker) or a worker new since the last sample counts
        from 0."""
        if self._counters is not None:
            added = 0
            for worker, value in counters.items():
                before = self._counters.get(worker, 0)
                added += value - before if value >= before else value
            self._add((at, added, self._busy * max(0.0, at - self._at)), 1)
        self._counters, self._at, self._busy = dict(counters), at, busy
        while self._samples and self._samples[0][0] < at - self._window_s:
            self._add(self._samples[0], -1)
        # Nothing translated in the window says nothing new: the pool idled, or its chunks
        # take longer than the window (then the last speed is the best guess).
        if self._segments > 0 and self._busy_s > 1e-9:
            self.rate = self._segments / self._busy_s

    def _add(self, sample: tuple[float, int, float], sign: int) -> None:
        if sign > 0:
            self._samples.append(sample)
        else:
            self._samples.popleft()
        self._segments += sign * sample[1]
        self._busy_s += sign * sample[2]


def finish_in(
    running: Sequence[Sequence[Work]], waiting: Sequence[Work], *, slots: int, rate: float
) -> dict[str, float]:
    """Seconds from now until each job should end. ``running``: the messages in flight,
    each the jobs one worker translates together (they end together); ``waiting``: the
    queue, in order. ``slots``: the pool's most messages in flight (its most workers);
    ``rate``: segments per second of one worker (> 0)."""
    ends: dict[str, float] = {}
    free: list[float] = []
    for message in running:
        end = sum(work.segments for work in message) / rate
        ends.update((work.job_id, end) for work in message)
        free.append(end)
    # A slot beyond the pool's most (its maximum was lowered) takes no waiting job.
    free = sorted(free)[-slots:] if slots else []
    free += [0.0] * (slots - len(free))
    heapq.heapify(free)
    for work in waiting if slots else ():
        end = heapq.heappop(free) + work.segments / rate
        ends[work.job_id] = end
        heapq.heappush(free, end)
    return ends
