"""A container's shell on an agent, for a user of the central: the agent's shell WebSocket
as a `Place` and a `Shell` of the one shell session (`containers.session`), which checks
the user and relays the browser's socket. The agent's socket is passed through message for
message, with the user's name and role passed on as the proxy passes them. The session is
audited on the central: an agent relays its audit entries in an HTTP answer's header,
which a WebSocket does not have."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import websockets
from websockets.asyncio.client import ClientConnection

from stackyard.agents.proxy import as_user
from stackyard.agents.tls import client_context
from stackyard.auth.principal import Principal
from stackyard.containers.session import CLOSE_AGENT_FAILED, Ending, Message, Shell
from stackyard.errors import AgentDenied, AgentError, AgentUnreachable

if TYPE_CHECKING:
    from stackyard.agents.service import Agents

#: How long the agent's socket may take to open.
OPEN_TIMEOUT = 10.0


@dataclass(frozen=True)
class AgentContainer:
    """A container on an agent, as a `Place`: the agent's own shell route,
    `/agent/stacks/{stack_id}/containers/{container}/shell`, reached with the agent's
    token (and its pinned certificate or CA) and the browser's query (command, size)."""

    agents: Agents
    agent_id: int
    stack_id: str
    container: str
    query: str

    async def locate(self) -> str:
        client = await self.agents.client(self.agent_id)
        return f"{client.target.name}: {self.stack_id}/{self.container}"

    async def open(self, principal: Principal) -> Shell:
        target = (await self.agents.client(self.agent_id)).target
        url = (
            target.url.replace("http", "ws", 1)
            + f"/agent/stacks/{self.stack_id}/containers/{self.container}/shell"
        )
        headers = {"Authorization": f"Bearer {target.token}", **as_user(principal)}
        context = (
            client_context(target.certificate, target.ca_certificate) if target.https else None
        )
        try:
            upstream = await websockets.connect(
                f"{url}?{self.query}" if self.query else url,
                additional_headers=headers,
                ssl=context,
                open_timeout=OPEN_TIMEOUT,
            )
        except (OSError, websockets.WebSocketException, TimeoutError) as exc:
            raise _classified(f"Agent {target.name!r}: {exc}", exc) from exc
        return AgentShell(upstream)


def _classified(detail: str, exc: BaseException) -> AgentError:
    """Fix the settings (the agent refused the token, or its certificate is not the one
    trusted), or retry later (anything else: offline, a time-out, a cut connection)."""
    refused = isinstance(exc, websockets.InvalidStatus) and exc.response.status_code in (401, 403)
    if refused or isinstance(exc, ssl.SSLError):
        return AgentDenied(detail)
    return AgentUnreachable(detail)


@dataclass(frozen=True)
class AgentShell:
    """The agent's open shell socket, as a `Shell`: every message passed through as it is
    (the agent's own session reads the control messages)."""

    upstream: ClientConnection
    opened: str = "opened"

    async def output(self) -> AsyncIterator[Message]:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for message in self.upstream:
                yield message

    async def send(self, message: Message) -> None:
        await self.upstream.send(message)

    async def end(self) -> Ending:
        """Close the agent's socket (its session then ends what it started); when the
        agent closed it first, its close code and reason are the browser's too."""
        await self.upstream.close()
        code, reason = self.upstream.close_code, self.upstream.close_reason or ""
        if code is None or code == 1000 or 3000 <= code <= 4999:
            return Ending(1000 if code is None else code, reason)
        return Ending(CLOSE_AGENT_FAILED, "The connection to the agent was cut")
