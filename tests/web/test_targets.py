"""Jobs into several languages in the browser: the translator's files go into each language
ticked (those the source reaches), the job page shows each target's progress, its
translations one target at a time, and each target's files and zip, read back."""

from __future__ import annotations

import io
import os
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import FilePayload, Page, expect

from tests.integration.server import Server
from tests.web.conftest import PHONE, Tab, assert_accessible, assert_fits, finished, serve, wait_for

TARGETS = ["es", "ca", "fr"]  # en→fr goes through es
NOTES = b"Hello world.\nThe cat sleeps on the chair.\n"
PAGE = b"<html><body><h1>The red house</h1><p>Good morning.</p></body></html>\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from serve(
        tmp_path_factory,
        DRAGOMAN_CPU_MAX_WORKERS="2",
        DRAGOMAN_APERTIUM_PIPELINES_PER_PAIR="1",
        DRAGOMAN_CHUNK_SEGMENTS="50",
    )


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as made:
        yield made


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the pages' screenshots go: $DRAGOMAN_SCREENSHOTS, to look at them, else the
    test's own folder."""
    folder = Path(os.environ.get("DRAGOMAN_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def alone(client: httpx.Client, target: str, segments: list[str]) -> list[str]:
    """Each segment translated alone, through ``/v1/translate``."""
    body = {"source_lang": "en", "target_lang": target, "segments": segments}
    response = client.post("/v1/translate", json=body)
    assert response.status_code == 200, response.text
    translations: list[str] = response.json()["translations"]
    return translations


def file_job(client: httpx.Client, targets: list[str]) -> dict[str, Any]:
    files = [("files", ("notes.txt", NOTES)), ("files", ("house.html", PAGE))]
    form = {"source_lang": "en", "target_langs": ",".join(targets)}
    response = client.post("/v1/jobs", data=form, files=files)
    assert response.status_code == 202, response.text
    job: dict[str, Any] = response.json()
    return job


def upload(name: str, media_type: str, content: bytes) -> FilePayload:
    return {"name": name, "mimeType": media_type, "buffer": content}


def into(page: Page) -> Any:
    return page.get_by_role("group", name="Translate files into")


def test_files_need_a_language_ticked_and_the_choice_follows_the_source(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab]
) -> None:
    page = open_tab(server.url + "/?source=en&target=es").page
    boxes = into(page).get_by_role("checkbox")
    expect(boxes).to_have_count(len(alone_targets(client, "en")))
    # Until a box is touched, the files go where the text goes.
    expect(into(page).get_by_label("Spanish (es)")).to_be_checked()
    page.get_by_label("Target language").select_option("ca")
    expect(into(page).get_by_label("Catalan (ca)")).to_be_checked()
    expect(into(page).get_by_label("Spanish (es)")).not_to_be_checked()
    into(page).get_by_label("Catalan (ca)").uncheck()
    before = len(client.get("/v1/jobs").json()["jobs"])
    page.get_by_label("Files").set_input_files([upload("notes.txt", "text/plain", NOTES)])
    page.get_by_role("button", name="Translate files").click()
    expect(page.locator("#files-error")).to_have_text(
        "Tick at least one language to translate the files into."
    )
    assert len(client.get("/v1/jobs").json()["jobs"]) == before  # nothing was sent
    # A source reaches fewer languages: only those are offered, a ticked one kept.
    into(page).get_by_label("Spanish (es)").check()
    page.get_by_label("Source language").select_option("fr")
    expect(boxes).to_have_count(len(alone_targets(client, "fr")))
    expect(into(page).get_by_label("Spanish (es)")).to_be_checked()
    expect(into(page).get_by_label("Catalan (ca)")).to_have_count(0)
    assert_accessible(page)


def alone_targets(client: httpx.Client, source: str) -> set[str]:
    """The languages ``/v1/languages`` says ``source`` reaches."""
    pairs = client.get("/v1/languages").json()["pairs"]
    return {pair["target"] for pair in pairs if pair["source"] == source}


def test_files_go_into_each_language_ticked_as_one_job_and_download_per_target(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab], shots: Path
) -> None:
    page = open_tab(server.url + "/?source=en&target=es").page
    for target in ("ca", "fr"):
        into(page).get_by_label(re.compile(rf"\({target}\)$")).check()
    page.get_by_label("Files").set_input_files(
        [
            upload("notes.txt", "text/plain", NOTES),
            upload("house.html", "text/html", PAGE),
        ]
    )
    page.get_by_role("button", name="Translate files").click()
    entry = page.locator(".file-job").first
    # In the order offered: by the languages' names.
    expect(entry).to_contain_text("into Catalan (ca), French (fr), Spanish (es)")
    links = entry.get_by_role("link", name=re.compile("^Download"))
    expect(links).to_have_count(7, timeout=30_000)  # 2 files in 3 languages, and the zip
    job_id = entry.get_by_role("link", name="notes.txt, house.html").get_attribute("href")
    assert job_id is not None
    job = client.get(f"/v1{job_id}").json()
    assert job["target_langs"] == ["ca", "fr", "es"] and job["documents"] == 2

    with page.expect_download() as notes:
        entry.get_by_role("link", name="Download notes.ca.txt").click()
    assert notes.value.suggested_filename == "notes.ca.txt"
    hello, cat = alone(client, "ca", ["Hello world.", "The cat sleeps on the chair."])
    assert notes.value.path().read_text(encoding="utf-8") == f"{hello}\n{cat}\n"
    with page.expect_download() as archive:
        entry.get_by_role("link", name="Download all files (zip)").click()
    with zipfile.ZipFile(archive.value.path()) as unzipped:
        assert sorted(unzipped.namelist()) == sorted(
            f"{t}/{name}.{t}.{ext}"
            for t in TARGETS
            for name, ext in (("notes", "txt"), ("house", "html"))
        )
        (morning,) = alone(client, "fr", ["Good morning."])
        assert f"<p>{morning}</p>" in unzipped.read("fr/house.fr.html").decode()
    page.locator("#drop").screenshot(path=str(shots / "translator-targets.png"))
    page.get_by_text("Partial results").click()
    expect(entry.locator(".partial-doc h4")).to_have_count(6)
    expect(entry.locator(".partial-doc h4").nth(5)).to_have_text("house.html → Spanish (es)")
    assert_accessible(page)


def test_the_job_page_shows_each_target_its_translations_and_its_files(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab], shots: Path
) -> None:
    job = finished(client, file_job(client, TARGETS)["id"])
    assert job["status"] == "succeeded"
    page = open_tab(server.url + f"/jobs/{job['id']}").page
    expect(page.locator("#summary")).to_contain_text(
        "English (en) → Spanish (es), Catalan (ca), French (fr)"
    )
    targets = page.get_by_role("table", name="Each target language")
    for target in TARGETS:
        row = targets.locator(f'tr[data-target="{target}"]')
        expect(row).to_contain_text("succeeded")
        bar = row.get_by_role("progressbar")
        expect(bar).to_have_attribute("value", "4")
        expect(bar).to_have_attribute("max", "4")
        expect(row.get_by_role("link", name=f"Download {target} files (zip)")).to_be_visible()
    # The translations shown are the first target's, then the one chosen.
    cells = page.locator("table.side-by-side tbody tr").first.locator("td")
    expect(cells.nth(1)).to_have_text("Hello world.")
    expect(cells.nth(2)).to_have_text(alone(client, "es", ["Hello world."])[0])
    page.get_by_label("Translation into").select_option("fr")
    expect(cells.nth(2)).to_have_text(alone(client, "fr", ["Hello world."])[0])
    expect(page.locator("table.side-by-side th").nth(2)).to_have_text(
        "Translation into French (fr)"
    )
    assert "target=fr" in page.url
    # Each document offers its file in every language.
    first = page.locator("#documents article").first
    expect(first.get_by_role("link", name=re.compile("^Download"))).to_have_text(
        [f"Download notes.{t}.txt" for t in TARGETS]
    )
    with page.expect_download() as house:
        page.get_by_role("link", name="Download house.ca.html").click()
    (morning,) = alone(client, "ca", ["Good morning."])
    assert f"<p>{morning}</p>" in house.value.path().read_text(encoding="utf-8")
    with page.expect_download() as archive:
        targets.get_by_role("link", name="Download es files (zip)").click()
    assert archive.value.suggested_filename == f"{job['id']}.es.zip"
    with zipfile.ZipFile(io.BytesIO(archive.value.path().read_bytes())) as unzipped:
        assert sorted(unzipped.namelist()) == ["es/house.es.html", "es/notes.es.txt"]
    assert_accessible(page)
    page.screenshot(path=str(shots / "job-targets.png"), full_page=True)
    # A shared address keeps the language shown; the list names every target.
    again = open_tab(page.url, viewport=PHONE).page
    expect(again.get_by_label("Translation into")).to_have_value("fr")
    expect(again.locator("table.side-by-side tbody tr").first.locator("td").nth(2)).to_have_text(
        alone(client, "fr", ["Hello world."])[0]
    )
    assert_fits(again)
    jobs = open_tab(server.url + "/jobs").page
    row = jobs.get_by_role("table", name="Jobs").locator(f'tr[data-id="{job["id"]}"]')
    expect(row).to_contain_text("en → es, ca, fr")


def test_a_job_into_two_languages_moves_live_per_target(
    server: Server, client: httpx.Client, open_tab: Callable[..., Tab], shots: Path
) -> None:
    count = 4000
    segments = [f"The house number {n} is red and the garden is green." for n in range(count)]
    body = {
        "source_lang": "en",
        "target_langs": ["es", "ca"],
        "documents": [{"name": "long.txt", "segments": segments}],
    }
    job = client.post("/v1/jobs", json=body).json()
    # The tab opens blank: every request counted is the job page's own (a job page
    # opened first may still be starting its stream as the count begins).
    page = open_tab("about:blank").page
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(server.url + f"/jobs/{job['id']}?target=ca")
    targets = page.get_by_role("table", name="Each target language")
    expect(targets.locator("thead th")).to_have_text(["Language", "Status", "Progress"])
    bars = {
        target: targets.locator(f'tr[data-target="{target}"]').get_by_role("progressbar")
        for target in ("es", "ca")
    }
    seen: list[dict[str, int]] = []

    def both_done() -> bool:
        values = {t: int(bar.get_attribute("value") or 0) for t, bar in bars.items()}
        moving = any(0 < value < count for value in values.values())
        if moving and not any(0 < value < count for before in seen for value in before.values()):
            page.screenshot(path=str(shots / "job-targets-running.png"))
        seen.append(values)
        return min(values.values()) == count

    wait_for(both_done, 90, "both targets to be done")
    expect(page.locator("#summary")).to_contain_text("succeeded", timeout=30_000)
    # Each target's bar moved on its own, by the events alone: one read of the job.
    assert any(0 < value < count for values in seen for value in values.values()), seen
    for target in ("es", "ca"):
        assert [values[target] for values in seen] == sorted(values[target] for values in seen)
    job_url = f"{server.url}/v1/jobs/{job['id']}"
    assert requested.count(job_url) == 1 and requested.count(job_url + "/events") == 1
    # The last segment came by the events, into the language shown.
    page.get_by_role("button", name="Last segments").click()
    last = page.locator("table.side-by-side tbody tr").last.locator("td").nth(2)
    expect(last).to_have_text(alone(client, "ca", [segments[-1]])[0])
