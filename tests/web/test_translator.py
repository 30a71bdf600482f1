"""The translator page, as a person uses it: text as you type, languages, swap, copy, a
shareable URL, the keyboard alone, a phone; files up, progress, downloads read back."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, urlparse

import lxml.html
import polib
import pytest
from playwright.sync_api import Page, expect

from tests.integration.conftest import cli, squash
from tests.integration.server import Server
from tests.web.conftest import PHONE, Tab, assert_accessible, assert_fits, serve

HTML = b"""<!DOCTYPE html>
<html><head><title>The red house</title></head>
<body><h1>The red house</h1><p>The cat sleeps on a <b>warm</b> chair.</p>
<p>People read books about history.</p></body></html>
"""
PO = b"""msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

msgid "The house is red."
msgstr ""

msgid "Open the window"
msgstr ""
"""
HOSTILE = "<script>alert(1)</script>.po"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve(tmp_path_factory, DRAGOMAN_CPU_MAX_WORKERS="2")


def choose(page: Page, source: str, target: str) -> None:
    page.get_by_label("Source language").select_option(source)
    page.get_by_label("Target language").select_option(target)


def translation(page: Page) -> str:
    return page.get_by_label("Translation", exact=True).inner_text()


def test_typing_translates_and_the_address_shares_it(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    page = open_tab(server.url + "/").page
    choose(page, "en", "es")
    page.get_by_label("Source text").press_sequentially("Hello world.", delay=20)
    expect(page.get_by_label("Translation", exact=True)).to_have_text(
        squash(cli("eng-spa", "Hello world."))
    )
    expect(page.locator("#count")).to_have_text("12 / 10,000")
    query = parse_qs(urlparse(page.url).query)
    assert query == {"source": ["en"], "target": ["es"], "q": ["Hello world."]}
    assert_accessible(page)

    shared = open_tab(page.url).page
    expect(shared.get_by_label("Source language")).to_have_value("en")
    expect(shared.get_by_label("Source text")).to_have_value("Hello world.")
    expect(shared.get_by_label("Translation", exact=True)).to_have_text("Hola Mundo.")


def test_unknown_words_are_marked_only_when_asked_in_text_and_files(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    page = open_tab(server.url + "/?source=en&target=es").page
    output = page.get_by_label("Translation", exact=True)
    page.get_by_label("Source text").fill("The zorblax sleeps.")
    page.get_by_role("button", name="Translate", exact=True).click()
    expect(output).to_contain_text("zorblax")
    expect(output).not_to_contain_text("*")
    page.get_by_label("Mark unknown words").check()
    expect(output).to_contain_text("*zorblax")
    assert parse_qs(urlparse(page.url).query)["marks"] == ["1"]
    page.get_by_label("Files").set_input_files(
        [{"name": "z.html", "mimeType": "text/html", "buffer": b"<p>The zorblax sleeps.</p>"}]
    )
    page.get_by_role("button", name="Translate files").click()
    link = page.get_by_role("link", name=re.compile("^Download"))
    expect(link).to_have_count(1, timeout=30_000)
    with page.expect_download() as download:
        link.click()
    assert "*zorblax" in download.value.path().read_text(encoding="utf-8")
    # A shared address keeps the choice.
    again = open_tab(page.url).page
    expect(again.get_by_label("Mark unknown words")).to_be_checked()


def test_each_line_is_translated_and_auto_detects_the_language(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    page = open_tab(server.url + "/").page
    choose(page, "auto", "es")
    text = "Le chat dort sur une chaise.\n\nLes gens lisent des livres."
    page.get_by_label("Source text").fill(text)
    page.get_by_role("button", name="Translate", exact=True).click()
    expected = "\n".join(squash(cli("fr-es", line)) if line else "" for line in text.split("\n"))
    expect(page.get_by_label("Translation", exact=True)).to_have_text(expected)
    expect(page.locator("#detected")).to_contain_text("French")


def test_the_targets_follow_the_source_and_swap_turns_the_pair_round(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    page = open_tab(server.url + "/?source=fr&target=es&q=Bonjour.").page
    targets = page.get_by_label("Target language").locator("option")
    expect(targets).to_have_count(2)  # fr → es, and fr → en through es
    expect(page.get_by_label("Translation", exact=True)).to_have_text(
        squash(cli("fr-es", "Bonjour."))
    )
    page.get_by_role("button", name="Swap languages").click()
    expect(page.get_by_label("Source language")).to_have_value("es")
    expect(page.get_by_label("Target language")).to_have_value("fr")
    expect(page.get_by_label("Source text")).to_have_value(squash(cli("fr-es", "Bonjour.")))
    expect(page.get_by_label("Translation", exact=True)).not_to_be_empty()


def test_an_error_of_the_api_is_shown_in_its_words(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    # 101 lines: one more than DRAGOMAN_SYNC_MAX_SEGMENTS; the server refuses with 413.
    tab = open_tab(
        server.url + "/?source=en&target=es",
        allowed=lambda error: "status of 413" in error,
    )
    page = tab.page
    page.get_by_label("Source text").fill("\n".join(f"Line {i}." for i in range(101)))
    page.get_by_role("button", name="Translate", exact=True).click()
    expect(page.locator("#text-error")).to_contain_text("(payload_too_large)")
    expect(page.locator("#text-error")).to_contain_text("100")


def tab_to(page: Page, selector: str, presses: int = 40) -> None:
    """Presses Tab until ``selector`` has the focus: it is reachable by keyboard."""
    target = page.locator(selector)
    for _ in range(presses):
        if target.evaluate("element => element === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{selector} not reached with the Tab key")


def test_the_translator_works_with_the_keyboard_alone(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    tab = open_tab(server.url + "/")
    page = tab.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    expect(page.get_by_label("Source language").locator("option")).not_to_have_count(0)
    tab_to(page, "#source")
    page.keyboard.press("End")  # the last source in the list
    tab_to(page, "#target")
    tab_to(page, "#source-text")
    page.keyboard.type("The house is red.")
    page.keyboard.press("Control+Enter")
    source = page.get_by_label("Source language").input_value()
    target = page.get_by_label("Target language").input_value()
    assert source != "auto"
    expect(page.get_by_label("Translation", exact=True)).not_to_be_empty()
    tab_to(page, "#copy")
    page.keyboard.press("Enter")
    expect(page.locator("#copied")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == translation(page)
    tab_to(page, "#swap")
    page.keyboard.press("Enter")
    expect(page.get_by_label("Source language")).to_have_value(target)
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"


def test_a_phone_sized_screen_gets_the_whole_translator(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    page = open_tab(server.url + "/?source=en&target=es&q=Good+morning.", viewport=PHONE).page
    expect(page.get_by_label("Translation", exact=True)).not_to_be_empty()
    assert_fits(page)
    assert_accessible(page)
    box = page.get_by_label("Source text").bounding_box()
    assert box is not None and box["width"] <= PHONE["width"]


def test_files_are_uploaded_followed_and_downloaded_translated(
    server: Server, open_tab: Callable[..., Tab]
) -> None:
    page = open_tab(server.url + "/?source=en&target=es").page
    expect(page.locator("#formats")).to_contain_text(".po")
    page.get_by_label("Files").set_input_files(
        [
            {"name": "house.html", "mimeType": "text/html", "buffer": HTML},
            {"name": HOSTILE, "mimeType": "text/x-gettext-translation", "buffer": PO},
        ]
    )
    expect(page.locator("#chosen li")).to_have_count(2)
    page.get_by_role("button", name="Translate files").click()
    job = page.locator(".file-job").first
    expect(job.get_by_role("progressbar")).to_be_visible()
    links = page.get_by_role("link", name=re.compile("^Download"))
    expect(links).to_have_count(2, timeout=30_000)
    progress = job.get_by_role("progressbar")
    assert progress.get_attribute("value") == progress.get_attribute("max")
    # The hostile name is text, not markup: it reads as typed and ran nothing.
    expect(job).to_contain_text(HOSTILE)
    assert page.locator("script:not([src])").count() == 0

    with page.expect_download() as html_download:
        links.nth(0).click()
    assert html_download.value.suggested_filename == "house.es.html"
    tree = lxml.html.fromstring(html_download.value.path().read_text(encoding="utf-8"))
    assert squash(tree.findtext(".//title")) == squash(cli("eng-spa", "The red house"))
    paragraph = tree.find(".//p").text_content()
    assert squash(paragraph) == squash(cli("eng-spa", "The cat sleeps on a warm chair."))
    assert tree.find(".//p/b") is not None  # the markup came back around a word

    with page.expect_download() as po_download:
        links.nth(1).click()
    entries = {e.msgid: e.msgstr for e in polib.pofile(po_download.value.path().read_text())}
    assert entries["The house is red."] == squash(cli("eng-spa", "The house is red."))
    assert entries["Open the window"] == squash(cli("eng-spa", "Open the window"))

    page.get_by_text("Partial results").click()
    expect(job.locator(".partial-doc")).to_have_count(2)
    expect(job.locator(".partial-doc").nth(1).get_by_role("heading")).to_have_text(HOSTILE)
    assert_accessible(page)
