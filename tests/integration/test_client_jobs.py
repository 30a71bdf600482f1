"""The Python client against a real ``dragoman serve``: safe retries (the same
``Idempotency-Key`` gives the same job, before and after the server is killed) and a job
followed by its events."""

from __future__ import annotations

import signal
from pathlib import Path

from dragoman.client import Client
from tests.integration.server import Server


def test_a_retried_submission_is_the_same_job_even_after_the_server_was_killed(
    tmp_path: Path,
) -> None:
    documents = [("a.txt", ["Hello world."])]
    files = [("notes.txt", b"The cat sleeps.\n")]
    server = Server(tmp_path / "data").start()
    try:
        with Client(server.url) as client:
            first = client.submit("en", "es", documents, idempotency_key="k-text")
            assert client.submit("en", "es", documents, idempotency_key="k-text") == first
            upload = client.submit_files("en", "es", files, idempotency_key="k-file")
            assert (
                client.submit_files("en", "es", files, idempotency_key="k-file")["id"]
                == (upload["id"])
            )
    finally:
        server.stop(signal.SIGKILL)
    with Server(tmp_path / "data", port=server.port) as again, Client(again.url) as client:
        assert client.submit("en", "es", documents, idempotency_key="k-text")["id"] == first["id"]
        assert len(client.jobs()["jobs"]) == 2


def test_the_client_follows_a_job_by_its_events_without_polling(tmp_path: Path) -> None:
    with Server(tmp_path / "data") as server, Client(server.url) as client:
        job = client.submit("en", "es", [("a.txt", [f"The cat {n} sleeps." for n in range(50)])])

        def no_polling(job_id: str) -> None:
            raise AssertionError("polled the job while its events were there to follow")

        client.job = no_polling  # type: ignore[method-assign,assignment]
        seen: list[tuple[str, int]] = []
        done = client.follow(
            job, lambda update: seen.append((update["status"], update["segments_done"]))
        )
        assert done["status"] == "succeeded" and done["segments_done"] == 50
        assert seen[-1] == ("succeeded", 50)
