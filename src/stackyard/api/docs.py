"""The OpenAPI schema and its interactive docs, for signed-in users, served offline."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from stackyard.api.deps import current_principal

DOCS_ASSETS = "/docs-assets"

router = APIRouter(include_in_schema=False, dependencies=[Depends(current_principal)])


@router.get("/openapi.json")
def openapi_schema(request: Request) -> JSONResponse:
    return JSONResponse(request.app.openapi())


@router.get("/docs")
def docs() -> HTMLResponse:
    page = get_swagger_ui_html(
        openapi_url="/api/openapi.json",
        title="Stackyard API",
        swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
        swagger_favicon_url="/favicon.ico",
    )
    # Swagger UI starts from an inline script; allow that on this page only.
    page.headers["Content-Security-Policy"] = (
        "default-src 'self'; script-src 'self' 'unsafe-inline'; "
        "style-src 'self' 'unsafe-inline'; img-src 'self' data:"
    )
    return page
