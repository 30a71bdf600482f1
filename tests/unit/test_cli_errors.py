"""The mistakes a user makes at the command line: each gets one or two lines on stderr saying
what to do, the documented exit code (1 refused or failed, 2 usage or bad file, 3 no working
dragoman at --server, 130 interrupted), and never a traceback.

The servers are real: the embedded app under uvicorn in a thread (over the scripted engine),
a plain HTTP server that is not a dragoman, sockets that never answer or do not speak HTTP.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import gc
import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner, Result

from dragoman.api.app import create_app
from dragoman.cli import app
from dragoman.cli.app import INTERRUPT_GRACE_S
from dragoman.engines import Engines
from dragoman.models import Pair, Pool
from dragoman.scaling import open_controller
from dragoman.scaling.process import ProcessController
from dragoman.services import EmbeddedService
from dragoman.settings import Settings
from tests.conftest import ScriptedEngine
from tests.integration.server import free_port
from tests.processes import reaped


def dragoman(*args: str, **env: str | None) -> Result:
    """``dragoman ARGS`` in process, with no DRAGOMAN_SERVER or DRAGOMAN_API_KEY from outside."""
    runner = CliRunner()
    result = runner.invoke(
        app, list(args), env={"DRAGOMAN_SERVER": None, "DRAGOMAN_API_KEY": None, **env}
    )
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def said(result: Result) -> str:
    """What the command said about the mistake: its stderr lines after any progress bar."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.startswith("dragoman: "))
    message = lines[start:]
    assert 1 <= len(message) <= 2, result.stderr
    return " ".join(message)


class Seen:
    """An ASGI app in front of another that notes each HTTP request as "METHOD /path"."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.requests.append(f"{scope['method']} {scope['path']}")
        await self.app(scope, receive, send)


class Api:
    """The embedded dragoman app over a scripted engine, served by uvicorn in a thread."""

    def __init__(self, data_dir: Path, engine: ScriptedEngine | None = None, **overrides: Any):
        self.engine = engine or ScriptedEngine()
        fast = {"heartbeat_interval_s": 0.05, "sweep_interval_s": 0.05, "max_attempts": 1}
        settings = Settings(data_dir=data_dir, sync_batch_delay_s=0.005, **{**fast, **overrides})
        self.service = EmbeddedService(settings, engines=Engines([self.engine]))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.seen = Seen(create_app(self.service))
        config = uvicorn.Config(self.seen, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_until_complete, args=(self.server.serve(),), daemon=True
        )

    def __enter__(self) -> Api:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "no server"
            time.sleep(0.02)
        return self

    def __exit__(self, *_: Any) -> None:
        self.loop.call_soon_threadsafe(self.engine.release.set)
        self.server.should_exit = True
        self.thread.join(30)
        self.loop.close()
        gc.collect()  # a leak shows up in the test that made it

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(30)

    def following(self) -> bool:
        """A client has asked for a job by its id: it got the job's answer and follows it."""
        return any(request.startswith("GET /v1/jobs/") for request in self.seen.requests)

    def jobs(self) -> list[dict[str, Any]]:
        jobs: list[dict[str, Any]] = httpx.get(f"{self.url}/v1/jobs", timeout=10).json()["jobs"]
        return jobs


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    with Api(tmp_path_factory.mktemp("api") / "data") as running:
        yield running


@pytest.fixture
def fresh_api(tmp_path: Path) -> Iterator[Api]:
    """A server of the test's own, for tests that block its engine or break its store."""
    with Api(tmp_path / "data") as running:
        yield running


@pytest.fixture
def text(tmp_path: Path) -> Path:
    path = tmp_path / "a.txt"
    path.write_text("Hello world.\n\nThe cat.\n", encoding="utf-8")
    return path


@pytest.fixture
def nobody() -> str:
    """A localhost URL nothing listens at."""
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture
def silent() -> Iterator[str]:
    """A socket that takes connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def not_http() -> Iterator[str]:
    """A server that answers each connection with an SSH banner."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)  # the request, so that closing sends no reset
                conn.sendall(b"SSH-2.0-OpenSSH_9.2p1\r\n")
                conn.shutdown(socket.SHUT_RDWR)

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


@pytest.fixture
def web_server(tmp_path: Path) -> Iterator[str]:
    """A plain HTTP server of files: it answers /v1/jobs with an HTML error page."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def translate(path: Path, *args: str) -> Result:
    return dragoman("translate", str(path), "--from", "en", "--to", "es", *args)


# --- no dragoman at --server -------------------------------------------------------------


def test_translate_with_no_server_says_to_start_one_or_pass_server(text: Path, nobody: str) -> None:
    result = translate(text, "--server", nobody)
    assert result.exit_code == 3
    message = said(result)
    assert f"no dragoman at {nobody}" in message
    assert "dragoman serve" in message and "--server" in message
    assert not (text.parent / "a.es.txt").exists()


def test_jobs_with_no_server_at_dragoman_server_names_the_url(nobody: str) -> None:
    result = dragoman("jobs", DRAGOMAN_SERVER=nobody)
    assert result.exit_code == 3
    assert f"no dragoman at {nobody}" in said(result)


def test_a_host_that_does_not_resolve_is_named() -> None:
    server = "http://no-such-host.invalid:8080"
    result = dragoman("jobs", "--server", server)
    assert result.exit_code == 3
    message = said(result)
    assert f"the host of {server} is unknown" in message and "--server" in message


def test_a_server_that_never_answers_times_out(
    text: Path, silent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("dragoman.client.DEFAULT_TIMEOUT_S", 0.5)
    result = translate(text, "--server", silent)
    assert result.exit_code == 3
    message = said(result)
    assert f"{silent} did not answer within 0.5 s" in message
    assert "--server" in message


def test_a_url_that_is_not_an_http_server(text: Path, not_http: str) -> None:
    result = translate(text, "--server", not_http)
    assert result.exit_code == 3
    message = said(result)
    assert f"{not_http} does not speak HTTP" in message
    assert "--server" in message


def test_an_http_server_that_is_not_a_dragoman(text: Path, web_server: str) -> None:
    for result in (
        translate(text, "--server", web_server),
        dragoman("jobs", "--server", web_server),
    ):
        assert result.exit_code == 3
        message = said(result)
        assert f"{web_server} is not a dragoman API" in message
        assert "HTTP 40" in message or "HTTP 50" in message
        assert "--server" in message


@pytest.mark.parametrize(
    "url", ["localhost:8080", "127.0.0.1:8080", "http://", "ftp://example.org/", "http://[::1"]
)
def test_a_malformed_server_url_is_a_usage_error(text: Path, url: str) -> None:
    for result in (translate(text, "--server", url), dragoman("jobs", "--server", url)):
        assert result.exit_code == 2
        message = said(result)
        assert "--server" in message and repr(url) in message
        assert "http://127.0.0.1:8080" in message


# --- --to --------------------------------------------------------------------------------


@pytest.mark.parametrize("to", ["es,,fr", "es,", ",", "", " , es"])
def test_an_empty_language_in_to_is_a_usage_error_before_any_call(
    text: Path, nobody: str, to: str
) -> None:
    result = dragoman("translate", str(text), "--from", "en", "--to", to, "--server", nobody)
    assert result.exit_code == 2
    message = said(result)
    assert f"--to {to!r} names an empty language" in message
    assert "--to es,fr,de" in message
    assert list(text.parent.iterdir()) == [text]


def test_a_target_not_installed_among_several_is_named_and_nothing_is_written(
    api: Api, text: Path
) -> None:
    result = dragoman("translate", str(text), "--from", "en", "--to", "es,de", "--server", api.url)
    assert result.exit_code == 1
    assert said(result) == (
        "dragoman: language pair en-de is not installed; see /v1/languages "
        "(unsupported_language_pair)"
    )
    assert list(text.parent.iterdir()) == [text]


def test_the_source_among_the_targets_is_refused_in_the_servers_words(api: Api, text: Path) -> None:
    result = dragoman("translate", str(text), "--from", "en", "--to", "es,en", "--server", api.url)
    assert result.exit_code == 1
    assert said(result) == ("dragoman: target_langs: en is the source language (invalid_request)")
    bad_code = dragoman(
        "translate", str(text), "--from", "en", "--to", "es,x!", "--server", api.url
    )
    assert bad_code.exit_code == 1
    assert "target_langs" in said(bad_code) and "'x!'" in said(bad_code)
    assert list(text.parent.iterdir()) == [text]


# --- input files -------------------------------------------------------------------------


def test_a_missing_file_is_named_before_any_server_is_called(tmp_path: Path, nobody: str) -> None:
    missing = tmp_path / "nope.txt"
    result = translate(missing, "--server", nobody)
    assert result.exit_code == 2
    assert f"cannot read {missing}: no such file" in said(result)


def test_a_directory_is_not_a_text_file(tmp_path: Path, nobody: str) -> None:
    result = translate(tmp_path, "--server", nobody)
    assert result.exit_code == 2
    assert f"{tmp_path} is a directory" in said(result)


def test_a_file_that_is_not_utf8_is_named_with_the_offset(tmp_path: Path, nobody: str) -> None:
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("Caf\u00e9 cr\u00e8me\n".encode("latin-1"))
    result = translate(latin, "--server", nobody)
    assert result.exit_code == 2
    message = said(result)
    assert f"{latin} is not UTF-8 text" in message
    assert "byte 0xe9 at offset 3" in message


def test_an_unreadable_file_is_named(
    tmp_path: Path, nobody: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    locked = tmp_path / "locked.txt"
    locked.write_text("Hello.\n", encoding="utf-8")
    locked.chmod(0)
    if os.geteuid() == 0:  # root reads any file: its read fails as a user's would
        read_bytes = Path.read_bytes

        def denied(path: Path) -> bytes:
            if path == locked:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return read_bytes(path)

        monkeypatch.setattr(Path, "read_bytes", denied)
    result = translate(locked, "--server", nobody)
    assert result.exit_code == 2
    assert f"cannot read {locked}: permission denied" in said(result)


def test_a_path_through_a_file_is_named(text: Path, nobody: str) -> None:
    result = translate(text / "b.txt", "--server", nobody)
    assert result.exit_code == 2
    assert f"cannot read {text / 'b.txt'}: not a directory" in said(result)


def test_an_unwritable_output_is_named(api: Api, tmp_path: Path) -> None:
    source = tmp_path / "b.txt"
    source.write_text("Hello.\n", encoding="utf-8")
    (tmp_path / "b.es.txt").mkdir()  # where the translation would go
    result = translate(source, "--server", api.url)
    assert result.exit_code == 2
    assert f"cannot write {tmp_path / 'b.es.txt'}" in said(result)


# --- the server says no ------------------------------------------------------------------


def test_a_translation_still_writes_its_output(api: Api, text: Path) -> None:
    result = translate(text, "--server", api.url)
    assert result.exit_code == 0, result.output
    assert (text.parent / "a.es.txt").read_text(encoding="utf-8") == "HELLO WORLD.\n\nTHE CAT.\n"


def test_a_pair_not_installed_prints_the_servers_message_and_code(api: Api, text: Path) -> None:
    result = dragoman("translate", str(text), "--from", "en", "--to", "de", "--server", api.url)
    assert result.exit_code == 1
    assert said(result) == (
        "dragoman: language pair en-de is not installed; see /v1/languages "
        "(unsupported_language_pair)"
    )
    assert not (text.parent / "a.de.txt").exists()


def test_an_unknown_language_prints_the_servers_message_and_code(api: Api, text: Path) -> None:
    result = dragoman("translate", str(text), "--from", "en", "--to", "x!", "--server", api.url)
    assert result.exit_code == 1
    message = said(result)
    assert "target_lang" in message or "'x!'" in message
    assert message.endswith("(invalid_request)")


def test_values_the_server_rejects_are_reported_with_its_message(api: Api, text: Path) -> None:
    bad_priority = translate(text, "--server", api.url, "--priority", "urgent")
    assert bad_priority.exit_code == 1
    assert "priority" in said(bad_priority) and "(invalid_request)" in said(bad_priority)
    bad_status = dragoman("jobs", "--server", api.url, "--status", "done")
    assert bad_status.exit_code == 1
    assert "status" in said(bad_status) and "(invalid_request)" in said(bad_status)


def test_a_server_url_with_a_wrong_path_is_a_dragoman_404(api: Api) -> None:
    result = dragoman("jobs", "--server", f"{api.url}/api")
    assert result.exit_code == 1
    message = said(result)
    assert "(not_found)" in message and "--server" in message


def test_a_missing_or_wrong_api_key_says_how_to_pass_one(tmp_path: Path, text: Path) -> None:
    with Api(tmp_path / "keyed", api_keys="acme:s3cret") as keyed:
        for result in (
            translate(text, "--server", keyed.url),
            dragoman("jobs", "--server", keyed.url, DRAGOMAN_API_KEY="wrong"),
        ):
            assert result.exit_code == 1
            message = said(result)
            assert "(unauthorized)" in message
            assert "--api-key" in message and "DRAGOMAN_API_KEY" in message
        assert dragoman("jobs", "--server", keyed.url, "--api-key", "s3cret").exit_code == 0


def test_an_unavailable_service_says_to_retry_later(tmp_path: Path, text: Path) -> None:
    # Slow background loops, and their first round over: none holds a connection when the
    # store closes under them.
    with Api(tmp_path / "data", heartbeat_interval_s=2, sweep_interval_s=2) as broken:
        time.sleep(0.5)
        broken.run(broken.service.store.close())
        for result in (
            translate(text, "--server", broken.url),
            dragoman("jobs", "--server", broken.url),
        ):
            assert result.exit_code == 3
            message = said(result)
            assert f"{broken.url} is unavailable" in message
            assert "(store_unavailable)" in message and "retry" in message


# --- the job ends badly ------------------------------------------------------------------


def test_a_failed_job_says_why(api: Api, tmp_path: Path) -> None:
    source = tmp_path / "boom.txt"
    source.write_text("<explode>\n", encoding="utf-8")
    result = translate(source, "--server", api.url)
    assert result.exit_code == 1
    message = said(result)
    assert message.startswith("dragoman: job ") and " failed: " in message
    assert "scripted engine failure" in message and "(engine_error)" in message
    assert not (tmp_path / "boom.es.txt").exists()


def test_a_deadline_and_a_review_threshold_are_sent_with_the_job(api: Api, text: Path) -> None:
    page = text.parent / "page.md"
    page.write_text("# Hello world\n", encoding="utf-8")
    due = ("--deadline", "2030-01-01T12:00:00+01:00", "--review-below", "0.4")
    result = dragoman(
        "translate", str(text), str(page), "--from", "en", "--to", "es", "--server", api.url, *due
    )
    assert result.exit_code == 0, result.output
    for job in api.jobs()[:2]:  # the files' job (multipart) and the text's (JSON)
        assert job["deadline"].startswith("2030-01-01T11:00:00")
        assert job["review_below"] == 0.4
    assert (text.parent / "page.es.md").exists()


def test_a_deadline_the_server_refuses_is_reported_in_its_words(api: Api, text: Path) -> None:
    result = translate(text, "--server", api.url, "--deadline", "next friday")
    assert result.exit_code == 1
    message = said(result)
    assert "deadline" in message and "(invalid_request)" in message
    assert not (text.parent / "a.es.txt").exists()


def test_a_review_threshold_outside_0_to_1_is_a_usage_error(api: Api, text: Path) -> None:
    result = translate(text, "--server", api.url, "--review-below", "1.5")
    assert result.exit_code == 2


def test_a_failed_target_is_reported_after_the_others_are_written(
    tmp_path: Path, text: Path
) -> None:
    engine = ScriptedEngine([Pair("en", "es"), Pair("en", "fr")])
    engine.fail_into.add("fr")
    with Api(tmp_path / "data", engine) as running:
        result = dragoman(
            "translate", str(text), "--from", "en", "--to", "es,fr", "--server", running.url
        )
    assert result.exit_code == 1
    message = said(result)
    assert message.startswith("dragoman: job ") and " failed: fr: " in message
    assert (tmp_path / "a.es.txt").read_text(encoding="utf-8") == "HELLO WORLD.\n\nTHE CAT.\n"
    assert not (tmp_path / "a.fr.txt").exists()


def test_a_job_cancelled_meanwhile_is_reported(fresh_api: Api, text: Path) -> None:
    fresh_api.engine.release.clear()

    def cancel_it() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            jobs = fresh_api.jobs()
            if jobs:
                httpx.delete(f"{fresh_api.url}/v1/jobs/{jobs[0]['id']}", timeout=10)
                return
            time.sleep(0.05)

    canceller = threading.Thread(target=cancel_it)
    canceller.start()
    result = translate(text, "--server", fresh_api.url)
    canceller.join()
    assert result.exit_code == 1
    job_id = fresh_api.jobs()[0]["id"]
    assert said(result) == f"dragoman: job {job_id} was cancelled"
    assert not (text.parent / "a.es.txt").exists()


# A shell without job control starts a command put in the background with SIGINT ignored,
# and the ignoring is inherited down to every process it starts: a suite run from such a
# script started the CLI deaf to Ctrl-C (issue 23). The launcher below does the same.
IGNORING_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def start_cli(*args: str, sigint_ignored: bool = False) -> subprocess.Popen[str]:
    """``python -m dragoman.cli ARGS`` with no DRAGOMAN_* variables, stderr piped."""
    command = [sys.executable, "-m", "dragoman.cli", *args]
    if sigint_ignored:
        command = [sys.executable, "-c", IGNORING_SIGINT, *command[1:]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRAGOMAN_")}
    return subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("sigint", ["default", "ignored"], ids=lambda s: f"sigint-{s}-at-start")
def test_ctrl_c_while_following_leaves_the_job_running_and_says_so(
    fresh_api: Api, text: Path, sigint: str
) -> None:
    fresh_api.engine.release.clear()
    args = ["translate", str(text), "--from", "en", "--to", "es", "--server", fresh_api.url]
    with reaped(start_cli(*args, sigint_ignored=sigint == "ignored")) as proc:
        deadline = time.monotonic() + 30
        while not fresh_api.following():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    (job,) = fresh_api.jobs()
    assert job["status"] in {"queued", "submitted", "running"}
    assert f"job {job['id']} keeps running on {fresh_api.url}" in stderr
    assert f"dragoman jobs --server {fresh_api.url}" in stderr
    assert f"curl -X DELETE {fresh_api.url}/v1/jobs/{job['id']}" in stderr
    assert not (text.parent / "a.es.txt").exists()


def test_ctrl_c_ends_the_command_even_where_the_interrupt_is_lost() -> None:
    # Python raises KeyboardInterrupt between two bytecodes, wherever they are: in a
    # __del__ or a weakref callback it is printed and dropped, in a class created by an
    # import it becomes a RuntimeError. The process must end all the same.
    swallower = (
        "import signal, time\n"
        "from dragoman.cli.app import answer_ctrl_c\n"
        "answer_ctrl_c()\n"
        "handler = signal.getsignal(signal.SIGINT)\n"
        "def lost(signum, frame):\n"
        "    try:\n"
        "        handler(signum, frame)\n"
        "    except KeyboardInterrupt:\n"
        "        pass\n"
        "signal.signal(signal.SIGINT, lost)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    command = [sys.executable, "-c", swallower]
    with reaped(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)) as proc:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
        waited_s = time.monotonic() - sent
    assert proc.returncode == 130
    assert INTERRUPT_GRACE_S <= waited_s < INTERRUPT_GRACE_S + 10
    assert stderr.decode() == "dragoman: interrupted\n"


# --- the contract is documented ----------------------------------------------------------


def test_the_exit_codes_are_in_the_help() -> None:
    result = dragoman("--help")
    assert result.exit_code == 0
    for line in ("Exit codes", "130"):
        assert line in result.output


def test_pool_is_validated_by_the_command_line() -> None:
    for command in ("worker", "scaler"):
        result = dragoman(command, "--pool", "tpu")
        assert result.exit_code == 2
        assert "tpu" in result.output and "cpu" in result.output and "gpu" in result.output


def test_the_watchdog_worker_and_scaler_have_probe_ports_of_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One host runs a watchdog, a worker and a scaler side by side (the process backend, a
    # small install): with one default port they collided.
    served: dict[str, int] = {}

    def serve(app: Any, *, host: str, port: int) -> None:
        served[app.title] = port

    monkeypatch.setattr("dragoman.api.server.serve", serve)
    for command in ("watchdog", "worker", "scaler"):
        assert dragoman(command).exit_code == 0
    assert served == {
        "dragoman watchdog": 9100,
        "dragoman worker (cpu)": 9101,
        "dragoman scaler (cpu)": 9102,
    }
    assert dragoman("worker", DRAGOMAN_WORKER_PROBE_PORT="9201").exit_code == 0
    assert served["dragoman worker (cpu)"] == 9201
    assert dragoman("worker", "--port", "0", DRAGOMAN_WORKER_PROBE_PORT="9201").exit_code == 0
    assert served["dragoman worker (cpu)"] == 0


def test_an_unknown_scaler_backend_is_a_usage_error() -> None:
    result = dragoman("scaler", "--backend", "nomad")
    assert result.exit_code == 2
    assert "process, kubernetes" in result.output and "nomad" in result.output


def test_open_controller_builds_the_process_backend_and_names_the_backends() -> None:
    assert isinstance(open_controller("process", Pool.GPU), ProcessController)
    with pytest.raises(ValueError, match="process, kubernetes"):
        open_controller("nomad", Pool.CPU)
