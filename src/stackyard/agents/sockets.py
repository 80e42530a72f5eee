"""A container's shell on an agent, for a user of the central: the agent's WebSocket
passed through both ways, message for message, with the user's name and role passed on
as the proxy passes them. The session is audited here, on the central: an agent relays
its audit entries in an HTTP answer's header, which a WebSocket does not have."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

import websockets
from starlette.websockets import WebSocket

from stackyard.agents.proxy import as_user
from stackyard.agents.tls import client_context
from stackyard.auth.audit import Recorder
from stackyard.auth.principal import Principal

if TYPE_CHECKING:
    from stackyard.agents.client import AgentClient

#: Closes the user's socket when the agent's cannot be opened (as a 502 would say).
CLOSE_AGENT_FAILED = 4502
#: How long the agent's socket may take to open.
OPEN_TIMEOUT = 10.0


async def relay_shell(
    websocket: WebSocket,
    client: AgentClient,
    principal: Principal,
    record: Recorder,
    stack_id: str,
    container: str,
) -> None:
    """Open the agent's shell of `container` (the user's query passed on: command, size)
    and relay it until either side closes."""
    target = client.target
    url = (
        target.url.replace("http", "ws", 1)
        + f"/agent/stacks/{stack_id}/containers/{container}/shell"
    )
    query = websocket.url.query
    headers = {"Authorization": f"Bearer {target.token}", **as_user(principal)}
    context = client_context(target.certificate, target.ca_certificate) if target.https else None
    where = f"{target.name}: {stack_id}/{container}"
    try:
        upstream = await websockets.connect(
            f"{url}?{query}" if query else url,
            additional_headers=headers,
            ssl=context,
            open_timeout=OPEN_TIMEOUT,
        )
    except (OSError, websockets.WebSocketException, TimeoutError) as exc:
        reason = f"Agent {target.name!r}: {exc}"
        await websocket.close(code=CLOSE_AGENT_FAILED, reason=reason[:120])
        await asyncio.to_thread(
            record, principal.username, "container.shell", where, "failure", str(exc)
        )
        return
    await websocket.accept()
    began = time.monotonic()
    await asyncio.to_thread(
        record, principal.username, "container.shell", where, "success", "opened"
    )

    async def down() -> None:
        async for message in upstream:
            if isinstance(message, bytes):
                await websocket.send_bytes(message)
            else:
                await websocket.send_text(message)

    async def up() -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("bytes") is not None:
                await upstream.send(message["bytes"])
            elif message.get("text") is not None:
                await upstream.send(message["text"])

    tasks = [asyncio.create_task(job()) for job in (down, up)]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await upstream.close()
        with contextlib.suppress(Exception):  # already closed, by either side
            await websocket.close()
        detail = f"closed after {round(time.monotonic() - began)} s"
        await asyncio.to_thread(
            record, principal.username, "container.shell.end", where, "success", detail
        )
