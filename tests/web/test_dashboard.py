"""The dashboard shows what the service knows: in the embedded service, where one process
has every figure, its numbers are those of ``/metrics``; a failed job's reason is shown."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.conftest import MODES_DIR
from tests.integration.server import Server
from tests.web.conftest import (
    PHONE,
    Tab,
    assert_accessible,
    assert_fits,
    finished,
    number,
    serve,
    wait_for,
)

# Jobs of de → en fail at once: the pair's mode runs a program that exits on start.
BROKEN_PAIR = ("de", "en")


@pytest.fixture(scope="module")
def modes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("modes")
    for name in ("eng-spa.mode", "fr-es.mode"):
        (folder / name).symlink_to(MODES_DIR / name)
    (folder / "deu-eng.mode").write_text("sleep 600\n")
    return folder


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, modes: Path) -> Iterator[Server]:
    yield from serve(
        tmp_path_factory,
        DRAGOMAN_APERTIUM_MODES_DIR=str(modes),
        DRAGOMAN_CPU_MAX_WORKERS="2",
        DRAGOMAN_CPU_SCALE_DOWN_DELAY_S="3600",  # every worker that worked stays live
        DRAGOMAN_MAX_ATTEMPTS="1",
        DRAGOMAN_CHUNK_SEGMENTS="256",
    )


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as made:
        yield made


def submit(
    client: httpx.Client, segments: list[str], pair: tuple[str, str] = ("en", "es"), **extra: Any
) -> str:
    body = {
        "source_lang": pair[0],
        "target_lang": pair[1],
        "documents": [{"name": "a.txt", "segments": segments}],
        **extra,
    }
    response = client.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["id"]
    return job_id


def metrics(client: httpx.Client) -> dict[str, float]:
    """The pool cpu's figures as /metrics has them, named as the dashboard names them."""
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value

    def total(name: str, **labels: str) -> float:
        return sum(
            value
            for (sample, have), value in samples.items()
            if sample == name and set(labels.items()) <= set(have)
        )

    warm = total("dragoman_routed_total", pool="cpu", outcome="warm")
    routed = total("dragoman_routed_total", pool="cpu")
    # Every engine call of this server is a worker's: no /v1/translate is made here.
    batches = total("dragoman_engine_batch_size_count")
    return {
        "workers-desired": total("dragoman_workers_desired", pool="cpu"),
        "workers-current": total("dragoman_workers_current", pool="cpu"),
        "workers-busy": total("dragoman_workers_busy", pool="cpu"),
        "jobs-queued": total("dragoman_queue_depth", pool="cpu"),
        "jobs-in-flight": total("dragoman_in_flight", pool="cpu"),
        "jobs-at-risk": total("dragoman_jobs_at_risk", pool="cpu"),
        "segments-translated": total("dragoman_segments_translated_total", pool="cpu"),
        "batches": batches,
        "batch-mean": total("dragoman_engine_batch_size_sum") / batches,
        "routing-ratio": 100 * warm / routed,
        "routing-warm": warm,
        "routing-total": routed,
    }


def shown(region: Locator) -> dict[str, float]:
    figures = dict(
        region.locator("[data-figure]").evaluate_all(
            "nodes => nodes.map(node => [node.dataset.figure, node.textContent])"
        )
    )
    warm, routed = figures.pop("routing-counts").split("/")
    return {
        **{name: number(text) for name, text in figures.items()},
        "routing-warm": number(warm),
        "routing-total": number(routed),
    }


GAUGES = (
    "workers-desired",
    "workers-current",
    "workers-busy",
    "jobs-queued",
    "jobs-in-flight",
    "jobs-at-risk",
)
# Shown rounded to 0.1 and to 1 %: JavaScript and Python may round a half differently.
TOLERANCE = {"batch-mean": 0.051, "routing-ratio": 0.51}


def matching(page: Page, client: httpx.Client, names: tuple[str, ...] = ()) -> Any:
    """The figures when the dashboard and /metrics agree on each of ``names`` (all when
    empty), else None."""
    expected = metrics(client)
    seen = shown(page.get_by_role("region", name="Pool cpu"))
    same = all(
        math.isclose(seen[name], value, abs_tol=TOLERANCE.get(name, 1e-9))
        for name, value in expected.items()
        if not names or name in names
    )
    return {"metrics": expected, "dashboard": seen} if same else None


def test_the_dashboard_numbers_are_those_of_metrics(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab]
) -> None:
    for i in range(4):
        finished(client, submit(client, [f"Line {n} of job {i}." for n in range(600)]))
    failed = submit(client, ["Hallo Welt."], BROKEN_PAIR)
    assert finished(client, failed)["status"] == "failed"
    page = open_tab(server.url + "/dashboard").page
    expect(page.get_by_role("region", name="Pool gpu")).to_be_visible()
    agreed = wait_for(lambda: matching(page, client), 20, "the dashboard to match /metrics")
    assert agreed["dashboard"]["segments-translated"] >= 2400
    assert agreed["dashboard"]["batches"] > 0

    # With work in flight, the gauges agree too (counters move faster than a poll).
    slow = submit(client, [f"Sentence number {n} is here." for n in range(30_000)])

    def busy() -> Any:
        found = matching(page, client, GAUGES)
        working = found and found["dashboard"]["jobs-in-flight"] >= 1
        return found if working and found["dashboard"]["workers-busy"] >= 1 else None

    wait_for(busy, 30, "agreement while a job is in flight")
    chart = page.get_by_role("region", name="Pool cpu").get_by_role("img")
    peak = wait_for(
        lambda: number(chart.get_attribute("aria-label").split("peak ")[1].split()[0]) or None,
        10,
        "a rate",
    )
    assert peak > 0
    client.delete(f"/v1/jobs/{slow}")

    failures = page.get_by_role("region", name="Recent failures")
    expect(failures).to_contain_text(failed)
    expect(failures).to_contain_text("engine_error")
    expect(failures).to_contain_text("apertium pipeline exited")
    assert_accessible(page)


def test_jobs_at_risk_of_missing_their_deadline_are_counted_and_marked(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab]
) -> None:
    overdue = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
    late = submit(client, [f"Sentence {n} comes late." for n in range(30_000)], deadline=overdue)
    page = open_tab(server.url + "/dashboard").page
    expect(page.get_by_role("region", name="Pool gpu")).to_be_visible()

    def counted(expected: int) -> Any:
        found = matching(page, client, ("jobs-at-risk",))
        return found if found and found["dashboard"]["jobs-at-risk"] == expected else None

    wait_for(lambda: counted(1), 20, "the dashboard to count the job at risk")
    jobs = open_tab(server.url + "/jobs").page
    row = jobs.locator(f'tr[data-id="{late}"]')
    expect(row).to_contain_text("at risk")
    assert_accessible(jobs)
    client.delete(f"/v1/jobs/{late}")
    wait_for(lambda: counted(0), 20, "the count to fall back once the job ended")
    expect(row).not_to_contain_text("at risk")


def test_a_failed_job_page_gives_the_reason_as_the_api_words_it(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab]
) -> None:
    failed = finished(client, submit(client, ["Guten Tag."], BROKEN_PAIR))
    assert failed["status"] == "failed"
    page = open_tab(server.url + f"/jobs/{failed['id']}").page
    summary = page.locator("#summary")
    expect(summary).to_contain_text("failed")
    expect(summary).to_contain_text(failed["error"]["code"])
    expect(summary).to_contain_text(failed["error"]["message"])
    expect(page.locator("table.side-by-side tbody td").nth(2)).to_have_text("not yet")


def test_the_dashboard_fits_a_phone(server: Server, open_tab: Callable[..., Tab]) -> None:
    page = open_tab(server.url + "/dashboard", viewport=PHONE).page
    expect(
        page.get_by_role("region", name="Pool cpu").locator("[data-figure]").first
    ).not_to_have_text("—")
    assert_fits(page)
    assert_accessible(page)
