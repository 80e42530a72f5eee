"""A request's children are killed when its client goes away: a program started for a
request (`docker compose config` validating a save, resolving a project for a stack page)
is killed with its group when the client leaves before its answer is complete
(`stackyard.process.request_scope`).

Pure ASGI. Once the request body has been read, this middleware is the only reader of the
connection's `receive`: it waits for the client's `http.disconnect` and hands it on to the
application when asked (streamed responses listen for it), so nothing reads the
connection twice. After the last byte of the answer is sent, the request's scope is
closed: a disconnect then kills nothing (work that outlives a request, a stack action
after its 202, runs in a context of its own anyway).
"""

from __future__ import annotations

import asyncio
import contextlib

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from stackyard.process.request_scope import request_scope


class KillChildrenOnDisconnect:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body_read = asyncio.Event()
        gone = asyncio.Event()

        with request_scope() as children:

            async def watch() -> None:
                await body_read.wait()
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        children.cancel()
                        gone.set()
                        return

            async def receive_body() -> Message:
                if body_read.is_set():  # the rest of the conversation is a disconnect
                    await gone.wait()
                    return {"type": "http.disconnect"}
                message = await receive()
                if message["type"] == "http.disconnect":
                    children.cancel()
                    gone.set()
                    body_read.set()
                elif not message.get("more_body", False):
                    body_read.set()
                return message

            async def send_answer(message: Message) -> None:
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    children.close()  # answered: nothing of the request is killed any more
                await send(message)

            watcher = asyncio.create_task(watch())
            try:
                await self.app(scope, receive_body, send_answer)
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
