"""The central's proxy to an agent's routes: `/api/agents/{id}/X` is the agent's
`/agent/X`, with the user's name and role passed on (the agent's routes apply the role,
as the central's own do) and the answer streamed back in the chunks it arrives in. The
first chunk is read before the answer starts, so an offline agent, a refused token or a
changed certificate is an error status with a `detail`, never a partial 200. What the
agent audited comes back in a header and is recorded here with the user's name and the
agent's.

What an agent answers is data, never a page of the central's origin (an agent may be
compromised): only the content types its routes serve pass (a file download's other
types become application/octet-stream), every answer is sandboxed by its own
Content-Security-Policy and sniffing is off, and downloads are attachments.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass

from pydantic import TypeAdapter, ValidationError

from stackyard.agents import outcomes
from stackyard.agents.service import Agents
from stackyard.auth.audit import (
    HOST_ACTIONS,
    OUTCOMES,
    RELAY_HEADER,
    Recorder,
    Relayed,
    relayed_entries,
)
from stackyard.auth.principal import AGENT_ROLE_HEADER, AGENT_USER_HEADER, Principal
from stackyard.errors import AgentError
from stackyard.stacks.runs import RunState
from stackyard.system.self_update import UpdateStarted

log = logging.getLogger(__name__)

_RUN = TypeAdapter(RunState)
_UPDATE_STARTED = TypeAdapter(UpdateStarted)

#: Agent routes reached whatever the agent's version: its update (or why it cannot be
#: updated) and its health.
ALWAYS_REACHABLE = ("system/update", "health")
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


#: The content types the agent's routes answer with (the base type, parameters apart).
SERVED_TYPES = frozenset(
    {
        "application/json",
        "text/event-stream",
        "text/plain",
        "application/zip",
        "application/x-tar",
        "application/octet-stream",
    }
)
#: Agent routes that send a file of the user's (of any type: sent as data).
FILE_ROUTES = ("files/download",)
#: Headers of every proxied answer: no script, no plugin, no sniffing, whatever it holds.
DATA_ONLY = {
    "content-security-policy": "sandbox; default-src 'none'",
    "x-content-type-options": "nosniff",
}


@dataclass
class Proxied:
    status_code: int
    headers: dict[str, str]
    body: AsyncIterator[bytes]


def as_user(principal: Principal) -> dict[str, str]:
    return {AGENT_USER_HEADER: principal.username, AGENT_ROLE_HEADER: principal.role.value}


def _has_body(method: str, headers: dict[str, str]) -> bool:
    return method in ("POST", "PUT", "PATCH", "DELETE") and (
        headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
    )


async def forward(
    agents: Agents,
    agent_id: int,
    principal: Principal,
    method: str,
    path: str,
    query: list[tuple[str, str]],
    headers: dict[str, str],
    body: AsyncIterator[bytes],
    record: Recorder,
) -> Proxied:
    """The agent's `/agent/{path}` asked for `principal`: `headers` are the request's
    (lower-case names), `body` its stream (sent when the headers say there is one)."""
    # An agent of another release line is still reached to update it (or to ask it why).
    client = await agents.client(agent_id, usable=not path.startswith(ALWAYS_REACHABLE))
    name = client.target.name
    sent = {header: headers[header] for header in FORWARDED if header in headers}
    answer = await client.request(
        method,
        "/" + path,
        params=query,
        headers={**sent, **as_user(principal)},
        content=body if _has_body(method, headers) else None,
    )
    started: list[tuple[str, str, str | None]] = []
    for entry in relayed_entries(answer.headers.get(RELAY_HEADER)):
        if not _of_this_request(entry, principal, name):
            continue
        target = f"{name}: {entry.target}" if entry.target else name
        said = "; ".join(part for part in (entry.detail, f"reported by agent {name}") if part)
        await asyncio.to_thread(
            record, principal.username, entry.action, target, entry.outcome, said
        )
        if entry.outcome == "started":
            started.append((entry.action, target, entry.detail))
    try:
        returned = _as_data(path, answer.headers)
    except AgentError:
        answer.aclose()
        raise
    if not started or answer.status_code != 202:
        return Proxied(answer.status_code, returned, answer.body())
    # Work that goes on (a backup, a restore, an update): its outcome is recorded when
    # it ends.
    answered = await client.read_bytes(answer)
    for action, target, detail in started:
        ended = _ended(record, principal.username, action, target, detail)
        look = _look(action, answered)
        if look is None:
            ended("failure", "the agent's answer did not say what it started: its end is unknown")
        else:
            outcomes.follow(agents, agent_id, look, ended)
    return Proxied(answer.status_code, returned, _once(answered))


def _of_this_request(entry: Relayed, principal: Principal, agent: str) -> bool:
    """Whether an entry the agent relayed can be of the request the central sent: by its
    user, of an action a host audits and an outcome the audit log knows (else dropped,
    and logged)."""
    if (
        entry.actor == principal.username
        and entry.action in HOST_ACTIONS
        and entry.outcome in OUTCOMES
    ):
        return True
    log.warning(
        "Agent %s relayed an audit entry not of this request (%.60r by %.60r): dropped",
        agent,
        entry.action,
        entry.actor,
    )
    return False


def _as_data(path: str, headers: Mapping[str, str]) -> dict[str, str]:
    """The answer's headers the central passes on, made safe (the module): AgentError
    for a content type the agent's routes never serve."""
    returned = {name: headers[name] for name in RETURNED if name in headers} | DATA_ONLY
    media = returned.get("content-type", "").split(";", 1)[0].strip().lower()
    if media and media not in SERVED_TYPES:
        if not path.startswith(FILE_ROUTES):
            raise AgentError(f"The agent answered {media[:80]!r}, which its routes never send")
        returned["content-type"] = "application/octet-stream"
    disposition = returned.get("content-disposition")
    if disposition is not None or path.rsplit("/", 1)[-1] == "download":
        kind, _, rest = (disposition or "").partition(";")
        if kind.strip().lower() != "attachment":
            returned["content-disposition"] = f"attachment;{rest}" if rest else "attachment"
    return returned


def _look(action: str, answered: bytes) -> outcomes.Look | None:
    """How to follow the work `action` started, read from the agent's answer (None when
    the answer is not of the shape that work answers)."""
    try:
        if action == "system.update":
            return outcomes.update_end(_UPDATE_STARTED.validate_json(answered))
        return outcomes.run_end(_RUN.validate_json(answered))
    except ValidationError:
        return None


def _ended(
    record: Recorder, user: str, action: str, target: str, detail: str | None
) -> Callable[[str, str | None], None]:
    """Records the outcome of work `user` started (the start's detail kept)."""

    def ended(outcome: str, said: str | None) -> None:
        record(user, action, target, outcome, "; ".join(p for p in (detail, said) if p) or None)

    return ended


async def _once(body: bytes) -> AsyncIterator[bytes]:
    yield body
