"""The one place where errors become HTTP responses. Every body is {"detail": "..."}."""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from stackyard import errors

log = logging.getLogger("stackyard.api")
#: The web UI's client-side routes (api/web.py): never an answer for an API path.
CATCH_ALL = "/{path:path}"

STATUS: dict[type[errors.StackyardError], int] = {
    errors.Invalid: 400,
    errors.Unauthorized: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.TooLarge: 413,
    errors.TooManyRequests: 429,
    errors.DestinationError: 502,
    errors.DestinationUnreachable: 503,  # retry later
    errors.DestinationDenied: 502,  # fix the credentials or the host key
    errors.Unavailable: 503,
    errors.ConfigError: 500,
    errors.ComputeFailed: 500,
    errors.GitError: 502,
    errors.GitUnreachable: 503,  # retry later
    errors.GitDenied: 502,  # fix the token, the deploy key or the host key
    # Agents are upstream hosts: their failures are gateway errors, never 401/403.
    errors.AgentError: 502,
    errors.AgentDenied: 502,  # the agent's token or pinned certificate: fix them
    errors.AgentIncompatible: 502,  # update the agent (or the central)
    errors.AgentUnreachable: 503,  # offline: retry later
    # Registries are upstream services: their failures are gateway errors, never 401/403
    # (which would say that the caller's own session or role is the problem).
    errors.RegistryError: 502,  # an answer we cannot use
    errors.RegistryDenied: 502,  # the stored registry credentials: fix them
    errors.RegistryUnreachable: 503,  # retry later
    errors.NotInRegistry: 404,  # the image (repository or tag) addressed does not exist
    errors.ProviderError: 502,  # the identity provider: an upstream service too
    errors.ProviderUnreachable: 503,
}


class ErrorBody(BaseModel):
    """Every error response."""

    detail: str


#: Documented on every /api operation, so that generated clients know the error shape.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in [
        (400, "Invalid request"),
        (401, "Not signed in"),
        (403, "Not allowed"),
        (404, "Not found"),
        (409, "Conflict with the current state"),
        (413, "Request body too large"),
        (422, "The request does not match the schema"),
        (429, "Too many requests"),
    ]
}


def status_of(exc: errors.StackyardError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def _stackyard_error(_request: Request, exc: errors.StackyardError) -> JSONResponse:
    return error_response(exc)


def error_response(exc: errors.StackyardError) -> JSONResponse:
    headers = {}
    if isinstance(exc, errors.TooManyRequests):
        headers["Retry-After"] = str(exc.retry_after)
    if isinstance(exc, errors.Unauthorized):
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse({"detail": exc.detail}, status_code=status_of(exc), headers=headers)


def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        parts.append(f"{where}: {error.get('msg')}" if where else str(error.get("msg")))
    return JSONResponse({"detail": "Invalid request: " + "; ".join(parts)}, status_code=422)


def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    detail = exc.detail if isinstance(exc.detail, str) else "Request failed"
    headers = dict(exc.headers or {})
    if exc.status_code == 405 and (methods := allowed_methods(request.app, request.url.path)):
        headers["Allow"] = ", ".join(methods)
    return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=headers)


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """Every documented method at `path` (Starlette names only the methods of the first
    route that matched the path, and only routes it reached)."""
    table: list[tuple[re.Pattern[str], list[str]]] | None = getattr(app.state, "allow", None)
    if table is None:
        table = [
            (
                re.compile("^" + re.sub(r"\\{[^/}]+\\}", "[^/]+", re.escape(template)) + "$"),
                sorted(method.upper() for method in operations),
            )
            for template, operations in app.openapi().get("paths", {}).items()
        ]
        app.state.allow = table
    matching = [(pattern, listed) for pattern, listed in table if pattern.match(path)]
    if not matching:
        return []
    # The most specific templates answer: `/agents/{id}/test` before `/agents/{id}/{path}`.
    fewest = min(pattern.pattern.count("[^/]+") for pattern, _ in matching)
    return sorted(
        {
            m
            for pattern, listed in matching
            if pattern.pattern.count("[^/]+") == fewest
            for m in listed
        }
    )


def method_not_allowed(app: FastAPI, path: str) -> StarletteHTTPException | None:
    """The 405 for a path that other methods serve, or None when nothing serves it."""
    methods = allowed_methods(app, path)
    if not methods:
        return None
    return StarletteHTTPException(405, "Method Not Allowed", headers={"Allow": ", ".join(methods)})


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("Unhandled error in %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"detail": "Internal server error"}, status_code=500)


def _errors_are_json(app: FastAPI) -> None:
    """Errors are JSON on every route, also on streaming ones (their 4xx come before the
    stream starts): say so in the schema, whatever the route's own media type."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            body = {"schema": {"$ref": "#/components/schemas/ErrorBody"}}
            for operations in schema.get("paths", {}).values():
                for operation in operations.values():
                    for code, response in operation.get("responses", {}).items():
                        if code[0] in "45" and "content" in response:
                            response["content"] = {"application/json": body}
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def install(app: FastAPI) -> None:
    _errors_are_json(app)
    app.add_exception_handler(errors.StackyardError, _stackyard_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected)
