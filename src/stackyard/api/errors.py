"""The one place where errors become HTTP responses. Every body is {"detail": "..."}."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from stackyard import errors

log = logging.getLogger("stackyard.api")

STATUS: dict[type[errors.StackyardError], int] = {
    errors.Invalid: 400,
    errors.Unauthorized: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.TooManyRequests: 429,
    errors.DestinationError: 502,
    errors.Unavailable: 503,
    errors.ConfigError: 500,
}


class ErrorBody(BaseModel):
    """Every error response."""

    detail: str


#: Documented on every /api operation, so that generated clients know the error shape.
ERROR_RESPONSES: dict[int | str, dict] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in [
        (400, "Invalid request"),
        (401, "Not signed in"),
        (403, "Not allowed"),
        (404, "Not found"),
        (409, "Conflict with the current state"),
        (429, "Too many requests"),
    ]
}


def status_of(exc: errors.StackyardError) -> int:
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def _stackyard_error(_request: Request, exc: errors.StackyardError) -> JSONResponse:
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


def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
    detail = exc.detail if isinstance(exc.detail, str) else "Request failed"
    return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=exc.headers)


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("Unhandled error in %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"detail": "Internal server error"}, status_code=500)


def install(app: FastAPI) -> None:
    app.add_exception_handler(errors.StackyardError, _stackyard_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
