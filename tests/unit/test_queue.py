from dragoman.models import Pool, Priority
from dragoman.queue import BatchRequestsQueue, Waiting


def waiting(
    job_id: str, priority: Priority = Priority.NORMAL, tenant: str | None = None
) -> Waiting:
    return Waiting(job_id, Pool.CPU, priority, tenant)


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
