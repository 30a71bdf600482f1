"""Honest ETAs: a pool's speed from its workers' counters, the schedule of the work ahead,
and what a status says of a job's deadline, on a fake clock."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from dragoman.api.v1.job_out import JobOut
from dragoman.metrics import Metrics
from dragoman.models import Job, JobOptions, JobStatus, Pool, Priority, WorkerInfo
from dragoman.queue import BatchRequestsQueue, Waiting
from dragoman.watchdog.eta import Speed, Work, finish_in
from dragoman.watchdog.forecast import AT_RISK, Forecast, moved
from tests.conftest import FakeClock


def test_speed_is_segments_per_busy_worker_second_over_the_window() -> None:
    speed = Speed(window_s=60)
    speed.sample(0.0, {"w1": 500, "w2": 0}, busy=2)  # what came before is not counted
    assert speed.rate is None
    speed.sample(10.0, {"w1": 1500, "w2": 1000}, busy=2)  # 2000 in 2 busy workers x 10 s
    assert speed.rate == pytest.approx(100.0)
    speed.sample(20.0, {"w1": 1500, "w2": 1000}, busy=0)  # both busy, nothing committed
    assert speed.rate == pytest.approx(2000 / 40)
    speed.sample(30.0, {"w1": 1500, "w2": 1000}, busy=0)  # idle: no busy seconds
    assert speed.rate == pytest.approx(2000 / 40)


def test_a_restarted_or_new_worker_counts_from_zero_and_an_idle_pool_keeps_its_speed() -> None:
    speed = Speed(window_s=30)
    speed.sample(0.0, {"w1": 900}, busy=1)
    speed.sample(10.0, {"w1": 100, "w2": 200}, busy=0)  # w1 restarted; w2 is new
    assert speed.rate == pytest.approx(30.0)
    for at in (40.0, 80.0, 120.0):  # long idle: the window empties, the speed stays
        speed.sample(at, {"w1": 100, "w2": 200}, busy=0)
    assert speed.rate == pytest.approx(30.0)


def test_waiting_jobs_take_the_slot_that_frees_first_in_queue_order() -> None:
    ends = finish_in(
        [[Work("big", 900)], [Work("small-a", 50), Work("small-b", 50)]],
        [Work("next", 200), Work("after", 100), Work("last", 10)],
        slots=3,
        rate=100.0,
    )
    assert ends == {
        "big": 9.0,
        "small-a": 1.0,  # one message: its jobs end together
        "small-b": 1.0,
        "next": 2.0,  # the third slot is free now
        "after": 2.0,  # on the message that ends at 1 s
        "last": 2.1,
    }


def test_a_pool_with_fewer_slots_than_messages_dispatches_after_enough_of_them_end() -> None:
    running = [[Work(f"r{i}", 100 * (i + 1))] for i in range(3)]
    ends = finish_in(running, [Work("w", 100)], slots=2, rate=100.0)
    assert ends["w"] == 3.0  # dispatched when the second message ends, at 2 s
    assert "w" not in finish_in(running, [Work("w", 100)], slots=0, rate=100.0)


def test_a_prediction_is_written_again_only_once_it_moved_enough() -> None:
    clock = FakeClock()
    now = clock.now()
    in_an_hour = now + timedelta(hours=1)
    assert moved(None, in_an_hour, now, None) and moved(in_an_hour, None, now, None)
    assert not moved(None, None, now, None)
    assert not moved(in_an_hour, in_an_hour + timedelta(minutes=5), now, None)  # within 10 %
    assert moved(in_an_hour, in_an_hour + timedelta(minutes=7), now, None)
    soon = now + timedelta(seconds=3)
    assert not moved(soon, soon + timedelta(seconds=0.9), now, None)  # within the second
    assert moved(soon, soon + timedelta(seconds=1.5), now, None)
    # Within the tolerance, but past the deadline now: the status must say so.
    deadline = in_an_hour + timedelta(minutes=1)
    assert moved(in_an_hour, in_an_hour + timedelta(minutes=2), now, deadline)
    assert not moved(in_an_hour, in_an_hour + timedelta(seconds=30), now, deadline)


def a_job(**options: object) -> Job:
    return Job("j", None, "en", "es", "apertium", Pool.CPU, 1, 10, JobOptions(**options))  # type: ignore[arg-type]


def test_a_status_counts_its_eta_down_and_says_when_a_deadline_will_be_missed() -> None:
    clock = FakeClock()
    job = a_job(deadline=clock.now() + timedelta(seconds=60))
    shown = JobOut.of(job, now=clock.now())
    assert (shown.eta_seconds, shown.at_risk) == (None, False)  # nothing predicted yet

    job.eta_at = clock.now() + timedelta(seconds=45.2)
    shown = JobOut.of(job, now=clock.now())
    assert (shown.eta_seconds, shown.at_risk, shown.deadline) == (46, False, job.options.deadline)

    clock.advance(30)
    assert JobOut.of(job, now=clock.now()).eta_seconds == 16

    job.eta_at = clock.now() + timedelta(seconds=31)  # now due 1 s after the deadline
    assert JobOut.of(job, now=clock.now()).at_risk is True

    job.eta_at = None
    clock.advance(31)  # the deadline passed, nothing predicted: late all the same
    assert JobOut.of(job, now=clock.now()).at_risk is True


def test_a_job_without_deadline_or_already_ended_is_never_at_risk() -> None:
    clock = FakeClock()
    job = a_job()
    job.eta_at = clock.now() + timedelta(days=9)
    assert JobOut.of(job, now=clock.now()).at_risk is False
    late = a_job(deadline=clock.now() - timedelta(hours=1))
    late.eta_at = clock.now() + timedelta(hours=1)
    assert late.at_risk(clock.now())
    ended = replace(late, status=JobStatus.SUCCEEDED)
    shown = JobOut.of(ended, now=clock.now())
    assert (shown.eta_seconds, shown.at_risk) == (None, False)


class Recorder:
    """The store, the registry and the router, as much as the forecast uses of them."""

    def __init__(self, workers: list[WorkerInfo]) -> None:
        self.live = workers
        self.etas: list[dict[str, datetime | None]] = []
        self.figures: dict[tuple[Pool, str], float] = {}

    def workers(self, pool: Pool) -> list[WorkerInfo]:
        return [worker for worker in self.live if worker.pool is pool]

    async def set_etas(self, etas: dict[str, datetime | None]) -> set[str]:
        self.etas.append(dict(etas))
        return set(etas)

    async def publish_figures(self, pool: Pool, figures: dict[str, float], now: datetime) -> None:
        self.figures.update({(pool, name): value for name, value in figures.items()})


def a_worker(translated: int) -> WorkerInfo:
    return WorkerInfo("w1", Pool.CPU, "host", busy=True, segments_translated=translated)


async def test_the_forecast_writes_each_jobs_end_and_counts_those_at_risk(
    make_settings: Any,
) -> None:
    clock, monotonic = FakeClock(), [0.0]
    now = clock.now()
    seen = Recorder([a_worker(0)])
    queue, metrics = BatchRequestsQueue(), Metrics()
    forecast = Forecast(
        store=seen,  # type: ignore[arg-type]
        registry=seen,  # type: ignore[arg-type]
        metrics=metrics,
        settings=make_settings(cpu_max_workers=2),
        queue=queue,
        router=seen,  # type: ignore[arg-type]
        monotonic=lambda: monotonic[0],
    )
    running = a_job()
    running.id, running.segments_total, running.segments_done = "running", 2000, 1000
    queue.push(Waiting("plain", Pool.CPU, Priority.NORMAL, "t", segments=300))
    due = now + timedelta(seconds=4)
    queue.push(Waiting("due", Pool.CPU, Priority.NORMAL, "t", segments=500, deadline=due))

    await forecast.update(now, [[running]])  # no speed yet: nothing predicted, nothing at risk
    assert seen.etas == [] and seen.figures[(Pool.CPU, AT_RISK)] == 0

    seen.live, monotonic[0] = [a_worker(1000)], 10.0  # 1,000 segments in 10 busy seconds
    await forecast.update(now, [[running]])
    # Two slots: the running job's 1,000 segments on one; "due" (its deadline first) on the
    # other at once, 500 segments; then "plain" where "due" ended.
    at = {
        name: now + timedelta(seconds=s) for name, s in [("running", 10), ("due", 5), ("plain", 8)]
    }
    assert seen.etas == [at]
    assert seen.figures[(Pool.CPU, AT_RISK)] == 1  # "due" should end 1 s after its deadline
    assert metrics.registry.get_sample_value("dragoman_jobs_at_risk", {"pool": "cpu"}) == 1

    # A second later, 100 more segments: the same ends, within a second: nothing written.
    clock.advance(1)
    running.segments_done = 1100
    seen.live, monotonic[0] = [a_worker(1100)], 11.0
    await forecast.update(clock.now(), [[running]])
    assert len(seen.etas) == 1
