"""The central's proxy to an agent's routes: `/api/agents/{id}/X` is the agent's
`/agent/X`, with the user's name and role passed on (the agent's routes apply the role,
as the central's own do) and the answer streamed back in the chunks it arrives in. The
first chunk is read before the answer starts, so an offline agent, a refused token or a
changed certificate is an error status with a `detail`, never a partial 200. What the
agent audited comes back in a header and is recorded here with the user's name."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from stackyard.agents.client import AgentClient, AgentResponse
from stackyard.auth.audit import RELAY_HEADER, Recorder, relayed_entries
from stackyard.auth.principal import AGENT_ROLE_HEADER, AGENT_USER_HEADER, Principal

#: Request headers passed to the agent (never the user's cookie or token).
FORWARDED = ("accept", "content-type", "content-length", "last-event-id", "range")
#: Answer headers passed back.
RETURNED = (
    "content-type",
    "content-length",
    "content-disposition",
    "content-encoding",
    "last-modified",
    "cache-control",
    "allow",
    "retry-after",
    "x-accel-buffering",
)


@dataclass
class Proxied:
    status_code: int
    headers: dict[str, str]
    body: AsyncIterator[bytes]


def as_user(principal: Principal) -> dict[str, str]:
    return {AGENT_USER_HEADER: principal.username, AGENT_ROLE_HEADER: principal.role.value}


async def forward(
    client: AgentClient,
    principal: Principal,
    method: str,
    path: str,
    query: list[tuple[str, str]],
    headers: dict[str, str],
    body: AsyncIterator[bytes] | None,
    record: Recorder,
    target_of: Callable[[str | None], str],
) -> Proxied:
    sent = {name: headers[name] for name in FORWARDED if name in headers}
    answer: AgentResponse = await client.request(
        method,
        path,
        params=query,
        headers={**sent, **as_user(principal)},
        content=body,
    )
    for entry in relayed_entries(answer.headers.get(RELAY_HEADER)):
        await asyncio.to_thread(
            record,
            principal.username,
            entry.action,
            target_of(entry.target),
            entry.outcome,
            entry.detail,
        )
    returned = {name: answer.headers[name] for name in RETURNED if name in answer.headers}
    return Proxied(answer.status_code, returned, answer.body())
