"""Agents (admins; audited) and the proxy to their routes (any signed-in user: the agent
applies the user's role). `/api/agents/{id}/X` is the agent's `/agent/X`: stacks, logs,
shell (a WebSocket), resource use, image updates, files, backups."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Request, WebSocket, status
from fastapi.responses import StreamingResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent
from pydantic import Field
from starlette.convertors import Convertor, register_url_convertor

from stackyard.agents.backups import AgentTransfers
from stackyard.agents.dialer import AGENT_HEADER, PORT_HEADER
from stackyard.agents.proxy import forward
from stackyard.agents.service import (
    Agents,
    AgentSpec,
    AgentView,
    Enrolled,
    NewTunnelAgent,
    Probe,
)
from stackyard.agents.sockets import AgentContainer
from stackyard.agents.wsbridge import WebSocketTransport
from stackyard.api.containers import shell_gate
from stackyard.api.deps import (
    AdminDep,
    AuditDep,
    PrincipalDep,
    SettingsDep,
    audit_recorder,
    central_services,
    current_principal,
)
from stackyard.api.destinations import PushIn
from stackyard.api.models import Body, DbId
from stackyard.api.stacks import run_events
from stackyard.auth.audit import record
from stackyard.auth.principal import Principal
from stackyard.containers.session import hold_shell
from stackyard.stacks.runs import RunState, ended_by
from stackyard.stacks.updates import UpdateSummary

router = APIRouter(tags=["agents"], dependencies=[Depends(current_principal)])
sockets = APIRouter(tags=["agents"])
#: An agent's host enrolling: no user, its one-time token is the credential.
enrolment = APIRouter(tags=["agents"])
log = logging.getLogger(__name__)


def get_agents(request: Request) -> Agents:
    return central_services(request).agents


AgentsDep = Annotated[Agents, Depends(get_agents)]


class AgentIn(Body):
    name: str = Field(min_length=1, max_length=100)
    url: str = Field(max_length=500, description="http(s)://HOST:PORT of `stackyard agent`")
    token: str | None = Field(
        None, max_length=1000, description="The agent's token (write-only; null keeps it)"
    )
    fingerprint: str | None = Field(
        None, max_length=200, description="HTTPS: the certificate fingerprint a test showed"
    )
    ca_certificate: str | None = Field(
        None, max_length=100_000, description="HTTPS: trust this CA instead of a pin (PEM)"
    )
    enabled: bool = True

    def spec(self) -> AgentSpec:
        return AgentSpec(
            self.name, self.url, self.token, self.fingerprint, self.ca_certificate, self.enabled
        )


@router.get("/agents", operation_id="listAgents")
def list_agents(agents: AgentsDep) -> list[AgentView]:
    return agents.all()


@router.post(
    "/agents",
    operation_id="createAgent",
    status_code=status.HTTP_201_CREATED,
)
async def create_agent(
    body: AgentIn, admin: AdminDep, audit: AuditDep, agents: AgentsDep
) -> AgentView:
    """Add an agent. For HTTPS, its certificate is pinned: give the fingerprint a test
    showed (it is checked against what the agent presents), or a CA certificate."""
    with audit(admin, "agent.create", body.name):
        return await agents.create(body.spec())


@router.post("/agents/test", operation_id="testUnsavedAgent")
async def test_unsaved_agent(
    body: AgentIn, admin: AdminDep, audit: AuditDep, agents: AgentsDep
) -> Probe:
    """Reach an agent before saving it: its version, what it supports and, for HTTPS, the
    fingerprint of the certificate it presents (compare it with the agent's log)."""
    with audit(admin, "agent.test", body.url) as note:
        probe = await agents.probe(body.spec())
        note.failed_unless(probe.ok, probe.detail)
        return probe


class TunnelAgentIn(Body):
    name: str = Field(min_length=1, max_length=100)


@router.post(
    "/agents/tunnel", operation_id="createTunnelAgent", status_code=status.HTTP_201_CREATED
)
async def create_tunnel_agent(
    body: TunnelAgentIn,
    request: Request,
    settings: SettingsDep,
    admin: AdminDep,
    audit: AuditDep,
    agents: AgentsDep,
) -> NewTunnelAgent:
    """Add an agent that dials this central (behind NAT, say): its one-time enrolment
    token (single use, for 15 minutes, shown this once; delete the agent to revoke it)
    and the command to run on its host."""
    with audit(admin, "agent.create", body.name) as note:
        note.detail = "an agent that connects to the central"
        url = settings.public_url or str(request.base_url).rstrip("/")
        return await asyncio.to_thread(agents.create_tunnel, body.name, url)


class EnrolIn(Body):
    token: str = Field(min_length=1, max_length=200)
    public_key: str = Field(min_length=1, max_length=2000, description="OpenSSH public key")


@enrolment.post("/enrol", operation_id="enrolAgent")
async def enrol_agent(body: EnrolIn, request: Request) -> Enrolled:
    """An agent's host enrolling with its one-time token (no user: the token is the
    credential): its key is pinned; the answer gives what it needs to dial in."""
    agents = get_agents(request)
    enrolled = await asyncio.to_thread(agents.enrol, body.token, body.public_key)
    await asyncio.to_thread(
        record,
        central_services(request).db,
        "agent",
        "agent.enrol",
        str(enrolled.agent_id),
        "success",
        "its key pinned",
    )
    return enrolled


@sockets.websocket("/agents/tunnel/connect")
async def agent_tunnel(websocket: WebSocket) -> None:
    """An agent's tunnel (SSH over this WebSocket: the agent's key is its credential).
    Refused before it opens for an agent unknown, deleted, disabled or not enrolled."""
    agents = get_agents(websocket)  # type: ignore[arg-type]
    try:
        agent_id = int(websocket.headers.get(AGENT_HEADER, ""))
        port = int(websocket.headers.get(PORT_HEADER, ""))
    except ValueError:
        await websocket.close(code=status.WS_1008_POLICY_VIOLATION)
        return
    keys = await asyncio.to_thread(agents.tunnel_keys, agent_id)
    if not keys or not 0 < port < 65536:
        await websocket.close(code=status.WS_1008_POLICY_VIOLATION)
        return
    await websocket.accept()

    async def receive() -> bytes | None:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return None
        return message.get("bytes") or (message.get("text") or "").encode()

    transport = WebSocketTransport(websocket.send_bytes, receive, websocket.close)
    try:
        await agents.tunnels.serve(
            agent_id, keys, port, transport, lambda key: agents.key_presented(agent_id, key)
        )
    except Exception as exc:  # (a handshake refused: a key not pinned, a cut)
        log.info("A tunnel of agent %s was refused or cut: %s", agent_id, exc)
        transport.abort()


@router.post("/agents/{agent_id}/rotate-key", operation_id="rotateAgentKey")
async def rotate_agent_key(
    agent_id: DbId, admin: AdminDep, audit: AuditDep, agents: AgentsDep
) -> AgentView:
    """An agent that dials in makes a new key and dials again with it; the old tunnel
    ends once the new one is up (no request is cut)."""
    with audit(admin, "agent.update", str(agent_id)) as note:
        note.detail = "its key rotated"
        return await agents.rotate_key(agent_id)


@router.get("/agents/{agent_id}", operation_id="getAgent")
def get_agent(agent_id: DbId, agents: AgentsDep) -> AgentView:
    return agents.get(agent_id)


@router.put("/agents/{agent_id}", operation_id="updateAgent")
async def update_agent(
    agent_id: DbId, body: AgentIn, admin: AdminDep, audit: AuditDep, agents: AgentsDep
) -> AgentView:
    """Change the agent; a token left out is kept. A new URL, fingerprint or CA pins the
    certificate anew."""
    with audit(admin, "agent.update", body.name):
        return await agents.update(agent_id, body.spec())


@router.delete(
    "/agents/{agent_id}",
    operation_id="deleteAgent",
    status_code=status.HTTP_204_NO_CONTENT,
)
async def delete_agent(agent_id: DbId, admin: AdminDep, audit: AuditDep, agents: AgentsDep) -> None:
    """Forget the agent and its schedules; nothing on the agent's host changes."""
    with audit(admin, "agent.delete", str(agent_id)) as note:
        note.target = await agents.delete(agent_id)


@router.post("/agents/{agent_id}/test", operation_id="testAgent")
async def test_agent(agent_id: DbId, admin: AdminDep, audit: AuditDep, agents: AgentsDep) -> Probe:
    with audit(admin, "agent.test", str(agent_id)) as note:
        probe = await agents.test(agent_id)
        note.failed_unless(probe.ok, probe.detail)
        return probe


# -- archives between an agent and a destination, through the central ----------------------
def get_agent_transfers(request: Request) -> AgentTransfers:
    return central_services(request).agent_transfers


AgentTransfersDep = Annotated[AgentTransfers, Depends(get_agent_transfers)]


@router.post(
    "/agents/{agent_id}/backups/{name}/push",
    operation_id="pushAgentBackup",
    status_code=status.HTTP_202_ACCEPTED,
)
async def push_agent_backup(
    agent_id: DbId,
    name: str,
    body: PushIn,
    admin: AdminDep,
    audit: AuditDep,
    transfers: AgentTransfersDep,
) -> RunState:
    """Push an agent's archive to a destination, through this service (the destination's
    secrets stay here). Follow it at `/api/agents/{id}/transfers/{stack}/run/events`."""
    with audit(admin, "backup.push", name) as note:
        note.detail = f"from agent {agent_id} to destination {body.destination_id}"
        run = await transfers.push(agent_id, name, body.destination_id)
        note.ends = ended_by(run)
    return run.state()


@router.post(
    "/agents/{agent_id}/destinations/{destination_id}/archives/{name}/pull",
    operation_id="pullRemoteArchiveToAgent",
    status_code=status.HTTP_202_ACCEPTED,
)
async def pull_to_agent(
    agent_id: DbId,
    destination_id: DbId,
    name: str,
    admin: AdminDep,
    audit: AuditDep,
    transfers: AgentTransfersDep,
) -> RunState:
    """Bring a destination's archive into an agent's archives (then restore it there).
    Follow it at `/api/agents/{id}/transfers/{stack}/run/events`."""
    with audit(admin, "backup.pull", name) as note:
        note.detail = f"from destination {destination_id} to agent {agent_id}"
        run = await transfers.pull(agent_id, destination_id, name)
        note.ends = ended_by(run)
    return run.state()


@router.get("/agents/{agent_id}/transfers/{stack_id}/run", operation_id="agentTransferRun")
def agent_transfer_run(
    agent_id: DbId, stack_id: str, transfers: AgentTransfersDep
) -> RunState | None:
    """The current or last push or pull of the stack's archives for this agent; null when
    there was none."""
    return transfers.last_run(agent_id, stack_id)


@router.get(
    "/agents/{agent_id}/transfers/{stack_id}/run/events",
    operation_id="agentTransferRunEvents",
    response_class=EventSourceResponse,
)
async def agent_transfer_events(
    agent_id: DbId,
    stack_id: str,
    request: Request,
    principal: PrincipalDep,
    transfers: AgentTransfersDep,
) -> AsyncIterator[ServerSentEvent]:
    """Server-Sent Events as for a stack's run: `state`, then `end`."""
    async for event in run_events(request, principal, transfers.follow(agent_id, stack_id)):
        yield event


# -- the proxy ------------------------------------------------------------------------------
async def _proxy(
    request: Request, agent_id: int, path: str, principal: Principal, agents: Agents
) -> StreamingResponse:
    proxied = await forward(
        agents,
        agent_id,
        principal,
        request.method,
        path,
        request.query_params.multi_items(),
        dict(request.headers),
        request.stream(),
        audit_recorder(request),
    )
    return StreamingResponse(proxied.body, proxied.status_code, headers=proxied.headers)


@router.get(
    "/agents/{agent_id}/stacks/updates",
    operation_id="agentStackUpdates",
    response_model=UpdateSummary,
)
async def agent_stack_updates(
    agent_id: DbId, request: Request, principal: PrincipalDep, agents: AgentsDep
) -> StreamingResponse:
    """The agent's stack update summary (as `GET /api/stacks/updates` for this host)."""
    return await _proxy(request, agent_id, "stacks/updates", principal, agents)


async def proxy_agent(
    agent_id: DbId, path: str, request: Request, principal: PrincipalDep, agents: AgentsDep
) -> StreamingResponse:
    """The agent's `/agent/{path}`, as this host's `/api/{path}`: same methods, bodies,
    answers and roles. 503 when the agent is offline, 502 when it refuses the central
    (token, certificate) or runs a version this central cannot talk to."""
    return await _proxy(request, agent_id, path, principal, agents)


class _AnyPath(Convertor[str]):
    """Like Starlette's `path`, but any character (a file's name may hold a newline)."""

    regex = "(?s:.*)"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("anypath", _AnyPath())

for _method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
    router.add_api_route(
        "/agents/{agent_id}/{path:anypath}",
        proxy_agent,
        methods=[_method],
        operation_id=f"proxyAgent{_method.title()}",
        response_class=StreamingResponse,
    )


@sockets.websocket("/agents/{agent_id}/stacks/{stack_id}/containers/{container}/shell")
async def agent_shell(websocket: WebSocket, agent_id: int, stack_id: str, container: str) -> None:
    """A container's shell on an agent (admins): the agent's WebSocket, passed through,
    under the rules of a shell of this host (`containerShell`): it ends when the user's
    sign-in or role no longer allows it. Audited here (the agent cannot relay over a
    socket)."""
    agents = get_agents(websocket)  # type: ignore[arg-type]
    place = AgentContainer(agents, agent_id, stack_id, container, websocket.url.query)
    await hold_shell(websocket, shell_gate(websocket), place, audit_recorder(websocket))
