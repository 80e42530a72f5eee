"""Request bodies are read only after the request is authenticated, and only up to a
limit: a client cannot make the service hold a large body it has not earned.

For requests with a body under /api and /agent, this middleware (pure ASGI, before any
route reads anything) authenticates first (sign-in itself excepted), then buffers the
body up to STACKYARD_MAX_JSON_BYTES (413 beyond) and refuses text with unpaired UTF-16
surrogates, which JSON can express and nothing downstream can store. Streamed uploads
pass through unbuffered once authenticated.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from anyio import to_thread
from starlette.requests import HTTPConnection
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stackyard.api.errors import error_response
from stackyard.errors import Invalid, StackyardError, TooLarge
from stackyard.jsonmodel import parse_json

Route = tuple[str, str]  # (method, path)
Authenticate = Callable[[HTTPConnection, str], object]
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class AuthenticatedBoundedBody:
    def __init__(
        self,
        app: ASGIApp,
        authenticate: Authenticate,
        max_bytes: Callable[[], int],
        public: frozenset[Route] = frozenset(),
        public_prefixes: tuple[str, ...] = (),
        streamed: Callable[[str, str], bool] = lambda _method, _path: False,
        prefixes: tuple[str, ...] = ("/api/", "/agent/"),
    ) -> None:
        self.app = app
        self.authenticate = authenticate
        self.max_bytes = max_bytes
        self.public = public
        self.public_prefixes = public_prefixes
        self.streamed = streamed
        self.prefixes = prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in _BODY_METHODS
            or not scope["path"].startswith(self.prefixes)
            or not _has_body(scope)
        ):
            await self.app(scope, receive, send)
            return
        if not _routed(scope):  # the router answers 404 or 405 without reading the body
            await self.app(scope, receive, send)
            return
        route = (scope["method"], scope["path"])
        try:
            public = route in self.public or (
                bool(self.public_prefixes) and scope["path"].startswith(self.public_prefixes)
            )
            if not public:
                connection = HTTPConnection(scope)
                await to_thread.run_sync(self.authenticate, connection, scope["method"])
            if self.streamed(*route):
                await self.app(scope, receive, send)
                return
            body = await self._read(scope, receive)
            _check_text(body)
        except StackyardError as exc:
            await error_response(exc)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, scope: Scope, receive: Receive) -> bytes:
        limit = self.max_bytes()
        too_large = TooLarge(f"Request body too large (the limit is {limit} bytes)")
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise too_large
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise Invalid("The client went away before sending the whole body")
            body += message.get("body", b"")
            if len(body) > limit:
                raise too_large
            if not message.get("more_body", False):
                return bytes(body)


def _routed(scope: Scope) -> bool:
    """Whether a route serves this method and path."""
    return any(route.matches(scope)[0] is Match.FULL for route in scope["app"].router.routes)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _has_body(scope: Scope) -> bool:
    length = _header(scope, b"content-length")
    if length is not None:
        return length.strip() != "0"
    return _header(scope, b"transfer-encoding") is not None


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # the disconnect, when it comes

    return replay


def _check_text(body: bytes) -> None:
    """Unpaired surrogates (`"\\ud800"`) cannot be encoded as UTF-8: refuse them here,
    once, rather than fail wherever the text is written."""
    if not _SURROGATE_ESCAPE.search(body):
        return
    try:
        document = parse_json(body)
    except ValueError:
        return  # not JSON: validation reports it
    pending = [document]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise Invalid(
                    "Text contains an unpaired UTF-16 surrogate (such as \\ud800); "
                    "send valid Unicode"
                ) from exc
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
