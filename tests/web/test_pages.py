"""The pages and assets over HTTP: security headers, caching by content hash, escaping by
construction, and the API around them left as it was."""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragoman.api.app import create_app
from dragoman.api.web import CSP, PAGES, WEB, Site
from dragoman.engines import Engines
from dragoman.services import EmbeddedService
from tests.conftest import ScriptedEngine

PAGE_PATHS = ["/", "/jobs", "/jobs/0123456789abcdef", "/dashboard"]
HASHED = re.compile(r"^/ui/[\w-]+\.[0-9a-f]{12}\.(js|css|svg)$")
# What a browser downloads for the four pages and every asset, gzipped.
BUDGET_BYTES = 40_000


@pytest.fixture
async def client(make_settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    service = EmbeddedService(make_settings(), engines=Engines([ScriptedEngine()]))
    app = create_app(service, manage_lifecycle=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as made:
        yield made


def links(html: str) -> list[str]:
    return re.findall(r'(?:src|href)="(/ui/[^"]+)"', html)


@pytest.mark.parametrize("path", PAGE_PATHS)
async def test_a_page_is_html_under_a_strict_policy_revalidated_each_time(
    client: httpx.AsyncClient, path: str
) -> None:
    response = await client.get(path, headers={"Accept-Encoding": "identity"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["content-security-policy"] == CSP
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["cache-control"] == "no-cache"
    etag = response.headers["etag"]
    again = await client.get(path, headers={"If-None-Match": etag, "Accept-Encoding": "identity"})
    assert again.status_code == 304 and again.content == b""
    zipped = await client.get(path, headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["etag"] != response.headers["etag"]
    assert zipped.content == response.content  # httpx unzips it
    head = await client.head(path)
    assert head.status_code == 200 and head.content == b""


async def test_pages_have_no_inline_script_or_style(client: httpx.AsyncClient) -> None:
    for path in PAGE_PATHS:
        html = (await client.get(path)).text
        scripts = re.findall(r"<script\b[^>]*>", html)
        assert scripts and all('src="/ui/' in tag for tag in scripts)
        assert "<style" not in html and " style=" not in html
        assert not re.search(r"<[^>]+\son\w+=", html)  # no event-handler attribute


async def test_assets_are_named_by_their_content_and_cached_for_good(
    client: httpx.AsyncClient,
) -> None:
    seen: set[str] = set()
    for path in PAGE_PATHS:
        seen.update(links((await client.get(path)).text))
    assert seen and all(HASHED.match(url) for url in seen)
    for url in sorted(seen):
        response = await client.get(url, headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert response.headers["content-security-policy"] == CSP
        assert response.headers["content-encoding"] == "gzip"


async def test_every_module_import_names_a_served_module(client: httpx.AsyncClient) -> None:
    pending = [url for path in PAGE_PATHS for url in links((await client.get(path)).text)]
    served: set[str] = set()
    while pending:
        url = pending.pop()
        if url in served:
            continue
        response = await client.get(url)
        assert response.status_code == 200, url
        served.add(url)
        if url.endswith(".js"):
            assert response.headers["content-type"] == "text/javascript; charset=utf-8"
            for name in re.findall(r'from "\./([^"]+)"', response.text):
                assert HASHED.match(f"/ui/{name}"), name
                pending.append(f"/ui/{name}")
    assert len([url for url in served if url.endswith(".js")]) == len(
        list((WEB / "static").glob("*.js"))
    )


def test_no_module_writes_html_from_strings() -> None:
    """Server values (job and file names are user input) reach the page as text only."""
    forbidden = re.compile(
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function"
    )
    for path in (WEB / "static").glob("*.js"):
        assert not forbidden.search(path.read_text(encoding="utf-8")), path.name


async def test_unknown_assets_and_pages_get_the_json_404(client: httpx.AsyncClient) -> None:
    for path in ("/ui/app.000000000000.js", "/ui/app.js", "/nope", "/jobs/a/b"):
        response = await client.get(path)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


async def test_the_api_around_the_pages_is_unchanged(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    assert not set(PAGES) & set(schema["paths"])
    assert not [path for path in schema["paths"] if path.startswith("/ui")]
    assert "/v1/fleet" in schema["paths"]
    languages = await client.get("/languages")  # LibreTranslate's, at the root
    assert languages.status_code == 200 and isinstance(languages.json(), list)
    assert (await client.get("/v2/languages")).status_code in (200, 403)  # DeepL's


def test_a_change_in_a_module_changes_the_names_of_those_that_import_it(
    tmp_path: Path,
) -> None:
    shutil.copytree(WEB, tmp_path / "web")
    before = Site(tmp_path / "web")
    dom = tmp_path / "web" / "static" / "dom.js"
    dom.write_text(dom.read_text(encoding="utf-8") + "\n// changed\n", encoding="utf-8")
    after = Site(tmp_path / "web")
    for name in ("dom.js", "api.js", "translator.js", "dashboard.js"):
        assert before.urls[name] != after.urls[name], name
    assert before.urls["app.css"] == after.urls["app.css"]
    assert after.urls["translator.js"] in after.pages["/"].raw.decode()


def test_modules_that_import_each_other_in_a_cycle_are_refused(tmp_path: Path) -> None:
    shutil.copytree(WEB, tmp_path / "web")
    dom = tmp_path / "web" / "static" / "dom.js"
    dom.write_text('import { api } from "./api.js";\n' + dom.read_text(encoding="utf-8"))
    with pytest.raises(ValueError, match="cycle"):
        Site(tmp_path / "web")


def test_the_whole_ui_stays_small() -> None:
    site = Site()
    raw = sum(len(body.raw) for body in [*site.assets.values(), *site.pages.values()])
    print(f"web UI: {site.transferred_bytes} bytes gzipped ({raw} raw)")
    assert site.transferred_bytes < BUDGET_BYTES
    assert all(len(body.gzipped) < len(body.raw) for body in site.assets.values())
