"""With API keys: the page asks for a key once and keeps it for the tab, sends it only in
the Authorization header, shows only that tenant's work; the dashboard needs an operator."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, Request, expect

from tests.integration.server import Server
from tests.web.conftest import Tab, assert_accessible, serve

KEYS = {"acme": "key-acme-1", "globex": "key-globex-2", "ops": "key-ops-3"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve(
        tmp_path_factory,
        DRAGOMAN_API_KEYS=",".join(f"{tenant}:{key}" for tenant, key in KEYS.items()),
        DRAGOMAN_OPERATOR_TENANTS="ops",
    )


def refused(error: str) -> bool:
    """The browser logs every 401, 403 and 404 the API answers; the page handles them."""
    return re.search(r"status of (401|403|404)", error) is not None


def enter_key(page: Page, key: str, *, accepted: bool = True) -> None:
    dialog = page.get_by_role("dialog", name="Authentication")
    expect(dialog).to_be_visible()
    dialog.get_by_label("API key").fill(key)
    dialog.get_by_role("button", name="Use key").click()
    if accepted:
        expect(dialog).to_be_hidden()


def test_the_key_is_asked_once_kept_for_the_tab_and_never_in_a_url(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    tab = open_tab(server.url + "/?source=en&target=es", allowed=refused)
    page = tab.page
    requests: list[Request] = []
    page.on("request", lambda request: requests.append(request))
    expect(page.get_by_role("dialog", name="Authentication")).to_contain_text("needs an API key")
    assert_accessible(page)
    enter_key(page, "not-a-key", accepted=False)
    expect(page.get_by_role("dialog", name="Authentication")).to_contain_text("The key was refused")
    enter_key(page, KEYS["acme"])
    expect(page.get_by_label("Target language")).to_have_value("es")
    page.get_by_label("Source text").fill("Good morning.")
    page.get_by_role("button", name="Translate", exact=True).click()
    expect(page.get_by_label("Translation", exact=True)).not_to_be_empty()

    page.reload()
    page.get_by_label("Source text").fill("Good night.")
    page.get_by_role("button", name="Translate", exact=True).click()
    expect(page.get_by_label("Translation", exact=True)).not_to_be_empty()
    expect(page.get_by_role("dialog", name="Authentication")).to_be_hidden()

    assert not [r.url for r in requests if any(key in r.url for key in KEYS.values())]
    calls = [r for r in requests if "/v1/translate" in r.url]
    assert calls and all(r.headers.get("authorization") == f"Bearer {KEYS['acme']}" for r in calls)
    # Another tab (another session) asks again.
    other = open_tab(server.url + "/", allowed=refused).page
    expect(other.get_by_role("dialog", name="Authentication")).to_be_visible()


def test_a_second_tenant_sees_none_of_the_first_ones_jobs(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    acme = open_tab(server.url + "/?source=en&target=es", allowed=refused).page
    enter_key(acme, KEYS["acme"])
    acme.get_by_label("Files").set_input_files(
        {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"The house is red.\n"}
    )
    acme.get_by_role("button", name="Translate files").click()
    link = acme.get_by_role("link", name=re.compile("^Download"))
    expect(link).to_have_count(1, timeout=30_000)
    with acme.expect_download() as download:  # fetched with the key, saved from memory
        link.click()
    assert download.value.path().read_text(encoding="utf-8").strip()
    job_url = acme.locator(".file-job a").first.get_attribute("href")
    assert job_url is not None
    acme.goto(server.url + "/jobs")
    expect(acme.get_by_role("table", name="Jobs").locator("tbody tr")).to_have_count(1)

    globex = open_tab(server.url + "/jobs", allowed=refused).page
    enter_key(globex, KEYS["globex"])
    expect(globex.locator("#jobs-empty")).to_be_visible()
    expect(globex.get_by_role("table", name="Jobs").locator("tbody tr")).to_have_count(0)
    globex.goto(server.url + job_url)
    expect(globex.locator("#job-error")).to_contain_text("(not_found)")


def test_the_fleet_needs_an_operators_key(server: Server, open_tab: Callable[..., Tab]) -> None:
    tenant = open_tab(server.url + "/dashboard", allowed=refused).page
    enter_key(tenant, KEYS["globex"])
    expect(tenant.locator("#fleet-error")).to_contain_text("(forbidden)")
    expect(tenant.locator("#fleet-error")).to_contain_text("operator")
    expect(tenant.get_by_role("region", name="Pool cpu")).to_have_count(0)

    operator = open_tab(server.url + "/dashboard", allowed=refused).page
    enter_key(operator, KEYS["ops"])
    region = operator.get_by_role("region", name="Pool cpu")
    expect(region.locator('[data-figure="workers-current"]')).to_have_text(re.compile(r"^\d+$"))
    expect(operator.locator("#fleet-error")).to_be_empty()
