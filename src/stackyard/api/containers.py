"""The routes to a stack's containers: logs (live and as a file), a shell, resource use;
and to the host's containers outside every stack: the list, start/stop/restart, logs."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, WebSocket
from fastapi.responses import StreamingResponse
from fastapi.sse import EventSourceResponse

from stackyard.api.deps import (
    AdminDep,
    AuditDep,
    PrincipalDep,
    StacksDep,
    audit_recorder,
    authenticate_websocket,
    current_principal,
    get_stacks,
    is_agent,
    require_admin,
    require_operator,
    role_now,
    signed_in_stream,
)
from stackyard.api.files import content_disposition
from stackyard.auth.audit import AuditAction
from stackyard.auth.principal import Principal
from stackyard.containers.logs import (
    DEFAULT_TAIL,
    MAX_TAIL,
    LogLine,
    LogReader,
    log_batches,
    log_text,
)
from stackyard.containers.outside import OutsideContainer
from stackyard.containers.session import Gate, HostContainer, hold_shell
from stackyard.containers.shell import AUTO
from stackyard.containers.usage import UsageHistory
from stackyard.docker.containers import ContainerAction
from stackyard.stacks.containers import HostUsage

#: Tagged "containers" in the OpenAPI schema, the contract the UI's client is generated from.
router = APIRouter(tags=["containers"], dependencies=[Depends(current_principal)])
#: WebSocket routes authenticate themselves (`authenticate_websocket`).
sockets = APIRouter(tags=["containers"])

ServiceQuery = Annotated[
    str | None, Query(description="Only this service's containers", max_length=200)
]
ContainerQuery = Annotated[str | None, Query(description="Only this container", max_length=300)]


@dataclass(frozen=True)
class LogBatch:
    lines: list[LogLine]
    end: bool = field(
        default=False, metadata={"description": "The last event: nothing follows (no follow)"}
    )


async def stack_log_reader(
    stack_id: str,
    stacks: StacksDep,
    service: ServiceQuery = None,
    container: ContainerQuery = None,
) -> LogReader:
    """Found before a streamed response starts: a bad stack, service or container is a
    404 with its detail, not a broken stream."""
    return await stacks.containers.log_reader(stack_id, service, container)


LogReaderDep = Annotated[LogReader, Depends(stack_log_reader)]


async def outside_log_reader(name: str, stacks: StacksDep) -> LogReader:
    """As `stack_log_reader`, for a container outside the stacks."""
    return await stacks.outside.log_reader(name)


OutsideLogReaderDep = Annotated[LogReader, Depends(outside_log_reader)]
TailQuery = Annotated[int, Query(ge=0, le=MAX_TAIL, description="Lines before following")]


async def _log_events(
    request: Request, principal: Principal, reader: LogReader, tail: int, follow: bool
) -> AsyncIterator[LogBatch]:
    """The batches of `reader`, then one with `end`, for as long as the credential that
    opened the stream is valid."""

    async def batches() -> AsyncIterator[LogBatch]:
        async for batch in log_batches(reader, tail, follow):
            yield LogBatch(batch)
        yield LogBatch([], end=True)

    async for batch in signed_in_stream(request, principal, batches()):
        yield batch


@router.get(
    "/stacks/{stack_id}/logs",
    operation_id="stackLogs",
    response_class=EventSourceResponse,
    dependencies=[Depends(require_operator)],
)
async def stack_logs(
    request: Request,
    principal: PrincipalDep,
    reader: LogReaderDep,
    tail: TailQuery = DEFAULT_TAIL,
    follow: Annotated[bool, Query(description="Go on with new lines as they come")] = True,
) -> AsyncIterator[LogBatch]:
    """Server-Sent Events, each a `LogBatch` of lines (oldest first; the first is the
    tail), then, with `follow`, more as the containers write them; containers that
    restart or are recreated are followed into their new life. Without `follow`, a batch
    with `end` after the tail. Closing the page ends the stream (and the engine's)."""
    async for batch in _log_events(request, principal, reader, tail, follow):
        yield batch


@router.get(
    "/stacks/{stack_id}/logs/download",
    operation_id="downloadStackLogs",
    response_class=StreamingResponse,
    dependencies=[Depends(require_operator)],
    responses={200: {"description": "The whole log as text", "content": {"text/plain": {}}}},
)
async def download_stack_logs(
    stack_id: str,
    reader: LogReaderDep,
    service: ServiceQuery = None,
    container: ContainerQuery = None,
) -> StreamingResponse:
    """Every line the containers have, merged by time: `time container stream text`."""
    name = "-".join(part for part in (stack_id, service or container) if part) + ".log"
    return StreamingResponse(
        log_text(reader),
        media_type="text/plain; charset=utf-8",
        headers={"Content-Disposition": content_disposition(name)},
    )


# -- containers outside the stacks ---------------------------------------------------------
_AUDITED: dict[ContainerAction, AuditAction] = {
    "start": "container.start",
    "stop": "container.stop",
    "restart": "container.restart",
}


@router.get("/containers", operation_id="outsideContainers")
def outside_containers(stacks: StacksDep) -> list[OutsideContainer]:
    """The host's containers that no stack owns (made by `docker run`, another tool, or a
    compose project whose folder is not a stack here), running or not."""
    return stacks.outside.list()


@router.post("/containers/{name}/actions/{action}", operation_id="outsideContainerAction")
def outside_container_action(
    name: str, action: ContainerAction, admin: AdminDep, audit: AuditDep, stacks: StacksDep
) -> OutsideContainer:
    """Start, stop or restart a container outside the stacks (admins; audited)."""
    with audit(admin, _AUDITED[action], name):
        return stacks.outside.act(name, action)


@router.get(
    "/containers/{name}/logs",
    operation_id="outsideContainerLogs",
    response_class=EventSourceResponse,
    dependencies=[Depends(require_admin)],
)
async def outside_container_logs(
    request: Request,
    principal: PrincipalDep,
    reader: OutsideLogReaderDep,
    tail: TailQuery = DEFAULT_TAIL,
) -> AsyncIterator[LogBatch]:
    """Server-Sent Events as for a stack's logs (`stackLogs`), of one container outside
    the stacks (admins: it is no stack's, so no stack's role reaches it), followed."""
    async for batch in _log_events(request, principal, reader, tail, True):
        yield batch


@router.get("/stacks/{stack_id}/usage/history", operation_id="stackUsageHistory")
async def stack_usage_history(stack_id: str, stacks: StacksDep) -> UsageHistory:
    """CPU and memory of the stack's containers over the last 15 minutes, a point every
    10 seconds, kept in memory while resource use is looked at (`hostUsage`)."""
    return await stacks.containers.usage_history(stack_id)


@router.get("/usage", operation_id="hostUsage")
async def host_usage(stacks: StacksDep) -> HostUsage:
    """Resource use of every running container of this host, per stack and in total:
    one call for all (the engine's streams are shared by every page that asks)."""
    return await stacks.containers.usage()


# -- the shell ---------------------------------------------------------------------------
def shell_gate(websocket: WebSocket) -> Gate:
    """Who may hold a shell opened by `websocket`: its user (signed in by API token, or by
    cookie from this service's own pages; on an agent, the central's user), while their
    sign-in and role allow it."""
    return Gate(
        admit=functools.partial(authenticate_websocket, websocket),
        role_now=functools.partial(role_now, websocket),
        accept_first=not is_agent(websocket),
    )


@sockets.websocket("/stacks/{stack_id}/containers/{container}/shell")
async def container_shell(
    websocket: WebSocket,
    stack_id: str,
    container: str,
    command: str = AUTO,
    cols: int = 80,
    rows: int = 24,
) -> None:
    """An interactive terminal (admins). Binary messages are the terminal's bytes both
    ways; a text message `{"type": "resize", "cols": C, "rows": R}` resizes it. The
    session ends, with everything it started, when the socket closes, and when the user's
    sign-in or role no longer allows it (close code 4401 or 4403); it is audited."""
    containers = get_stacks(websocket).containers  # type: ignore[arg-type]
    start = functools.partial(containers.open_shell, stack_id, container, command, cols, rows)
    place = HostContainer(stack_id, container, start)
    await hold_shell(websocket, shell_gate(websocket), place, audit_recorder(websocket))
