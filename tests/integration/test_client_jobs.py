"""The Python client against a real ``dragoman serve``: safe retries (the same
``Idempotency-Key`` gives the same job, before and after the server is killed), a job
followed by its events, and jobs into several languages read back per target."""

from __future__ import annotations

import io
import signal
import zipfile
from pathlib import Path

import httpx
import pytest

from dragoman.client import Client, ServerRefused
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


def test_several_targets_that_cannot_be_are_refused_in_the_servers_words(tmp_path: Path) -> None:
    documents = [("a.txt", ["Hello world."])]
    with Server(tmp_path / "data") as server, Client(server.url) as client:
        for targets, code, says in [
            ([], "invalid_request", "target_langs"),
            (["es", "de"], "unsupported_language_pair", "en-de"),
            (("es", "en"), "invalid_request", "en is the source language"),
        ]:
            with pytest.raises(ServerRefused) as refused:
                client.submit("en", targets, documents)
            assert (refused.value.status, refused.value.code) == (422, code)
            assert says in refused.value.detail
        with pytest.raises(ServerRefused) as refused:
            client.submit_files("en", ["es", "zz"], [("a.txt", b"Hello.\n")])
        assert "en-zz" in refused.value.detail
        assert client.jobs()["jobs"] == []
        job = client.follow(client.submit("en", ["es", "ca"], documents))
        for missing in (
            lambda: client.result(job["id"], target="fr"),
            lambda: client.file(job["id"], 0, "es"),  # a job of segments has no files
            lambda: client.files_zip(job["id"]),
        ):
            with pytest.raises(ServerRefused) as refused:
                missing()
            assert refused.value.status == 404


def test_one_job_into_three_languages_is_followed_per_target_and_read_back(
    tmp_path: Path,
) -> None:
    segments = [f"The cat {n} sleeps." for n in range(40)]
    with Server(tmp_path / "data") as server, Client(server.url) as client:
        job = client.submit("en", ["es", "ca", "fr"], [("a.txt", segments)])
        assert (job["target_lang"], job["target_langs"]) == ("es", ["es", "ca", "fr"])
        assert [t["segments_total"] for t in job["targets"]] == [40, 40, 40]

        def no_polling(job_id: str) -> None:
            raise AssertionError("polled the job while its events were there to follow")

        client.job = no_polling  # type: ignore[method-assign,assignment]
        seen: list[dict[str, int]] = []
        done = client.follow(
            job,
            lambda update: seen.append(
                {t["target_lang"]: t["segments_done"] for t in update["targets"]}
            ),
        )
        assert done["status"] == "succeeded"
        assert [(t["target_lang"], t["status"], t["segments_done"]) for t in done["targets"]] == [
            ("es", "succeeded", 40),
            ("ca", "succeeded", 40),
            ("fr", "succeeded", 40),
        ]
        # Each target's progress moved on its own, and never back.
        for target in ("es", "ca", "fr"):
            counts = [each[target] for each in seen]
            assert counts == sorted(counts) and counts[-1] == 40
        assert any(len(set(each.values())) > 1 for each in seen)
        every = client.result(job["id"])["documents"]
        assert [d["target_lang"] for d in every] == ["es", "ca", "fr"]
        for target in ("es", "ca", "fr"):
            (document,) = client.translation(done, target)["documents"]
            assert document["target_lang"] == target
            assert document["segments"] == every[["es", "ca", "fr"].index(target)]["segments"]
            # The same segments through /v1/translate.
            body = {"source_lang": "en", "target_lang": target, "segments": segments}
            alone = httpx.post(f"{server.url}/v1/translate", json=body, timeout=60)
            assert document["segments"] == alone.json()["translations"]


def test_files_into_two_languages_come_back_per_target_and_zipped(tmp_path: Path) -> None:
    files = [("a.txt", b"Hello world.\nGood morning.\n"), ("b.html", b"<p>The cat.</p>\n")]
    with Server(tmp_path / "data") as server, Client(server.url) as client:
        job = client.follow(client.submit_files("en", ("es", "ca"), files))
        assert job["status"] == "succeeded" and job["target_langs"] == ["es", "ca"]
        with pytest.raises(ServerRefused) as refused:
            client.file(job["id"], 0)  # which target?
        assert refused.value.status == 422 and "files.zip" in refused.value.detail
        each = {
            f"{target}/{name}": client.file(job["id"], n, target)
            for target in ("es", "ca")
            for n, name in enumerate((f"a.{target}.txt", f"b.{target}.html"))
        }
        assert each["es/a.es.txt"] == "Hola Mundo.\nBuenos días.\n".encode()
        assert b"<p>El gat.</p>" in each["ca/b.ca.html"]
        with zipfile.ZipFile(io.BytesIO(client.files_zip(job["id"]))) as archive:
            assert {name: archive.read(name) for name in archive.namelist()} == each
        only = client.files_zip(job["id"], target="ca")
        with zipfile.ZipFile(io.BytesIO(only)) as archive:
            assert sorted(archive.namelist()) == ["ca/a.ca.txt", "ca/b.ca.html"]
        # One target, as ever: no target to name.
        single = client.follow(client.submit_files("en", "es", files[:1]))
        assert single["target_langs"] == ["es"]
        assert client.file(single["id"], 0) == each["es/a.es.txt"]
