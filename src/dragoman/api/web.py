"""The web UI: four HTML pages and their assets, all package data under ``dragoman/web``.

No build step: the ES modules and the stylesheet are served as written, under URLs that
carry a hash of their content (``/ui/api.3f2a9c01b7de.js``), cached for a year. The hashes
are taken once, at start-up, in dependency order: a module's import specifiers are rewritten
to its imports' hashed names before its own hash is taken, so a change anywhere changes the
URL of every module that reaches it, and a page (never cached without revalidation) always
names a consistent set. Every page and asset carries a strict Content-Security-Policy: no
inline script or style, nothing from another origin.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path

from fastapi import APIRouter, Request, Response

from dragoman.errors import NotFound

WEB = Path(__file__).resolve().parent.parent / "web"

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
IMMUTABLE = "public, max-age=31536000, immutable"

# path → (title, the page's body under web/pages, its script under web/static)
PAGES = {
    "/": ("Translate", "translator"),
    "/jobs": ("Jobs", "jobs"),
    "/jobs/{job_id}": ("Job", "job"),
    "/dashboard": ("Dashboard", "dashboard"),
}
_NAV = {"/": "Translate", "/jobs": "Jobs", "/dashboard": "Dashboard"}
_IMPORT = re.compile(r"""(\bfrom\s+|\bimport\s+)(["'])\./([\w-]+\.js)\2""")
_ASSET_LINK = re.compile(r"/ui/([\w-]+\.\w+)")


@dataclass(frozen=True, slots=True)
class Body:
    """One response body, as is and gzipped, with its media type and entity tag."""

    raw: bytes
    gzipped: bytes
    media_type: str
    etag: str

    @classmethod
    def of(cls, raw: bytes, media_type: str) -> Body:
        digest = hashlib.sha256(raw).hexdigest()
        return cls(raw, gzip.compress(raw, 9, mtime=0), media_type, f'"{digest[:16]}"')

    def response(self, request: Request, cache: str) -> Response:
        zipped = "gzip" in request.headers.get("accept-encoding", "")
        # Each encoding is a representation of its own, with an entity tag of its own.
        etag = f'{self.etag[:-1]}-gz"' if zipped else self.etag
        headers = {**SECURITY, "Cache-Control": cache, "ETag": etag, "Vary": "Accept-Encoding"}
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        if zipped:
            headers["Content-Encoding"] = "gzip"
        body = self.gzipped if zipped else self.raw
        return Response(body, media_type=self.media_type, headers=headers)


class Site:
    """Every asset under its hashed name, and the pages that link them."""

    def __init__(self, root: Path = WEB) -> None:
        self._static = root / "static"
        self.urls: dict[str, str] = {}  # file name → its hashed name
        self.assets: dict[str, Body] = {}  # hashed name → body
        for path in sorted(self._static.iterdir()):
            self._hash(path.name, ())
        layout = (root / "pages" / "layout.html").read_text(encoding="utf-8")
        self.pages = {
            path: self._page(layout, path, title, (root / "pages" / f"{name}.html"), name)
            for path, (title, name) in PAGES.items()
        }

    def _hash(self, name: str, trail: tuple[str, ...]) -> str:
        if name in self.urls:
            return self.urls[name]
        if name in trail:
            cycle = " -> ".join((*trail, name))
            raise ValueError(f"web modules import each other in a cycle: {cycle}")
        path = self._static / name
        raw = path.read_bytes()
        if path.suffix == ".js":
            text = _IMPORT.sub(
                lambda m: f"{m[1]}{m[2]}./{self._hash(m[3], (*trail, name))}{m[2]}",
                raw.decode("utf-8"),
            )
            raw = text.encode("utf-8")
        hashed = f"{path.stem}.{hashlib.sha256(raw).hexdigest()[:12]}{path.suffix}"
        media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if path.suffix == ".js":
            media_type = "text/javascript"
        self.assets[hashed] = Body.of(raw, f"{media_type}; charset=utf-8")
        self.urls[name] = hashed
        return hashed

    def _page(self, layout: str, path: str, title: str, body: Path, script: str) -> Body:
        current = ' aria-current="page"'
        nav = "\n".join(
            f'<a href="{href}"{current if _section(path) == href else ""}>{label}</a>'
            for href, label in _NAV.items()
        )
        html = (
            layout.replace("<!--title-->", title)
            .replace("<!--nav-->", nav)
            .replace("<!--main-->", body.read_text(encoding="utf-8"))
            .replace("<!--script-->", f"/ui/{script}.js")
        )
        html = _ASSET_LINK.sub(lambda m: f"/ui/{self.urls[m[1]]}", html)
        return Body.of(html.encode("utf-8"), "text/html; charset=utf-8")

    @property
    def transferred_bytes(self) -> int:
        """What a browser downloads for every page and asset, gzipped."""
        return sum(len(body.gzipped) for body in [*self.assets.values(), *self.pages.values()])


def _section(path: str) -> str:
    """The navigation entry a page belongs to (a job's page: the jobs)."""
    return "/jobs" if path.startswith("/jobs") else path


def web_router(site: Site) -> APIRouter:
    """The pages and the assets of ``site``; none of them is in the OpenAPI description."""
    router = APIRouter(include_in_schema=False)

    def page(path: str) -> None:
        async def serve(request: Request) -> Response:
            return site.pages[path].response(request, "no-cache")

        router.add_api_route(path, serve, methods=["GET", "HEAD"], name=f"page {path}")

    for path in PAGES:
        page(path)

    @router.api_route("/ui/{name}", methods=["GET", "HEAD"])
    async def asset(name: str, request: Request) -> Response:
        body = site.assets.get(name)
        if body is None:
            raise NotFound(f"no asset {name}")
        return body.response(request, IMMUTABLE)

    return router
