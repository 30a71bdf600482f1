"""Browser tests: Debian's Chromium, driven by Playwright, against a real ``dragoman serve``
with Apertium. One server and one browser per module; a fresh context (so a fresh session
storage) per test."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from tests.integration.server import Server

CHROMIUM = "/usr/bin/chromium"
# Without these, Chromium on a machine with no outside network stalls on connections.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
AXE = Axe()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


def serve(tmp_path_factory: pytest.TempPathFactory, **env: str) -> Iterator[Server]:
    """A ``dragoman serve`` for one module, stopped at its end."""
    base = tmp_path_factory.mktemp("serve")
    server = Server(base / "data", **{"DRAGOMAN_LOG_LEVEL": "WARNING", **env})
    with server:
        yield server


@dataclass
class Tab:
    """A page and what went wrong in it: console errors, uncaught exceptions, dialogs."""

    page: Page
    errors: list[str] = field(default_factory=list)

    def assert_clean(self, allowed: Callable[[str], bool] = lambda _: False) -> None:
        assert [e for e in self.errors if not allowed(e)] == []


@pytest.fixture
def open_tab(browser: Browser) -> Iterator[Callable[..., Tab]]:
    """Opens a page in a new context; at the end, no console error may have been logged."""
    tabs: list[tuple[Tab, Callable[[str], bool]]] = []

    def open_(
        url: str,
        *,
        viewport: dict[str, int] = DESKTOP,
        allowed: Callable[[str], bool] = lambda _: False,
    ) -> Tab:
        context = browser.new_context(viewport=viewport, accept_downloads=True)
        page = context.new_page()
        tab = Tab(page)

        def console(message: ConsoleMessage) -> None:
            if message.type == "error":
                tab.errors.append(f"console: {message.text}")

        page.on("console", console)
        page.on("pageerror", lambda error: tab.errors.append(f"uncaught: {error}"))
        page.on("dialog", lambda dialog: tab.errors.append(f"dialog: {dialog.message}"))
        page.set_default_timeout(20_000)
        page.goto(url)
        tabs.append((tab, allowed))
        return tab

    yield open_
    for tab, allowed in tabs:
        context = tab.page.context
        context.close()
        tab.assert_clean(allowed)


def assert_accessible(page: Page) -> None:
    """axe-core finds nothing serious or critical on the page as it is now."""
    results = AXE.run(page)
    found = [
        f"{violation['id']} ({violation['impact']}): {[n['target'] for n in violation['nodes']]}"
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
    ]
    assert found == []


def assert_fits(page: Page) -> None:
    """Nothing makes the page scroll sideways (wide tables scroll inside their own box)."""
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], widths


def wait_for(predicate: Callable[[], Any], timeout_s: float = 20, what: str = "") -> Any:
    """Polls ``predicate`` until it returns something true; that value."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what or predicate}"
        time.sleep(0.1)


def finished(client: httpx.Client, job_id: str, timeout_s: float = 60) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        job: dict[str, Any] = client.get(f"/v1/jobs/{job_id}").json()
        return job if job["status"] in ("succeeded", "failed", "cancelled") else None

    result: dict[str, Any] = wait_for(done, timeout_s, f"job {job_id} to finish")
    return result


def number(text: str) -> float:
    """A figure as the pages write it: "1,024" → 1024.0, "—" → nan."""
    cleaned = re.sub(r"[,\s%]", "", text)
    return float(cleaned) if cleaned not in ("", "—") else float("nan")
