"""NUL bytes in a path or a query are refused (400) before any route sees them: no file
name, stack id or store key may hold one, and the OS raises where one reaches it."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from stackyard.api.errors import error_response
from stackyard.errors import Invalid


class RefuseNul:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and (
            "\x00" in scope["path"] or b"%00" in scope.get("query_string", b"")
        ):
            if scope["type"] == "websocket":  # closed before it is accepted: a 403
                await send({"type": "websocket.close", "code": 1008})
                return
            refused = Invalid("A path or query with a NUL byte is not allowed")
            await error_response(refused)(scope, receive, send)
            return
        await self.app(scope, receive, send)
