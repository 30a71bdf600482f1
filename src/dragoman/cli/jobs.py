"""The client commands: ``translate`` files as a job (into one language or several) and list
``jobs``. Every mistake a user can make ends in one or two lines and an exit code
(``ExitCode``), never a traceback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dragoman.cli.app import ApiKey, ExitCode, Server, app, console, fail
from dragoman.client import (
    DEFAULT_SERVER,
    ApiCallError,
    Client,
    ConnectionLost,
    InvalidServerURL,
    JobResult,
    JobUnsuccessful,
    JobView,
    NotADragoman,
    NotHTTP,
    ServerRefused,
    ServerTimedOut,
    ServerUnreachable,
    ServiceUnavailable,
    Targets,
    UnknownHost,
    output_path,
    succeeded,
)


def _explain(exc: ApiCallError) -> tuple[str, ExitCode]:
    """What to tell the user about a failed call, and the exit code."""
    server = exc.server
    if isinstance(exc, InvalidServerURL):
        return f"--server must be a URL such as {DEFAULT_SERVER}, not {server!r}", ExitCode.USAGE
    if isinstance(exc, UnknownHost):
        return f"{exc.message} — check --server", ExitCode.UNREACHABLE
    if isinstance(exc, ServerTimedOut | ConnectionLost):
        return f"{exc.message} — retry later, or check --server", ExitCode.UNREACHABLE
    if isinstance(exc, NotHTTP | NotADragoman):
        return f"{exc.message} — is --server the URL of a dragoman API?", ExitCode.UNREACHABLE
    if isinstance(exc, ServerUnreachable):
        return (
            f"no dragoman at {server} ({exc.reason}) — start one with `dragoman serve` "
            "or pass --server",
            ExitCode.UNREACHABLE,
        )
    if isinstance(exc, ServiceUnavailable):
        when = f"in {exc.retry_after_s:g} s" if exc.retry_after_s else "later"
        return f"{server} is unavailable: {exc.message} — retry {when}", ExitCode.UNREACHABLE
    if isinstance(exc, ServerRefused):
        if exc.status == 401:
            return f"{exc.message} — pass --api-key KEY or set DRAGOMAN_API_KEY", ExitCode.FAILED
        if exc.status == 404:
            return f"{exc.message} — is --server the API's root URL?", ExitCode.FAILED
        if exc.status == 413:
            return f"{exc.message} — send fewer or smaller files per run", ExitCode.FAILED
        if exc.status >= 500:
            return f"the server failed: {exc.message} — see its log", ExitCode.FAILED
    return exc.message, ExitCode.FAILED


@contextlib.contextmanager
def _api_errors() -> Iterator[None]:
    """Turns a failed call into its message and exit code."""
    try:
        yield
    except ApiCallError as exc:
        message, code = _explain(exc)
        fail(message, code)


def _strerror(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def _read_lines(path: Path) -> list[str]:
    """The file's lines; a file that cannot be read or is not UTF-8 is a usage error."""
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        fail(f"{path} is a directory, not a text file", ExitCode.USAGE)
    except OSError as exc:
        fail(f"cannot read {path}: {_strerror(exc)}", ExitCode.USAGE)
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        fail(
            f"{path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}, "
            f"line {line})",
            ExitCode.USAGE,
            "convert it first, e.g. iconv -f LATIN1 -t UTF-8",
        )


def _interrupted(client: Client, job: JobView | None) -> NoReturn:
    if job is None:
        fail(
            "interrupted before the server confirmed the job",
            ExitCode.INTERRUPTED,
            f"if it was accepted, dragoman jobs --server {client.server} lists it",
        )
    key = ' -H "Authorization: Bearer $DRAGOMAN_API_KEY"' if client.api_key else ""
    fail(
        f"interrupted — job {job['id']} keeps running on {client.server}; no file is written",
        ExitCode.INTERRUPTED,
        f"follow it: dragoman jobs --server {client.server}   "
        f"cancel it: curl{key} -X DELETE {client.server}/v1/jobs/{job['id']}",
    )


@app.command()
def translate(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Files of any format of GET /v1/formats (XLIFF, PO, HTML, DOCX, ...), "
            "by extension; .txt files go one segment per line"
        ),
    ],
    source: Annotated[
        str, typer.Option("--from", help="Source language, or auto (detected per file)")
    ],
    target: Annotated[
        str,
        typer.Option(
            "--to",
            help="Target language, or several separated by commas (es,fr,de): the same "
            "job translates the files into each",
        ),
    ],
    server: Server = DEFAULT_SERVER,
    api_key: ApiKey = None,
    priority: Annotated[str, typer.Option(help="low, normal or high")] = "normal",
    segmentation: Annotated[
        str, typer.Option(help="srx: split paragraphs into sentences; none: keep units whole")
    ] = "srx",
    mark_unknown: Annotated[
        bool,
        typer.Option(
            "--mark-unknown",
            help="Apertium: mark the words it does not know (*word), as apertium -u does not",
        ),
    ] = False,
    deadline: Annotated[
        str | None,
        typer.Option(
            help="When the job is due, RFC 3339 (2026-12-24T18:00:00Z): earliest deadline "
            "runs first, and the job says when it is at risk"
        ),
    ] = None,
    review_below: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Neural engines: segments whose confidence is below this (0 to 1) are "
            "marked for review",
        ),
    ] = None,
) -> None:
    """Translate files as one job and write each beside its source as NAME.<to>.EXT, once
    per target language."""
    targets = _targets(target)
    with _api_errors():
        client = Client(server, api_key)
    texts = [path for path in files if path.suffix.lower() == ".txt"]
    others = [path for path in files if path.suffix.lower() != ".txt"]
    contents = [(path, _read_bytes(path)) for path in others]
    lines = {path: _read_lines(path) for path in texts}
    with client:
        options = {
            "priority": priority,
            "mark_unknown": mark_unknown,
            "deadline": deadline,
            "review_below": review_below,
        }
        if contents:
            _translate_files(client, contents, source, targets, segmentation, **options)
        if lines:
            _translate_lines(client, lines, source, targets, **options)


def _targets(value: str) -> list[str]:
    """``--to``'s languages: one, or several separated by commas; a usage error for an
    empty one. Their codes are the server's to judge."""
    codes = [code.strip() for code in value.split(",")]
    if not all(codes):
        fail(
            f"--to {value!r} names an empty language",
            ExitCode.USAGE,
            "give one language, or several separated by commas: --to es,fr,de",
        )
    return codes


def _asked(targets: list[str]) -> Targets:
    """What the job is submitted into: one language as ever, or the list."""
    return targets[0] if len(targets) == 1 else targets


def _outputs(job: JobView, targets: list[str]) -> list[tuple[str | None, str]]:
    """Each target to fetch (None: the job's only one) and the name its outputs carry: the
    one language as given, or each of the job's (its codes, each once)."""
    if len(targets) == 1:
        return [(None, targets[0])]
    return [(code, code) for code in job["target_langs"]]


def _delivered(client: Client, job: JobView, targets: list[str]) -> list[tuple[str | None, str]]:
    """The ``_outputs`` whose translation succeeded; ``JobUnsuccessful`` when none did."""
    outputs = [(t, name) for t, name in _outputs(job, targets) if succeeded(job, t)]
    if not outputs:
        raise JobUnsuccessful(client.server, job)
    return outputs


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        fail(f"{path} is a directory, not a file", ExitCode.USAGE)
    except OSError as exc:
        fail(f"cannot read {path}: {_strerror(exc)}", ExitCode.USAGE)


def _translate_files(
    client: Client,
    contents: list[tuple[Path, bytes]],
    source: str,
    targets: list[str],
    segmentation: str,
    **options: Any,
) -> None:
    """One job of whole files (multipart); each comes back in its own format, once per
    target (``options``: ``Client.submit_files``'s)."""
    job: JobView | None = None
    with _api_errors():
        try:
            job = client.submit_files(
                source,
                _asked(targets),
                [(path.name, content) for path, content in contents],
                segmentation=segmentation,
                **options,
            )
            job = _follow(client, job)
            outputs = _delivered(client, job, targets)
            for target, name in outputs:
                for n, (path, _) in enumerate(contents):
                    content = client.file(job["id"], n, target)
                    _write_file(output_path(path, name), content, path)
            if len(outputs) < len(_outputs(job, targets)):
                raise JobUnsuccessful(client.server, job)
        except KeyboardInterrupt:
            _interrupted(client, job)


def _write_file(destination: Path, content: bytes, source: Path) -> None:
    try:
        destination.write_bytes(content)
    except OSError as exc:
        fail(f"cannot write {destination}: {_strerror(exc)}", ExitCode.USAGE)
    console.print(f"{source} → {destination}", markup=False, highlight=False)


def _translate_lines(
    client: Client, lines: dict[Path, list[str]], source: str, targets: list[str], **options: Any
) -> None:
    """Text files as segments, one per non-blank line; blank lines stay in place; once per
    target (``options``: ``Client.submit``'s)."""
    documents = [
        (path.name, [line for line in content if line.strip()]) for path, content in lines.items()
    ]
    job: JobView | None = None
    with _api_errors():
        try:
            job = client.submit(source, _asked(targets), documents, **options)
            job = _follow(client, job)
            results = [
                (client.translation(job, target), name)
                for target, name in _delivered(client, job, targets)
            ]
        except KeyboardInterrupt:
            _interrupted(client, job)
    try:
        for result, name in results:
            _write(lines, result, name)
    except KeyboardInterrupt:
        fail(
            f"interrupted while writing the translations of job {job['id']}",
            ExitCode.INTERRUPTED,
            f"run again, or fetch {client.server}/v1/jobs/{job['id']}/result",
        )
    if len(results) < len(_outputs(job, targets)):
        with _api_errors():
            raise JobUnsuccessful(client.server, job)


def _write(lines: dict[Path, list[str]], result: JobResult, target: str) -> None:
    """Writes each translation beside its source; blank lines stay where they were."""
    for (path, content), doc in zip(lines.items(), result["documents"], strict=True):
        translated = iter(doc["segments"])
        out = [(next(translated) or "") if line.strip() else line for line in content]
        destination = output_path(path, target)
        try:
            destination.write_text("\n".join(out) + "\n", encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {destination}: {_strerror(exc)}", ExitCode.USAGE)
        console.print(f"{path} → {destination}", markup=False, highlight=False)


def _follow(client: Client, job: JobView) -> JobView:
    """Follows the job until it finishes, with a progress bar on stderr: one per target
    language when it has several."""
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        name = f"job …{job['id'][-8:]}"  # an id's first digits are its time (ADR 0030)
        if len(job["targets"]) <= 1:
            task = progress.add_task(name, total=job["segments_total"], status=job["status"])

            def show(update: JobView) -> None:
                progress.update(task, completed=update["segments_done"], status=update["status"])

            return client.follow(job, show)
        tasks = {
            t["target_lang"]: progress.add_task(
                f"{name} → {t['target_lang']}", total=t["segments_total"], status=t["status"]
            )
            for t in job["targets"]
        }

        def show_each(update: JobView) -> None:
            for t in update["targets"]:
                progress.update(
                    tasks[t["target_lang"]], completed=t["segments_done"], status=t["status"]
                )

        return client.follow(job, show_each)


@app.command()
def jobs(
    status: Annotated[str | None, typer.Option(help="Only jobs in this status")] = None,
    limit: Annotated[int, typer.Option(help="How many")] = 20,
    server: Server = DEFAULT_SERVER,
    api_key: ApiKey = None,
) -> None:
    """List recent jobs."""
    try:
        with _api_errors(), Client(server, api_key) as client:
            page = client.jobs(status=status or None, limit=limit)
    except KeyboardInterrupt:
        fail("interrupted", ExitCode.INTERRUPTED)
    table = Table("id", "status", "pair", "pool", "done", "created")
    for job in page["jobs"]:
        table.add_row(
            job["id"],
            job["status"],
            f"{job['source_lang']}-{','.join(job['target_langs'])}",
            job["pool"],
            f"{job['segments_done']}/{job['segments_total']}",
            job["created_at"],
        )
    Console().print(table)
