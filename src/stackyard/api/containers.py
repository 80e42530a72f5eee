"""The routes to a stack's containers: logs (live and as a file), a shell, resource use;
and to the host's containers outside every stack: the list, start/stop/restart, logs."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
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
    require_admin,
    require_operator,
    signed_in_stream,
    still_valid,
)
from stackyard.api.files import content_disposition
from stackyard.auth.audit import AuditAction
from stackyard.auth.principal import Principal, Role
from stackyard.auth.streams import RECHECK_SECONDS
from stackyard.containers.logs import MAX_TAIL, LogLine, LogReader
from stackyard.containers.shell import AUTO
from stackyard.containers.usage import UsageHistory
from stackyard.docker.containers import ContainerAction
from stackyard.errors import Forbidden, StackyardError, Unauthorized
from stackyard.jsonmodel import parse_json
from stackyard.stacks.containers import DEFAULT_TAIL, HostUsage, OutsideContainer
from stackyard.stacks.service import StackService
from stackyard.uncancellable import to_the_end

#: Tagged "operate" in the OpenAPI schema, the contract the UI's client is generated from.
router = APIRouter(tags=["operate"], dependencies=[Depends(current_principal)])
#: WebSocket routes authenticate themselves (`authenticate_websocket`).
sockets = APIRouter(tags=["operate"])

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
    return await stacks.containers.outside_log_reader(name)


OutsideLogReaderDep = Annotated[LogReader, Depends(outside_log_reader)]
TailQuery = Annotated[int, Query(ge=0, le=MAX_TAIL, description="Lines before following")]


async def _log_events(
    request: Request,
    principal: Principal,
    stacks: StackService,
    reader: LogReader,
    tail: int,
    follow: bool,
) -> AsyncIterator[LogBatch]:
    """The batches of `reader`, then one with `end`, for as long as the credential that
    opened the stream is valid."""

    async def batches() -> AsyncIterator[LogBatch]:
        async for batch in stacks.containers.logs(reader, tail, follow):
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
    stacks: StacksDep,
    reader: LogReaderDep,
    tail: TailQuery = DEFAULT_TAIL,
    follow: Annotated[bool, Query(description="Go on with new lines as they come")] = True,
) -> AsyncIterator[LogBatch]:
    """Server-Sent Events, each a `LogBatch` of lines (oldest first; the first is the
    tail), then, with `follow`, more as the containers write them; containers that
    restart or are recreated are followed into their new life. Without `follow`, a batch
    with `end` after the tail. Closing the page ends the stream (and the engine's)."""
    async for batch in _log_events(request, principal, stacks, reader, tail, follow):
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
    stacks: StacksDep,
    reader: LogReaderDep,
    service: ServiceQuery = None,
    container: ContainerQuery = None,
) -> StreamingResponse:
    """Every line the containers have, merged by time: `time container stream text`."""
    name = "-".join(part for part in (stack_id, service or container) if part) + ".log"
    return StreamingResponse(
        stacks.containers.log_file(reader),
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
    return stacks.containers.outside()


@router.post("/containers/{name}/actions/{action}", operation_id="outsideContainerAction")
def outside_container_action(
    name: str, action: ContainerAction, admin: AdminDep, audit: AuditDep, stacks: StacksDep
) -> OutsideContainer:
    """Start, stop or restart a container outside the stacks (admins; audited)."""
    with audit(admin, _AUDITED[action], name):
        return stacks.containers.act_outside(name, action)


@router.get(
    "/containers/{name}/logs",
    operation_id="outsideContainerLogs",
    response_class=EventSourceResponse,
    dependencies=[Depends(require_admin)],
)
async def outside_container_logs(
    request: Request,
    principal: PrincipalDep,
    stacks: StacksDep,
    reader: OutsideLogReaderDep,
    tail: TailQuery = DEFAULT_TAIL,
) -> AsyncIterator[LogBatch]:
    """Server-Sent Events as for a stack's logs (`stackLogs`), of one container outside
    the stacks (admins: it is no stack's, so no stack's role reaches it), followed."""
    async for batch in _log_events(request, principal, stacks, reader, tail, True):
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
#: WebSocket close codes: the service's own (4000-4999), like HTTP's.
CLOSE_UNAUTHORIZED, CLOSE_FORBIDDEN, CLOSE_FAILED = 4401, 4403, 4500


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
    session ends, with everything it started, when the socket closes; it is audited."""
    try:
        principal = await asyncio.to_thread(authenticate_websocket, websocket)
        if not principal.has(Role.admin):
            raise Forbidden("A shell needs the admin role")
    except StackyardError as exc:
        code = CLOSE_UNAUTHORIZED if isinstance(exc, Unauthorized) else CLOSE_FORBIDDEN
        await websocket.close(code=code, reason=exc.detail[:120])
        return
    stacks, record = get_stacks(websocket), audit_recorder(websocket)  # type: ignore[arg-type]
    await websocket.accept()
    target = f"{stack_id}/{container}"
    try:
        session = await stacks.containers.open_shell(stack_id, container, command, cols, rows)
    except StackyardError as exc:
        await websocket.send_text(json.dumps({"type": "error", "detail": exc.detail}))
        await websocket.close(code=CLOSE_FAILED, reason=exc.detail[:120])
        await asyncio.to_thread(
            record, principal.username, "container.shell", target, "failure", exc.detail
        )
        return
    began = time.monotonic()
    shown = " ".join(session.command)
    await asyncio.to_thread(
        record, principal.username, "container.shell", target, "success", f"opened: {shown}"
    )

    async def out() -> None:
        while chunk := await session.read():
            await websocket.send_bytes(chunk)

    async def into() -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("bytes") is not None:
                await session.write(message["bytes"])
            elif message.get("text") is not None:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    control = parse_json(message["text"])
                    if control.get("type") == "resize":
                        await session.resize(int(control["cols"]), int(control["rows"]))
                    elif control.get("type") == "input":
                        await session.write(str(control["data"]).encode())

    async def revoked() -> None:
        while await asyncio.to_thread(still_valid, websocket, principal):
            await asyncio.sleep(RECHECK_SECONDS)

    async def finish() -> None:
        exit_code = await session.exit_code()
        await session.close()
        with contextlib.suppress(Exception):  # already closed, by either side
            await websocket.close()
        detail = f"closed after {round(time.monotonic() - began)} s"
        if exit_code is not None:
            detail += f", exit code {exit_code}"
        await asyncio.to_thread(
            record, principal.username, "container.shell.end", target, "success", detail
        )

    tasks = [asyncio.create_task(job()) for job in (out, into, revoked)]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await to_the_end(finish())  # the session's processes end, whatever happens here
