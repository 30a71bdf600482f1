from datetime import UTC, datetime, timedelta

from dragoman.messages import Queued
from dragoman.models import Job, JobOptions, Pool, Priority
from dragoman.queue import BatchRequestsQueue, Waiting

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def waiting(
    job_id: str,
    priority: Priority = Priority.NORMAL,
    tenant: str | None = None,
    due_in_h: float | None = None,
) -> Waiting:
    deadline = None if due_in_h is None else T0 + timedelta(hours=due_in_h)
    return Waiting(job_id, Pool.CPU, priority, tenant, deadline=deadline)


def drain(queue: BatchRequestsQueue, pool: Pool = Pool.CPU) -> list[str]:
    out = []
    while (item := queue.pop(pool)) is not None:
        out.append(item.job_id)
    return out


def test_higher_priority_goes_first_then_arrival_order() -> None:
    queue = BatchRequestsQueue()
    queue.push(waiting("low-1", Priority.LOW))
    queue.push(waiting("normal-1"))
    queue.push(waiting("high-1", Priority.HIGH))
    queue.push(waiting("normal-2"))
    queue.push(waiting("high-2", Priority.HIGH))
    assert drain(queue) == ["high-1", "high-2", "normal-1", "normal-2", "low-1"]


def test_tenants_of_equal_priority_take_turns() -> None:
    queue = BatchRequestsQueue()
    for i in range(3):
        queue.push(waiting(f"a{i}", tenant="a"))
    queue.push(waiting("b0", tenant="b"))
    queue.push(waiting("b1", tenant="b"))
    assert drain(queue) == ["a0", "b0", "a1", "b1", "a2"]


def test_pools_are_separate() -> None:
    queue = BatchRequestsQueue()
    queue.push(Waiting("gpu-job", Pool.GPU, Priority.HIGH, None))
    queue.push(waiting("cpu-job"))
    assert drain(queue, Pool.CPU) == ["cpu-job"]
    assert queue.depth(Pool.GPU) == 1
    assert drain(queue, Pool.GPU) == ["gpu-job"]


def test_a_removed_job_is_never_popped() -> None:
    queue = BatchRequestsQueue()
    queue.push(waiting("keep"))
    queue.push(waiting("drop"))
    assert queue.remove("drop")
    assert "drop" not in queue
    assert queue.depth(Pool.CPU) == 1
    assert drain(queue) == ["keep"]
    assert not queue.remove("drop")


def test_a_job_pushed_twice_is_queued_once() -> None:
    queue = BatchRequestsQueue()
    queue.push(waiting("same"))
    queue.push(waiting("same"))
    assert drain(queue) == ["same"]


# -- deadlines ------------------------------------------------------------------------------


def test_within_a_tenant_the_earliest_deadline_goes_first_then_the_rest_by_age() -> None:
    queue = BatchRequestsQueue()
    queue.push(waiting("plain-1"))
    queue.push(waiting("due-in-5h", due_in_h=5))
    queue.push(waiting("plain-2"))
    queue.push(waiting("due-in-1h", due_in_h=1))
    queue.push(waiting("due-in-3h", due_in_h=3))
    queue.push(waiting("also-due-in-3h", due_in_h=3))
    assert drain(queue) == [
        "due-in-1h",
        "due-in-3h",
        "also-due-in-3h",  # the same deadline: the older first
        "due-in-5h",
        "plain-1",
        "plain-2",
    ]


def test_a_tight_deadline_does_not_take_another_tenants_turn() -> None:
    queue = BatchRequestsQueue()
    queue.push(waiting("b-plain-1", tenant="b"))
    queue.push(waiting("b-plain-2", tenant="b"))
    for i in range(3):
        queue.push(waiting(f"a-urgent-{i}", tenant="a", due_in_h=-1 + i))
    queue.push(waiting("b-urgent", tenant="b", due_in_h=2))
    assert drain(queue) == [
        "b-urgent",  # b came first: its turn, its earliest deadline
        "a-urgent-0",
        "b-plain-1",
        "a-urgent-1",
        "b-plain-2",
        "a-urgent-2",
    ]


def test_priority_still_comes_before_any_deadline() -> None:
    queue = BatchRequestsQueue()
    queue.push(waiting("normal-overdue", due_in_h=-10))
    queue.push(waiting("high-plain", Priority.HIGH))
    queue.push(waiting("low-overdue", Priority.LOW, due_in_h=-20))
    assert drain(queue) == ["high-plain", "normal-overdue", "low-overdue"]


def test_the_order_shown_is_the_order_popped() -> None:
    queue = BatchRequestsQueue()
    for i, (tenant, due, priority) in enumerate(
        [
            ("a", None, Priority.NORMAL),
            ("b", 4.0, Priority.NORMAL),
            ("a", 2.0, Priority.NORMAL),
            ("c", None, Priority.HIGH),
            ("b", 1.0, Priority.NORMAL),
            ("a", None, Priority.LOW),
            ("b", None, Priority.NORMAL),
        ]
    ):
        queue.push(waiting(f"j{i}", priority, tenant, due))
    queue.remove("j6")
    shown = [item.job_id for item in queue.ordered(Pool.CPU)]
    assert shown == drain(queue)
    assert shown == ["j3", "j2", "j4", "j0", "j1", "j5"]


def test_a_withdrawn_job_costs_its_tenant_no_turn() -> None:
    queue = BatchRequestsQueue()
    queue.push(waiting("a0", tenant="a"))
    queue.push(waiting("a1", tenant="a"))
    queue.push(waiting("b0", tenant="b"))
    queue.remove("a0")
    assert drain(queue) == ["a1", "b0"]


def test_a_job_moved_to_another_pool_is_popped_there_once() -> None:
    queue = BatchRequestsQueue()
    gpu = Waiting("moved", Pool.GPU, Priority.NORMAL, None)
    queue.push(gpu)
    queue.remove("moved")
    queue.push(gpu.moved_to(Pool.CPU))
    assert drain(queue, Pool.GPU) == []
    assert drain(queue, Pool.CPU) == ["moved"]


def test_a_job_reloaded_from_the_store_keeps_its_deadline_in_the_queue() -> None:
    due = T0 + timedelta(minutes=30)
    job = Job("late", None, "en", "es", "apertium", Pool.CPU, 1, 1)
    job.options = JobOptions(deadline=due)
    body = Queued.of(job).to_body()
    assert body["deadline"] == "2026-01-01T00:30:00+00:00"
    queue = BatchRequestsQueue()
    queue.push(waiting("plain"))
    queue.push(Waiting.of_notice(Queued.from_body(body)))
    assert drain(queue) == ["late", "plain"]
    assert Waiting.of(job).deadline == due
