"""The autoscaling policy with a hand-driven clock: targets, the scale-down delay, victims."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dragoman.models import Pool, WorkerInfo
from dragoman.scaling.policy import PoolPolicy, Reason, ScalePolicy, choose_victims

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Ticks:
    """Monotonic seconds that move only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def pool_policy(**overrides: Any) -> PoolPolicy:
    knobs: dict[str, Any] = {
        "min_workers": 0,
        "max_workers": 8,
        "standby_workers": 1,
        "scale_down_delay_s": 60.0,
        "scale_interval_s": 5.0,
        "scale_with_queued": False,
        "queued_cap": 4,
    }
    knobs.update(overrides)
    return PoolPolicy(**knobs)


def scaler(**overrides: Any) -> tuple[ScalePolicy, Ticks]:
    ticks = Ticks()
    return ScalePolicy(pool_policy(**overrides), ticks), ticks


def worker(
    worker_id: str, *, busy: bool = False, pairs: int = 0, seen_s: float | None = 0.0
) -> WorkerInfo:
    return WorkerInfo(
        id=worker_id,
        pool=Pool.CPU,
        host=f"host-{worker_id}",
        busy=busy,
        warm_pairs=frozenset(f"pair-{i}" for i in range(pairs)),
        last_seen=None if seen_s is None else T0 + timedelta(seconds=seen_s),
    )


# ---------------------------------------------------------------- settings and targets


def test_from_settings_reads_the_pools_own_knobs(make_settings: Any) -> None:
    settings = make_settings(
        cpu_min_workers=1,
        cpu_max_workers=6,
        cpu_standby_workers=2,
        cpu_scale_down_delay_s=90,
        cpu_scale_interval_s=3,
        cpu_scale_with_queued=True,
        cpu_queued_cap=5,
        gpu_max_workers=2,
        gpu_scale_down_delay_s=600,
    )
    assert PoolPolicy.from_settings(settings, Pool.CPU) == PoolPolicy(1, 6, 2, 90.0, 3.0, True, 5)
    gpu = PoolPolicy.from_settings(settings, Pool.GPU)
    assert (gpu.max_workers, gpu.scale_down_delay_s) == (2, 600.0)


def test_min_workers_above_max_workers_is_refused() -> None:
    with pytest.raises(ValueError, match="min_workers"):
        pool_policy(min_workers=3, max_workers=2)


def test_target_is_jobs_in_flight_plus_standby_within_bounds() -> None:
    policy = pool_policy(min_workers=2, max_workers=8, standby_workers=1)
    assert policy.target(in_flight=0, queued=0) == 2
    assert policy.target(in_flight=4, queued=9) == 5
    assert policy.target(in_flight=20, queued=0) == 8


def test_queued_jobs_count_only_when_asked_and_up_to_the_cap() -> None:
    without = pool_policy(standby_workers=0, max_workers=20)
    with_queued = pool_policy(standby_workers=0, max_workers=20, scale_with_queued=True)
    assert without.target(in_flight=3, queued=10) == 3
    assert with_queued.target(in_flight=3, queued=2) == 5
    assert with_queued.target(in_flight=3, queued=10) == 3 + 4


# ---------------------------------------------------------------- up at once, down after the delay


def test_it_scales_up_at_once() -> None:
    policy, _ = scaler()
    decision = policy.explain(in_flight=5, queued=0, busy=1, current=1)
    assert (decision.replicas, decision.reason) == (6, Reason.UP)


def test_a_lower_target_waits_for_the_whole_delay_then_scales_down() -> None:
    policy, ticks = scaler(scale_down_delay_s=60)
    assert policy.decide(in_flight=7, queued=0, busy=7, current=8) == 8
    for now in range(5, 65, 5):
        ticks.now = now
        decision = policy.explain(in_flight=2, queued=0, busy=2, current=8)
        assert (decision.replicas, decision.target, decision.reason) == (8, 3, Reason.WAITING)
    ticks.now = 65  # the 8 seen at t=0 has left the window
    decision = policy.explain(in_flight=2, queued=0, busy=2, current=8)
    assert (decision.replicas, decision.reason) == (3, Reason.DOWN)


def test_a_scale_down_goes_to_the_highest_target_seen_over_the_delay() -> None:
    policy, ticks = scaler(scale_down_delay_s=60, standby_workers=0)
    replicas = []
    for now, in_flight in [(0, 8), (30, 5), (61, 2), (91, 1), (122, 1)]:
        ticks.now = now
        replicas.append(policy.decide(in_flight=in_flight, queued=0, busy=0, current=8))
    # t=61: the 8 of t=0 has left the window, the 5 of t=30 has not.
    assert replicas == [8, 8, 5, 2, 1]


def test_a_short_dip_does_not_scale_down() -> None:
    policy, ticks = scaler(scale_down_delay_s=60, standby_workers=0)
    loads = [6, 6, 1, 1, 1, 6, 1, 1, 1, 1, 1, 1, 1]
    replicas = []
    for step, in_flight in enumerate(loads):
        ticks.now = step * 10.0
        replicas.append(policy.decide(in_flight=in_flight, queued=0, busy=0, current=6))
    assert replicas == [6] * 12 + [1]  # t=120: the 6 of t=50 is 70 s old


def test_a_new_policy_watches_for_the_delay_before_any_scale_down() -> None:
    policy, ticks = scaler(scale_down_delay_s=60)
    ticks.now = 1_000.0  # the clock's origin is arbitrary
    assert policy.decide(in_flight=0, queued=0, busy=0, current=8) == 8
    ticks.now = 1_059.0
    assert policy.decide(in_flight=0, queued=0, busy=0, current=8) == 8
    ticks.now = 1_060.0
    assert policy.decide(in_flight=0, queued=0, busy=0, current=8) == 1


def test_no_delay_scales_down_at_once() -> None:
    policy, _ = scaler(scale_down_delay_s=0)
    assert policy.decide(in_flight=0, queued=0, busy=0, current=8) == 1


def test_a_scale_down_never_goes_below_the_busy_workers() -> None:
    policy, ticks = scaler(scale_down_delay_s=0, standby_workers=0)
    assert policy.decide(in_flight=1, queued=0, busy=5, current=8) == 5
    ticks.now = 10
    assert policy.decide(in_flight=0, queued=0, busy=8, current=8) == 8


def test_more_workers_than_the_maximum_are_brought_down_to_it() -> None:
    policy, _ = scaler(max_workers=4)
    decision = policy.explain(in_flight=4, queued=0, busy=4, current=6)
    assert (decision.replicas, decision.reason) == (4, Reason.DOWN)


def test_queued_jobs_raise_the_target_when_enabled() -> None:
    policy, _ = scaler(scale_with_queued=True, queued_cap=2, max_workers=16)
    assert policy.decide(in_flight=3, queued=10, busy=3, current=3) == 3 + 1 + 2


# ---------------------------------------------------------------- victims


def test_busy_workers_are_never_victims() -> None:
    workers = [worker("a", busy=True), worker("b", busy=True), worker("c", pairs=3)]
    assert [w.id for w in choose_victims(workers, 3)] == ["c"]


def test_victims_with_fewest_warm_pairs_go_first() -> None:
    workers = [worker("a", pairs=2), worker("b", pairs=0), worker("c", pairs=5), worker("d")]
    assert [w.id for w in choose_victims(workers, 3)] == ["b", "d", "a"]


def test_victim_ties_go_to_the_worker_seen_longest_ago_then_by_id() -> None:
    workers = [
        worker("a", seen_s=30),
        worker("b", seen_s=10),
        worker("c", seen_s=None),
        worker("d", seen_s=10),
    ]
    assert [w.id for w in choose_victims(workers, 4)] == ["c", "b", "d", "a"]


def test_no_victims_are_asked_for_or_available() -> None:
    assert choose_victims([worker("a")], 0) == []
    assert choose_victims([worker("a", busy=True)], 2) == []
    assert choose_victims([], 1) == []


# ---------------------------------------------------------------- properties

policies = st.integers(0, 6).flatmap(
    lambda low: st.builds(
        PoolPolicy,
        min_workers=st.just(low),
        max_workers=st.integers(max(low, 1), 12),
        standby_workers=st.integers(0, 3),
        scale_down_delay_s=st.sampled_from([0.0, 5.0, 30.0, 60.0]),
        scale_interval_s=st.just(5.0),
        scale_with_queued=st.booleans(),
        queued_cap=st.integers(0, 5),
    )
)


@dataclass(frozen=True)
class Round:
    after_s: float
    in_flight: int
    queued: int
    busy_share: float  # of the current workers
    current: int | None  # None: the controller applied the last decision


rounds = st.builds(
    Round,
    after_s=st.sampled_from([0.0, 1.0, 5.0, 5.0, 5.0, 20.0, 61.0]),
    in_flight=st.integers(0, 14),
    queued=st.integers(0, 10),
    busy_share=st.floats(0, 1),
    current=st.none() | st.integers(0, 14),
)


@settings(max_examples=300, deadline=None)
@given(policy=policies, script=st.lists(rounds, min_size=1, max_size=40))
def test_every_decision_respects_the_bounds_the_busy_and_the_delay(
    policy: PoolPolicy, script: list[Round]
) -> None:
    ticks = Ticks()
    scale = ScalePolicy(policy, ticks)
    current = policy.min_workers
    seen: list[tuple[float, int]] = []
    for step in script:
        ticks.now += step.after_s
        current = current if step.current is None else step.current
        busy = int(current * step.busy_share)
        replicas = scale.decide(
            in_flight=step.in_flight, queued=step.queued, busy=busy, current=current
        )
        target = policy.target(in_flight=step.in_flight, queued=step.queued)
        seen.append((ticks.now, target))

        assert policy.min_workers <= replicas <= policy.max_workers
        assert replicas >= min(busy, policy.max_workers)
        if target >= current:
            assert replicas == target  # up at once
        if replicas < current:
            confirmed = ticks.now - seen[0][0] >= policy.scale_down_delay_s
            assert confirmed or replicas == policy.max_workers < current
            window = [t for at, t in seen if ticks.now - at <= policy.scale_down_delay_s]
            assert replicas >= max(window)
        current = replicas


worker_lists = st.lists(
    st.builds(
        worker,
        st.uuids().map(str),
        busy=st.booleans(),
        pairs=st.integers(0, 4),
        seen_s=st.none() | st.floats(0, 1e6),
    ),
    max_size=12,
    unique_by=lambda w: w.id,
)


@settings(max_examples=300, deadline=None)
@given(workers=worker_lists, count=st.integers(-1, 14))
def test_victims_are_idle_and_no_idle_worker_left_has_fewer_pairs(
    workers: list[WorkerInfo], count: int
) -> None:
    victims = choose_victims(workers, count)
    idle = [w for w in workers if not w.busy]
    assert all(not w.busy for w in victims)
    assert len({w.id for w in victims}) == len(victims) == max(0, min(count, len(idle)))
    kept = [w for w in idle if w not in victims]
    if victims and kept:
        assert max(len(w.warm_pairs) for w in victims) <= min(len(w.warm_pairs) for w in kept)
