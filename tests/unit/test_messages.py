"""Outcomes: a worker reports the jobs of one message together; one job's report keeps the
shape the watchdog has always read."""

from __future__ import annotations

import pytest

from dragoman.messages import Done, Outcomes
from dragoman.models import JobError, JobStatus


def test_one_outcome_is_a_plain_done_body() -> None:
    body = Outcomes((Done("j1", 2, JobStatus.SUCCEEDED),)).to_body()

    assert body == {"type": "done", "job_id": "j1", "attempt": 2, "status": "succeeded"}
    assert Outcomes.from_body(body).done == (Done("j1", 2, JobStatus.SUCCEEDED),)


def test_several_outcomes_travel_in_one_body_and_come_back_the_same() -> None:
    done = (
        Done("a", 1, JobStatus.SUCCEEDED),
        Done("b", 1, JobStatus.FAILED, True, JobError("engine_error", "broke")),
        Done("c", 3, JobStatus.CANCELLED),
    )

    body = Outcomes(done).to_body()

    assert body["type"] == "done" and len(body["jobs"]) == 3
    assert Outcomes.from_body(body).done == done


@pytest.mark.parametrize(
    "body",
    [
        {"type": "done", "jobs": []},
        {"type": "done", "jobs": "a"},
        {"type": "done", "jobs": [1]},
        {"type": "done", "jobs": [{"job_id": "a", "attempt": "x", "status": "succeeded"}]},
        {"type": "done", "jobs": [{"job_id": "a", "attempt": 1, "status": "sideways"}]},
        {"type": "done", "job_id": "a"},
    ],
)
def test_a_malformed_report_is_a_value_error(body: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Outcomes.from_body(body)
