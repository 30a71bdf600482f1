"""Files in, files out: 100 small files of mixed formats through dragoman, against the same
sentences sent as plain segments and against the old design (``apertium -f html``).

The workload: ``FILES`` files of a few KB each (HTML with ``<b>`` and ``<a href>`` inline,
Markdown, PO, nested i18n JSON, SRT, XLIFF 1.2 and plain text), generated deterministically
from the corpus. Each file's *sentences* are what the engine sees: the segments dragoman's own
``prepare`` makes of it (SRX sentence splitting), inline codes removed.

Measured on one embedded ``dragoman serve`` per run (``--workers`` in-process workers sharing
as many warm Apertium pipelines), after a warm-up job, every figure wall time from the first
submission to the last byte downloaded:

- files as **one job**: one multipart ``POST /v1/jobs`` with every file, polled until it
  finished, then every ``GET /v1/jobs/{id}/files/{n}``;
- files as **100 jobs**: one multipart job per file, submitted by ``CLIENT_THREADS`` clients
  at once, all polled, then every file downloaded;
- the **same sentences as plain segments**: a JSON job with one document per file (one job,
  then one job per file), until every ``GET /v1/jobs/{id}/result``. Files cost what the
  format handling adds: parsing, the layout, inline codes through the engine, rebuilding;
  the target is ``files / plain ≤ 1.3``;
- the **HTML files alone** as one job, against the old design: a fresh ``apertium -f html
  eng-spa`` process per HTML file, one after another and two at a time;
- the **files/s** a warm worker sustains: 100 files over the one-file-job's engine window
  (``finished_at - started_at`` of the Job) and over its wall time. One job is held by one
  worker, so this is one worker's rate; the 100 jobs give the server's.

Checked: every job succeeded, every downloaded file is non-empty and differs from its source,
and every HTML file keeps its number of ``<b>`` tags (the old design's output too).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import re
import statistics
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from xml.sax.saxutils import escape as xml_escape

import httpx
from common import (
    APERTIUM_MODE,
    SEED,
    Stopwatch,
    dragoman_server,
    error_text,
    load_corpus,
    normalize,
    ratio,
    report,
)

from dragoman.formats import for_file, prepare, rebuild
from dragoman.formats.markup import Code, parse_stored

NAME = "files"
FILES = 100
WORKERS = 2
CLIENT_THREADS = 8
OLD_DESIGN_PARALLEL = 2  # the machine's cores
JOB_POLL_S = 0.1  # one job: GET /v1/jobs/{id}
LIST_POLL_S = 0.25  # many jobs: GET /v1/jobs, as bench/bulk.py polls
JOB_TIMEOUT_S = 300.0
FINISHED = {"succeeded", "failed", "cancelled"}
FILES_OVER_PLAIN_TARGET_MAX = 1.3
TEXT_CHARS = (1500, 4000)  # translatable text per file, drawn uniformly
MAX_EXAMPLES = 5
FORM = {"source_lang": "en", "target_lang": "es"}
BOLD_CHANGED = "<b> count changed"

# format -> (share of the mix, extension)
MIX: dict[str, tuple[int, str]] = {
    "html": (25, ".html"),
    "markdown": (15, ".md"),
    "po": (15, ".po"),
    "json": (15, ".json"),
    "srt": (10, ".srt"),
    "xliff": (10, ".xlf"),
    "text": (10, ".txt"),
}


@dataclass(frozen=True, slots=True)
class File:
    name: str
    format: str
    content: bytes
    sentences: list[str]  # the plain text of its segments, as the engine sees it


# ---------------------------------------------------------------- the workload

_SENTENCE = re.compile(r"(?<=[.;:!?])\s+(?=[A-Z(\"])")


def sentences_of(paragraph: str) -> list[str]:
    """A rough sentence split, for subtitles and list items (not what dragoman uses)."""
    return [s for s in _SENTENCE.split(paragraph) if s.strip()]


def title_of(paragraph: str, rng: random.Random) -> str:
    words = paragraph.split()
    return " ".join(words[: rng.randint(3, 7)]).rstrip(".,;:")


def decorated(
    paragraph: str,
    rng: random.Random,
    escape: Callable[[str], str],
    bold: tuple[str, str],
    link: Callable[[int], tuple[str, str]],
) -> str:
    """The paragraph escaped, a bold run in its first half and a link in its second, each
    present with some chance: the inline markup that becomes codes."""
    words = [escape(word) for word in paragraph.split()]
    half = len(words) // 2
    if half >= 2 and rng.random() < 0.7:
        start = rng.randrange(half - 1)
        end = min(half, start + rng.randint(1, 3)) - 1
        words[start] = bold[0] + words[start]
        words[end] += bold[1]
    if len(words) - half >= 2 and rng.random() < 0.4:
        start = rng.randrange(half, len(words) - 1)
        end = min(len(words), start + rng.randint(1, 3)) - 1
        opening, closing = link(rng.randrange(1000))
        words[start] = opening + words[start]
        words[end] += closing
    return " ".join(words)


def html_text(text: str) -> str:
    return html.escape(text, quote=False)


def html_file(paragraphs: list[str], rng: random.Random) -> str:
    title = html_text(title_of(paragraphs[0], rng))
    body = [f"  <h1>{title}</h1>"]
    for index, paragraph in enumerate(paragraphs):
        if index and index % 4 == 0:
            body.append(f"  <h2>{html_text(title_of(paragraph, rng))}</h2>")
        if index % 5 == 3:
            items = sentences_of(paragraph)
            body += ["  <ul>", *(f"    <li>{html_text(s)}</li>" for s in items), "  </ul>"]
            continue
        inline = decorated(
            paragraph,
            rng,
            html_text,
            ("<b>", "</b>"),
            lambda n: (f'<a href="https://example.org/licenses/{n}.html">', "</a>"),
        )
        body.append(f"  <p>{inline}</p>")
    head = f'  <meta charset="utf-8">\n  <title>{title}</title>'
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n{head}\n</head>\n<body>\n'
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def markdown_link(n: int) -> tuple[str, str]:
    return "[", f"](https://example.org/licenses/{n}.html)"


def markdown_file(paragraphs: list[str], rng: random.Random) -> str:
    blocks = [f"# {title_of(paragraphs[0], rng)}"]
    for index, paragraph in enumerate(paragraphs):
        if index and index % 4 == 0:
            blocks.append(f"## {title_of(paragraph, rng)}")
        if index % 5 == 3:
            blocks.append("\n".join(f"- {s}" for s in sentences_of(paragraph)))
            continue
        blocks.append(decorated(paragraph, rng, str, ("**", "**"), markdown_link))
    return "\n\n".join(blocks) + "\n"


def po_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def po_file(paragraphs: list[str], rng: random.Random) -> str:
    header = [
        'msgid ""',
        'msgstr ""',
        '"Project-Id-Version: licenses 1.0\\n"',
        '"Language: en\\n"',
        '"MIME-Version: 1.0\\n"',
        '"Content-Type: text/plain; charset=UTF-8\\n"',
        '"Content-Transfer-Encoding: 8bit\\n"',
    ]
    entries = ["\n".join(header) + "\n"]
    for index, paragraph in enumerate(paragraphs):
        line = rng.randint(1, 900)
        entries.append(
            f'#: src/licenses.py:{line}\nmsgid {po_string(paragraph)}\nmsgstr ""\n'
            if index % 3
            else f'#: src/menu.py:{line}\nmsgctxt "title"\nmsgid '
            f'{po_string(title_of(paragraph, rng))}\nmsgstr ""\n'
            f'\n#: src/licenses.py:{line + 1}\nmsgid {po_string(paragraph)}\nmsgstr ""\n'
        )
    return "\n".join(entries)


def json_file(paragraphs: list[str], rng: random.Random) -> str:
    bundle: dict[str, Any] = {"meta": {"version": 3, "draft": False}}
    for index, paragraph in enumerate(paragraphs):
        section = bundle.setdefault(f"section_{index // 3}", {"title": title_of(paragraph, rng)})
        if index % 5 == 3:
            section["items"] = sentences_of(paragraph)
        else:
            section.setdefault("body", {})[f"p{index}"] = paragraph
    return json.dumps(bundle, indent=2, ensure_ascii=False) + "\n"


def srt_time(ms: int) -> str:
    hours, ms = divmod(ms, 3_600_000)
    minutes, ms = divmod(ms, 60_000)
    seconds, ms = divmod(ms, 1000)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d},{ms:03d}"


def srt_lines(sentence: str) -> str:
    """A cue's text: on two lines, split at the space nearest the middle, when long."""
    if len(sentence) <= 42 or " " not in sentence:
        return sentence
    middle = len(sentence) // 2
    cut = min((i for i, c in enumerate(sentence) if c == " "), key=lambda i: abs(i - middle))
    return sentence[:cut] + "\n" + sentence[cut + 1 :]


def srt_file(paragraphs: list[str], rng: random.Random) -> str:
    cues: list[str] = []
    clock = rng.randint(1000, 5000)
    for paragraph in paragraphs:
        for sentence in sentences_of(paragraph):
            length = 1000 + 40 * len(sentence)
            number = len(cues) + 1
            timing = f"{srt_time(clock)} --> {srt_time(clock + length)}"
            cues.append(f"{number}\n{timing}\n{srt_lines(sentence)}\n")
            clock += length + rng.randint(100, 900)
    return "\n".join(cues)


def xliff_file(paragraphs: list[str], rng: random.Random) -> str:
    units = []
    for index, paragraph in enumerate(paragraphs):
        source = decorated(
            paragraph,
            rng,
            xml_escape,
            (f'<g id="b{index}" ctype="bold">', "</g>"),
            lambda n: (f'<g id="a{n}" ctype="link">', "</g>"),
        )
        units.append(
            f'      <trans-unit id="u{index}">\n        <source>{source}</source>\n'
            "      </trans-unit>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">\n'
        '  <file original="licenses.properties" source-language="en" datatype="plaintext">\n'
        "    <body>\n" + "\n".join(units) + "\n    </body>\n  </file>\n</xliff>\n"
    )


def text_file(paragraphs: list[str], rng: random.Random) -> str:
    return "\n\n".join([title_of(paragraphs[0], rng), *paragraphs]) + "\n"


WRITERS: dict[str, Callable[[list[str], random.Random], str]] = {
    "html": html_file,
    "markdown": markdown_file,
    "po": po_file,
    "json": json_file,
    "srt": srt_file,
    "xliff": xliff_file,
    "text": text_file,
}


def counts(formats: Sequence[str], total: int) -> dict[str, int]:
    """``total`` files shared among ``formats`` by their weights (largest remainder)."""
    weights = {name: MIX[name][0] for name in formats}
    whole = sum(weights.values())
    exact = {name: total * weight / whole for name, weight in weights.items()}
    found = {name: int(share) for name, share in exact.items()}
    by_remainder = sorted(exact, key=lambda name: found[name] - exact[name])
    for name in by_remainder[: total - sum(found.values())]:
        found[name] += 1
    return found


def plain_text(stored: str) -> str:
    """A stored segment as the engine reads it: a standalone code is a blank (a superblank
    in Apertium's stream), a paired code nothing."""
    tokens = parse_stored(stored).tokens
    return normalize(
        "".join(
            " " if isinstance(t, Code) and t.kind == "ph" else "" if isinstance(t, Code) else t
            for t in tokens
        )
    )


def sentences(name: str, content: bytes) -> list[str]:
    """The plain text of the segments dragoman makes of a file."""
    fmt = for_file(name)
    prepared = prepare(fmt, content, filename=name, source_lang="en", segmentation=True)
    return [text for text in map(plain_text, prepared.segments) if text]


def build_files(corpus: list[str], formats: Sequence[str], seed: int = SEED) -> list[File]:
    """``FILES`` files of ``formats``, in a shuffled order, each a few KB of corpus text."""
    rng = random.Random(seed)
    kinds = [name for name, n in counts(formats, FILES).items() for _ in range(n)]
    rng.shuffle(kinds)
    files = []
    for index, kind in enumerate(kinds):
        budget, paragraphs = rng.randint(*TEXT_CHARS), list[str]()
        while sum(len(p) for p in paragraphs) < budget:
            paragraphs.append(rng.choice(corpus))
        name = f"doc-{index:03d}{MIX[kind][1]}"
        content = WRITERS[kind](paragraphs, rng).encode("utf-8")
        files.append(File(name, kind, content, sentences(name, content)))
    return files


# ---------------------------------------------------------------- dragoman


def accepted(response: httpx.Response, what: str) -> str:
    if response.status_code != 202:
        raise RuntimeError(f"{what} refused: {error_text(response.status_code, response.content)}")
    job_id: str = response.json()["id"]
    return job_id


def submit_files(client: httpx.Client, files: Sequence[File]) -> str:
    parts = [("files", (f.name, f.content, "application/octet-stream")) for f in files]
    return accepted(client.post("/v1/jobs", data=FORM, files=parts), f"files {files[0].name}…")


def submit_plain(client: httpx.Client, files: Sequence[File]) -> str:
    documents = [{"name": f.name, "segments": f.sentences} for f in files]
    response = client.post("/v1/jobs", json={**FORM, "documents": documents})
    return accepted(response, f"segments of {files[0].name}…")


def wait_job(client: httpx.Client, job_id: str) -> dict[str, Any]:
    """Polls one job until it finished; its Job JSON."""
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while True:
        response = client.get(f"/v1/jobs/{job_id}")
        response.raise_for_status()
        job: dict[str, Any] = response.json()
        if job["status"] in FINISHED:
            return job
        if time.monotonic() > deadline:
            raise TimeoutError(f"job {job_id} still {job['status']} after {JOB_TIMEOUT_S:.0f}s")
        time.sleep(JOB_POLL_S)


def wait_jobs(client: httpx.Client, ids: list[str]) -> dict[str, dict[str, Any]]:
    """Polls the job list until every job in ``ids`` finished; their Job JSONs."""
    deadline = time.monotonic() + JOB_TIMEOUT_S
    wanted = set(ids)
    while True:
        found: dict[str, dict[str, Any]] = {}
        params: dict[str, Any] = {"limit": 1000}
        while True:
            response = client.get("/v1/jobs", params=params)
            response.raise_for_status()
            page = response.json()
            found |= {job["id"]: job for job in page["jobs"] if job["id"] in wanted}
            if not page["next_cursor"]:
                break
            params["cursor"] = page["next_cursor"]
        if len(found) == len(wanted) and all(j["status"] in FINISHED for j in found.values()):
            return found
        if time.monotonic() > deadline:
            states = Counter(j["status"] for j in found.values())
            raise TimeoutError(f"jobs unfinished after {JOB_TIMEOUT_S:.0f}s: {states}")
        time.sleep(LIST_POLL_S)


def download(client: httpx.Client, job_id: str, n: int) -> bytes | None:
    response = client.get(f"/v1/jobs/{job_id}/files/{n}")
    return response.content if response.status_code == 200 else None


def fetch_result(client: httpx.Client, job_id: str) -> list[list[str | None]]:
    response = client.get(f"/v1/jobs/{job_id}/result")
    response.raise_for_status()
    return [doc["segments"] for doc in response.json()["documents"]]


def window_s(jobs: Sequence[dict[str, Any]]) -> float | None:
    """From the first job's ``started_at`` to the last one's ``finished_at``."""
    starts = [datetime.fromisoformat(j["started_at"]) for j in jobs if j["started_at"]]
    ends = [datetime.fromisoformat(j["finished_at"]) for j in jobs if j["finished_at"]]
    if not starts or not ends:
        return None
    return round((max(ends) - min(starts)).total_seconds(), 3)


def run_scenario(url: str, files: list[File], *, as_files: bool, one_job: bool) -> dict[str, Any]:
    """Submit (one job, or one per file, concurrently), wait, fetch every file or result."""
    groups = [files] if one_job else [[f] for f in files]
    submit = submit_files if as_files else submit_plain
    limits = httpx.Limits(max_connections=CLIENT_THREADS, max_keepalive_connections=CLIENT_THREADS)
    with (
        httpx.Client(base_url=url, timeout=120.0, limits=limits) as client,
        ThreadPoolExecutor(CLIENT_THREADS) as pool,
        Stopwatch() as total,
    ):
        ids = list(pool.map(lambda group: submit(client, group), groups))
        submitted_s = time.perf_counter() - total.started
        jobs = {ids[0]: wait_job(client, ids[0])} if one_job else wait_jobs(client, ids)
        finished_s = time.perf_counter() - total.started
        fetches = [
            (job_id, n)
            for job_id, group in zip(ids, groups, strict=True)
            for n in range(len(group))
        ]
        if as_files:
            downloads = list(pool.map(lambda item: download(client, *item), fetches))
        else:
            results = list(pool.map(lambda job_id: fetch_result(client, job_id), ids))
    checks = (
        check_files(files, downloads)
        if as_files
        else check_plain(files, [doc for docs in results for doc in docs])
    )
    finished = [jobs[job_id] for job_id in ids]
    engine_s = window_s(finished)
    record = {
        "jobs": len(ids),
        "submit_s": round(submitted_s, 3),
        "all_finished_s": round(finished_s, 3),
        "e2e_s": round(total.elapsed, 3),
        "engine_window_s": engine_s,
        "files_per_s_wall": round(len(files) / total.elapsed, 2),
        "files_per_s_engine": round(len(files) / engine_s, 2) if engine_s else None,
        "job_statuses": dict(Counter(j["status"] for j in finished)),
        "job_errors": [j["error"] for j in finished if j["error"]][:MAX_EXAMPLES],
        "checks": checks,
    }
    return record


# ---------------------------------------------------------------- checks


def bold_tags(content: bytes) -> int:
    return len(re.findall(rb"<b>", content))


def check_files(files: Sequence[File], outputs: Sequence[bytes | None]) -> dict[str, Any]:
    """Every file downloaded, non-empty, translated (not its source); HTML keeps its ``<b>``."""
    problems: Counter[str] = Counter()
    examples: list[str] = []
    for file, out in zip(files, outputs, strict=True):
        found = (
            "not downloaded"
            if out is None
            else "empty"
            if not out
            else "unchanged"
            if out == file.content
            else BOLD_CHANGED
            if file.format == "html" and bold_tags(out) != bold_tags(file.content)
            else None
        )
        if found:
            problems[found] += 1
            if len(examples) < MAX_EXAMPLES:
                examples.append(f"{file.name}: {found}")
    return {
        "files": len(files),
        "ok": len(files) - problems.total(),
        **problem_dict(problems, examples),
    }


def check_plain(files: Sequence[File], outputs: Sequence[list[str | None]]) -> dict[str, Any]:
    """Every segment of every document translated."""
    missing = sum(
        len(f.sentences) - sum(1 for s in out if s) for f, out in zip(files, outputs, strict=True)
    )
    return {"segments": sum(len(f.sentences) for f in files), "untranslated": missing}


def problem_dict(problems: Counter[str], examples: list[str]) -> dict[str, Any]:
    return {"problems": dict(problems), "examples": examples} if problems else {}


# ---------------------------------------------------------------- the old design


def apertium_html(content: bytes) -> bytes:
    """``apertium -u -f html MODE`` over one file in one fresh process."""
    done = subprocess.run(
        ["apertium", "-u", "-f", "html", APERTIUM_MODE],
        input=content,
        capture_output=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def run_old_design(files: list[File], parallel: int) -> dict[str, Any]:
    """Every HTML file through its own ``apertium -f html`` process, ``parallel`` at once."""
    with ThreadPoolExecutor(parallel) as pool, Stopwatch() as watch:
        outputs = list(pool.map(lambda f: apertium_html(f.content), files))
    return {
        "parallel": parallel,
        "seconds": round(watch.elapsed, 3),
        "checks": check_files(files, outputs),
    }


# ---------------------------------------------------------------- main


def server_settings(workers: int) -> dict[str, str]:
    """As bench/bulk.py's embedded deployment: ``workers`` warm pipelines busy at once."""
    return {
        "DRAGOMAN_CPU_MAX_WORKERS": str(workers),
        "DRAGOMAN_APERTIUM_PIPELINES_PER_PAIR": str(workers),
    }


def warm_up(url: str, files: list[File]) -> float:
    """One small file job and one small plain job, so every pipeline has started."""
    sample = files[: 2 * WORKERS]
    with Stopwatch() as watch:
        run_scenario(url, sample, as_files=True, one_job=False)
        run_scenario(url, sample, as_files=False, one_job=False)
    return round(watch.elapsed, 3)


SCENARIOS = [
    ("files_one_job", True, True),
    ("plain_one_job", False, True),
    ("files_100_jobs", True, False),
    ("plain_100_jobs", False, False),
]


def measure_run(index: int, files: list[File], workers: int) -> dict[str, Any]:
    """One server: warm-up, then every scenario (order alternating between runs), then the
    HTML files alone; then the old design, with the server gone."""
    record: dict[str, Any] = {"load_1m_at_start": os.getloadavg()[0]}
    order = SCENARIOS if index % 2 == 0 else SCENARIOS[::-1]
    record["order"] = [name for name, *_ in order]
    html_files = [f for f in files if f.format == "html"]
    with dragoman_server(server_settings(workers)) as server:
        record["warm_up_s"] = warm_up(server.url, files)
        for name, as_files, one_job in order:
            record[name] = run_scenario(server.url, files, as_files=as_files, one_job=one_job)
            print(f"  {name}: {record[name]['e2e_s']:.2f}s", flush=True)
        if html_files:
            record["html_one_job"] = run_scenario(
                server.url, html_files, as_files=True, one_job=True
            )
    record["server"] = server.info
    if html_files:
        record["old_design"] = [run_old_design(html_files, 1)]
        record["old_design"].append(run_old_design(html_files, OLD_DESIGN_PARALLEL))
    record["files_over_plain_one_job"] = ratio(
        record["files_one_job"]["e2e_s"], record["plain_one_job"]["e2e_s"]
    )
    record["files_over_plain_100_jobs"] = ratio(
        record["files_100_jobs"]["e2e_s"], record["plain_100_jobs"]["e2e_s"]
    )
    if html_files:
        html_s = record["html_one_job"]["e2e_s"]
        record["old_design_over_dragoman_html"] = {
            f"parallel_{old['parallel']}": ratio(old["seconds"], html_s)
            for old in record["old_design"]
        }
    return record


def spread(values: list[float]) -> dict[str, float]:
    return {
        "min": round(min(values), 3),
        "median": round(statistics.median(values), 3),
        "max": round(max(values), 3),
    }


def handler_costs(files: list[File]) -> dict[str, Any]:
    """In this process, per format: milliseconds per file to ``prepare`` it (parse, split into
    sentences), to prepare it ``unsegmented`` (parse only: ``segmentation=none``), and to
    ``rebuild`` it (its own segments as the translations): the share of the files' overhead
    that is the format handlers' own work."""
    seconds: dict[str, dict[str, list[float]]] = {}
    for file in files:
        fmt = for_file(file.name)
        with Stopwatch() as parse:
            prepared = prepare(
                fmt, file.content, filename=file.name, source_lang="en", segmentation=True
            )
        with Stopwatch() as extract:
            prepare(fmt, file.content, filename=file.name, source_lang="en", segmentation=False)
        with Stopwatch() as write:
            rebuild(
                fmt,
                file.content,
                filename=file.name,
                layout=prepared.layout,
                translations=prepared.segments,
                target_lang="es",
            )
        found = seconds.setdefault(file.format, {"prepare": [], "unsegmented": [], "rebuild": []})
        found["prepare"].append(parse.elapsed)
        found["unsegmented"].append(extract.elapsed)
        found["rebuild"].append(write.elapsed)
    costs: dict[str, Any] = {
        name: {
            f"{step}_ms_per_file": round(1000 * statistics.mean(t), 2) for step, t in steps.items()
        }
        for name, steps in seconds.items()
    }
    costs["all_files_s"] = {
        step: round(sum(sum(steps[step]) for steps in seconds.values()), 3)
        for step in ("prepare", "unsegmented", "rebuild")
    }
    return costs


def workload(files: list[File]) -> dict[str, Any]:
    by_format: dict[str, dict[str, int]] = {}
    for f in files:
        entry = by_format.setdefault(f.format, {"files": 0, "bytes": 0, "sentences": 0})
        entry["files"] += 1
        entry["bytes"] += len(f.content)
        entry["sentences"] += len(f.sentences)
    return {
        "files": len(files),
        "bytes": sum(len(f.content) for f in files),
        "sentences": sum(len(f.sentences) for f in files),
        "sentence_chars": sum(len(s) for f in files for s in f.sentences),
        "by_format": by_format,
        "seed": SEED,
    }


def bold_kept(checks: dict[str, Any]) -> int:
    """How many of the checked HTML files kept their number of ``<b>`` tags."""
    changed: int = checks.get("problems", {}).get(BOLD_CHANGED, 0)
    return int(checks["files"]) - changed


def measure(formats: list[str], runs: int, workers: int) -> dict[str, Any]:
    files = build_files(load_corpus(), formats)
    records = []
    for index in range(runs):
        print(f"run {index + 1}/{runs}", flush=True)
        records.append(measure_run(index, files, workers))

    def median(*path: str) -> float:
        values: list[float] = []
        for record in records:
            value: Any = record
            for key in path:
                value = value[key]
            values.append(value)
        return round(statistics.median(values), 3)

    one = median("files_over_plain_one_job")
    many = median("files_over_plain_100_jobs")
    result: dict[str, Any] = {
        "workload": workload(files),
        "handler_costs": handler_costs(files),
        "formats": formats,
        "formats_left_out": [name for name in MIX if name not in formats],
        "parameters": {
            "runs": runs,
            "workers": workers,
            "settings": server_settings(workers),
            "client_threads": CLIENT_THREADS,
            "job_poll_s": JOB_POLL_S,
            "list_poll_s": LIST_POLL_S,
        },
        "e2e_s": {name: spread([r[name]["e2e_s"] for r in records]) for name, *_ in SCENARIOS},
        "files_over_plain": {
            "one_job": one,
            "100_jobs": many,
            "target_max": FILES_OVER_PLAIN_TARGET_MAX,
            "met": max(one, many) <= FILES_OVER_PLAIN_TARGET_MAX,
        },
        # Where the time of a scenario goes: submitting (for files, the server parses and
        # segments them before it answers), the engine window, fetching after all finished.
        "breakdown_s": {
            name: {
                "submit": median(name, "submit_s"),
                "engine_window": median(name, "engine_window_s"),
                "fetch": round(
                    statistics.median(
                        r[name]["e2e_s"] - r[name]["all_finished_s"] for r in records
                    ),
                    3,
                ),
            }
            for name, *_ in SCENARIOS
        },
        "files_per_s": {
            "one_worker_engine_window": median("files_one_job", "files_per_s_engine"),
            "one_worker_wall": median("files_one_job", "files_per_s_wall"),
            "server_100_jobs_engine_window": median("files_100_jobs", "files_per_s_engine"),
            "server_100_jobs_wall": median("files_100_jobs", "files_per_s_wall"),
        },
    }
    if "html" in formats:
        result["html"] = {
            "files": sum(f.format == "html" for f in files),
            "dragoman_one_job_s": median("html_one_job", "e2e_s"),
            "old_design_sequential_s": round(
                statistics.median(r["old_design"][0]["seconds"] for r in records), 3
            ),
            "old_design_parallel_s": round(
                statistics.median(r["old_design"][1]["seconds"] for r in records), 3
            ),
            "bold_kept": {
                "dragoman": bold_kept(records[-1]["html_one_job"]["checks"]),
                "old_design": bold_kept(records[-1]["old_design"][0]["checks"]),
            },
            "old_design_over_dragoman_html": {
                key: round(
                    statistics.median(r["old_design_over_dragoman_html"][key] for r in records), 3
                )
                for key in records[0]["old_design_over_dragoman_html"]
            },
        }
    result["runs"] = records
    return result


def summarize(result: dict[str, Any]) -> str:
    work, e2e, over, rate = (
        result["workload"],
        result["e2e_s"],
        result["files_over_plain"],
        result["files_per_s"],
    )
    mix = ", ".join(f"{n} {f['files']}" for n, f in work["by_format"].items())
    lines = [
        f"{work['files']} files ({mix}), {work['bytes'] / 1024:.0f} KiB, "
        f"{work['sentences']} sentences; {result['parameters']['runs']} run(s), "
        f"{result['parameters']['workers']} workers",
    ]
    if result["formats_left_out"]:
        lines.append(f"left out: {', '.join(result['formats_left_out'])}")
    for name, *_ in SCENARIOS:
        part = result["breakdown_s"][name]
        lines.append(
            f"  {name:15} {span(e2e[name])}: submit {part['submit']:.2f}s, engine window "
            f"{part['engine_window']:.2f}s, fetch after the last finished {part['fetch']:.2f}s"
        )
    lines.append(
        f"files/plain: one job {over['one_job']}, 100 jobs {over['100_jobs']} "
        f"(target ≤ {over['target_max']}: {'met' if over['met'] else 'NOT met'})"
    )
    lines.append(
        f"files/s: one worker {rate['one_worker_engine_window']} (engine window), "
        f"{rate['one_worker_wall']} (wall); server, 100 jobs "
        f"{rate['server_100_jobs_engine_window']} / {rate['server_100_jobs_wall']}"
    )
    if "html" in result:
        found = result["html"]
        lines.append(
            f"html ({found['files']} files): dragoman one job {found['dragoman_one_job_s']:.2f}s, "
            f"apertium -f html per file {found['old_design_sequential_s']:.2f}s sequential, "
            f"{found['old_design_parallel_s']:.2f}s 2 at a time; old/dragoman "
            f"{found['old_design_over_dragoman_html']}"
        )
        lines.append(
            f"  <b> count kept: dragoman {found['bold_kept']['dragoman']}, "
            f"apertium -f html {found['bold_kept']['old_design']} of {found['files']} files"
        )
    costs = result["handler_costs"]["all_files_s"]
    lines.append(
        f"handlers, in process, all files: prepare {costs['prepare']:.2f}s "
        f"(unsegmented {costs['unsegmented']:.2f}s), rebuild {costs['rebuild']:.2f}s"
    )
    problems = [
        f"{name} {record[name]['checks']}"
        for record in result["runs"]
        for name in (*(n for n, *_ in SCENARIOS), "html_one_job")
        if name in record
        and (record[name]["checks"].get("problems") or record[name]["checks"].get("untranslated"))
    ]
    errors = [r["server"].get("log_errors", 0) for r in result["runs"]]
    lines.append(f"check problems: {problems or 'none'}; server log errors: {errors}")
    return "\n".join(lines)


def span(figures: dict[str, float]) -> str:
    return f"{figures['median']:.2f}s ({figures['min']:.2f}-{figures['max']:.2f})"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--runs", type=int, default=1, help="repetitions, reported as min/median/max"
    )
    parser.add_argument(
        "--workers", type=int, default=WORKERS, help="engine pipelines busy at once"
    )
    parser.add_argument(
        "--formats",
        default=",".join(MIX),
        help=f"comma-separated formats in the mix (default: all of {', '.join(MIX)})",
    )
    args = parser.parse_args()
    args.formats = [name.strip() for name in args.formats.split(",") if name.strip()]
    unknown = [name for name in args.formats if name not in MIX]
    if unknown or not args.formats:
        parser.error(f"--formats: unknown {unknown}; choose from {', '.join(MIX)}")
    if args.runs < 1 or args.workers < 1:
        parser.error("--runs and --workers must be at least 1")
    return args


def main() -> None:
    args = parse_args()
    report(NAME, measure(args.formats, args.runs, args.workers), summarize)


if __name__ == "__main__":
    main()
