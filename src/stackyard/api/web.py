"""Serves the built web UI at `/`, with client-side routes falling back to index.html."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from stackyard.api.errors import CATCH_ALL, method_not_allowed
from stackyard.errors import NotFound, Unavailable

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
#: Prefixes that belong to the API, never to the UI's client-side routes.
_NOT_UI = ("api/", "agent/", "docs-assets/")
#: Where other services keep their schema and docs: a 404 here, never the UI's page (the
#: schema is at /api/openapi.json, the docs at /api/docs).
_NOT_UI_PAGES = frozenset({"api", "agent", "openapi.json", "docs", "redoc"})


def mount_ui(app: FastAPI, web_dir: Path = WEB_DIR) -> None:
    assets = web_dir / "assets"
    if assets.is_dir():
        app.mount("/assets", StaticFiles(directory=assets), name="assets")

    @app.get(CATCH_ALL, include_in_schema=False)
    def ui(path: str, request: Request) -> FileResponse:
        if path.startswith(_NOT_UI) or path in _NOT_UI_PAGES:
            raise method_not_allowed(request.app, request.url.path) or NotFound(f"No route /{path}")
        candidate = (web_dir / path).resolve()
        if path and candidate.is_file() and candidate.is_relative_to(web_dir):
            return FileResponse(candidate)
        index = web_dir / "index.html"
        if not index.is_file():
            raise Unavailable("The web UI is not built; run `scripts/setup.sh` (or `make run`)")
        return FileResponse(index, headers={"Cache-Control": "no-cache"})
