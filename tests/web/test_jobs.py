"""The jobs page and a job's page: the tenant's jobs newest first, filtered, live progress,
cancel, partial results beside the source, a failed job's reason, names shown as text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.integration.conftest import cli, squash
from tests.integration.server import Server
from tests.web.conftest import PHONE, Tab, assert_accessible, assert_fits, finished, serve, wait_for

HOSTILE = '<script>alert("job")</script><img src=x onerror=alert(2)>'
# Slow enough to watch and cancel: one worker, one pipeline, small chunks.
SLOW_SEGMENTS = 20_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve(
        tmp_path_factory,
        DRAGOMAN_CPU_MAX_WORKERS="1",
        DRAGOMAN_APERTIUM_PIPELINES_PER_PAIR="1",
        DRAGOMAN_CHUNK_SEGMENTS="100",
    )


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as made:
        yield made


def submit(client: httpx.Client, name: str, segments: list[str]) -> dict[str, Any]:
    body = {
        "source_lang": "en",
        "target_lang": "es",
        "documents": [{"name": name, "segments": segments}],
    }
    response = client.post("/v1/jobs", json=body)
    assert response.status_code == 202, response.text
    job: dict[str, Any] = response.json()
    return job


def slow_segments() -> list[str]:
    return [f"The house number {i} is red and the garden is green." for i in range(SLOW_SEGMENTS)]


def test_the_jobs_page_lists_the_jobs_newest_first_and_filters_them(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab]
) -> None:
    first = finished(client, submit(client, "one.txt", ["Good morning."])["id"])
    second = finished(client, submit(client, "two.txt", ["Good night."])["id"])
    page = open_tab(server.url + "/jobs").page
    table = page.get_by_role("table", name="Jobs")
    rows = table.locator("tbody tr")
    expect(rows.first).to_be_visible()
    ids = rows.evaluate_all("rows => rows.map(row => row.dataset.id)")
    assert ids.index(second["id"]) < ids.index(first["id"])
    row = table.locator(f'tr[data-id="{second["id"]}"]')
    expect(row).to_contain_text("succeeded")
    expect(row.get_by_role("progressbar")).to_have_attribute("value", "1")
    expect(row.get_by_role("button", name="Cancel")).to_have_count(0)
    assert_accessible(page)

    page.get_by_label("Status").select_option("cancelled")
    expect(page).to_have_url(server.url + "/jobs?status=cancelled")
    expect(table.locator(f'tr[data-id="{second["id"]}"]')).to_have_count(0)
    page.get_by_label("Status").select_option("succeeded")
    expect(table.locator(f'tr[data-id="{second["id"]}"]')).to_have_count(1)

    # Jobs made within a minute share their first digits: the short form is the last ones.
    page.get_by_role("link", name="…" + second["id"][-8:], exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Job {second['id']}")
    cells = page.locator("table.side-by-side tbody td")
    expect(cells.nth(1)).to_have_text("Good night.")
    expect(cells.nth(2)).to_have_text(squash(cli("eng-spa", "Good night.")))
    assert_accessible(page)


def test_a_slow_job_moves_live_and_is_cancelled_from_the_list(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab]
) -> None:
    job = submit(client, "slow.txt", slow_segments())
    page = open_tab(server.url + "/jobs").page
    row = page.get_by_role("table", name="Jobs").locator(f'tr[data-id="{job["id"]}"]')
    expect(row).to_contain_text("running", timeout=20_000)
    bar = row.get_by_role("progressbar")
    wait_for(lambda: int(bar.get_attribute("value") or 0) >= 200, what="progress to move")
    row.get_by_role("button", name="Cancel").click()
    expect(row).to_contain_text("cancelled")
    expect(row.get_by_role("button", name="Cancel")).to_have_count(0)
    cancelled = client.get(f"/v1/jobs/{job['id']}").json()
    assert cancelled["status"] == "cancelled"
    assert 0 < cancelled["segments_done"] < SLOW_SEGMENTS


def test_the_job_page_shows_partial_results_beside_the_source_and_cancels(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab]
) -> None:
    job = submit(client, HOSTILE, slow_segments())
    try:
        # The tab opens blank: every request counted is the job page's own (a job page
        # opened first may still be starting its stream as the count begins).
        page = open_tab("about:blank").page
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(server.url + f"/jobs/{job['id']}")
        # The name is user input: it reads as typed, and nothing in it ran.
        expect(page.get_by_role("heading", name=HOSTILE, exact=True)).to_be_visible()
        assert page.locator("script:not([src]), img[src='x']").count() == 0
        expect(page.locator("#summary")).to_contain_text("running", timeout=20_000)
        rows = page.locator("table.side-by-side tbody tr")
        first = slow_segments()[0]
        expect(rows.first.locator("td").nth(1)).to_have_text(first)
        expect(rows.first.locator("td").nth(2)).to_have_text(squash(cli("eng-spa", first)))
        page.get_by_role("button", name="Last segments").click()
        expect(page.locator(".pager")).to_contain_text(f"of {SLOW_SEGMENTS:,}")
        expect(rows.last.locator("td").nth(1)).to_have_text(slow_segments()[-1])
        expect(rows.last.locator("td").nth(2)).to_have_text("not yet")
        assert_accessible(page)
        # The page moved with the job's events: one read of the job, one stream, no polling.
        expect(page.locator("#summary")).not_to_contain_text("Progress 0 ", timeout=20_000)
        job_url = f"{server.url}/v1/jobs/{job['id']}"
        assert requested.count(job_url) == 1 and requested.count(job_url + "/events") == 1
        page.get_by_role("button", name="Cancel").click()
        expect(page.locator("#summary")).to_contain_text("cancelled")
        expect(page.get_by_role("button", name="Cancel")).to_be_hidden()
    finally:
        client.delete(f"/v1/jobs/{job['id']}")


def test_the_pages_fit_a_phone_and_a_missing_job_is_said_to_be_missing(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab]
) -> None:
    job = submit(client, "short.txt", ["A short one."])
    finished(client, job["id"])
    tab = open_tab(server.url + "/jobs", viewport=PHONE)
    expect(tab.page.get_by_role("table", name="Jobs").locator("tbody tr").first).to_be_visible()
    assert_fits(tab.page)
    assert_accessible(tab.page)
    tab.page.goto(server.url + f"/jobs/{job['id']}")
    expect(tab.page.locator("#summary")).to_contain_text("succeeded")
    assert_fits(tab.page)

    missing = open_tab(server.url + "/jobs/no-such-job", allowed=lambda e: "404" in e).page
    expect(missing.locator("#job-error")).to_contain_text("(not_found)")


def test_an_unreachable_server_and_a_store_that_is_down_are_a_banner(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    tab = open_tab(server.url + "/jobs", allowed=lambda error: "Failed to load resource" in error)
    page = tab.page
    expect(page.get_by_role("table", name="Jobs")).to_be_visible()
    banner = page.get_by_role("alert")
    # The connection fails as it does when the server is gone; then the server is back.
    page.route("**/v1/jobs?*", lambda route: route.abort("connectionrefused"))
    expect(banner).to_contain_text("The server does not answer")
    page.unroute("**/v1/jobs?*")
    expect(page.locator("#banner")).to_be_empty()
    # What every route answers while the database is unreachable (tests/api check it).
    store_down = {"error": {"code": "store_unavailable", "message": "database unavailable"}}
    page.route(
        "**/v1/jobs?*",
        lambda route: route.fulfill(status=503, json=store_down, headers={"Retry-After": "5"}),
    )
    expect(banner).to_contain_text("database unavailable (store_unavailable)")
    assert_accessible(page)
