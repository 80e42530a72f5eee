"""One shell session: a browser's WebSocket relayed to a shell, this host's own (an exec in
one of its containers, `containers.shell`) or an agent's (the agent's WebSocket, which the
caller hands in as a `Place`), under one set of rules for both.

Only a user whose role has a shell opens one, and only while that stays so: their sign-in
(session or API token) is looked at again every few seconds while the shell is open, and a
sign-out, an expired session, a revoked token, a disabled account or a change of role ends
the shell at once. The browser is told why by the close code, the service's own (4000-4999:
4000 + the HTTP status that would say the same), which the UI's shell page reads. Opening,
a failure to open and the end are audited.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.websockets import WebSocket

from stackyard.auth.audit import Recorder
from stackyard.auth.permissions import LEAST_ROLE
from stackyard.auth.principal import Principal, Role
from stackyard.auth.streams import RECHECK_SECONDS
from stackyard.containers.shell import Session
from stackyard.errors import AgentError, Forbidden, NotFound, StackyardError, Unauthorized
from stackyard.jsonmodel import parse_json
from stackyard.uncancellable import to_the_end

#: The least role that has a shell.
SHELL_ROLE = LEAST_ROLE["stacks.shell"]

#: WebSocket close codes: the service's own (4000-4999), like HTTP's.
CLOSE_UNAUTHORIZED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
CLOSE_FAILED = 4500
#: The agent's shell could not be reached, or its connection was cut (as a 502 would say).
CLOSE_AGENT_FAILED = 4502
#: A close reason is at most 123 bytes (RFC 6455).
_REASON_BYTES = 123

#: What a shell and its browser send each other: the terminal's bytes, or a text message
#: (a control message from the browser: resize; an error from the service).
Message = bytes | str


@dataclass(frozen=True)
class Ending:
    """How a shell ended: the close the browser gets when the shell ended first (an agent's
    shell passes the agent's on), and what the audit entry of the end adds."""

    code: int = 1000
    reason: str = ""
    detail: str = ""


class Shell(Protocol):
    """An open shell, wherever it runs."""

    @property
    def opened(self) -> str:
        """What the audit entry of its opening says."""
        ...

    def output(self) -> AsyncIterator[Message]:
        """What it prints, until it ends."""
        ...

    async def send(self, message: Message) -> None:
        """A message of the browser's: keystrokes (bytes) or a control message (text)."""
        ...

    async def end(self) -> Ending:
        """End it, and everything it started."""
        ...


class Place(Protocol):
    """Where a shell opens: a container of this host, or of an agent."""

    async def locate(self) -> str:
        """The place's name in the audit log; raises when there is no such place (nothing
        was tried, so nothing is audited)."""
        ...

    async def open(self, principal: Principal) -> Shell:
        """The shell, opened for `principal`; raises when it cannot be (audited)."""
        ...


@dataclass(frozen=True)
class Gate:
    """Who may hold a shell. Both calls block (the database): they run in a thread."""

    #: The user asking; raises Unauthorized or Forbidden (not signed in, a bad CSRF value).
    admit: Callable[[], Principal]
    #: The role the user has now; None once the credential that proved them stops working.
    role_now: Callable[[Principal], Role | None]
    #: Seconds between two looks while the shell is open.
    every: float = RECHECK_SECONDS
    #: Accept the socket before the checks, so that a refusal reaches a browser as a close
    #: code and reason (a socket closed before it is accepted is an HTTP 403, which a page
    #: cannot read). Off on an agent: its caller is the central, which reads the 403 as the
    #: agent refusing it, and audits the shell as not opened.
    accept_first: bool = True


def refusal(role: Role | None) -> StackyardError | None:
    """Why a user whose sign-in gives `role` (None: gives nothing any more) may not hold a
    shell; None when they may."""
    if role is None:
        return Unauthorized("Your sign-in has ended (signed out, expired or revoked)")
    if not role.at_least(SHELL_ROLE):
        return Forbidden(f"A shell needs the {SHELL_ROLE} role")
    return None


def close_code(error: StackyardError) -> int:
    """The close code that says `error` to the browser."""
    if isinstance(error, Unauthorized):
        return CLOSE_UNAUTHORIZED
    if isinstance(error, Forbidden):
        return CLOSE_FORBIDDEN
    if isinstance(error, NotFound):
        return CLOSE_NOT_FOUND
    if isinstance(error, AgentError):
        return CLOSE_AGENT_FAILED
    return CLOSE_FAILED


def close_reason(text: str) -> str:
    """`text` cut to what a close frame carries."""
    return text.encode()[:_REASON_BYTES].decode(errors="ignore")


async def hold_shell(websocket: WebSocket, gate: Gate, place: Place, record: Recorder) -> None:
    """Open the shell at `place` for the user `gate` admits and relay it until the shell
    ends, the browser leaves, or the user's sign-in or role no longer allows it."""
    if gate.accept_first:
        await websocket.accept()
    try:
        principal = await asyncio.to_thread(gate.admit)
        refused = refusal(principal.role)
        if refused is not None:
            raise refused
        where = await place.locate()
    except StackyardError as exc:
        await _close(websocket, exc)
        return
    if not gate.accept_first:
        await websocket.accept()
    try:
        shell = await place.open(principal)
    except StackyardError as exc:
        # Audited first: once the browser has its close, the request may end at any await.
        await asyncio.to_thread(
            record, principal.username, "container.shell", where, "failure", exc.detail
        )
        with contextlib.suppress(Exception):  # the browser may have left
            await websocket.send_text(json.dumps({"type": "error", "detail": exc.detail}))
        await _close(websocket, exc)
        return
    began = time.monotonic()
    await asyncio.to_thread(
        record, principal.username, "container.shell", where, "success", shell.opened
    )

    async def out() -> None:
        async for message in shell.output():
            if isinstance(message, bytes):
                await websocket.send_bytes(message)
            else:
                await websocket.send_text(message)

    async def into() -> None:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("bytes") is not None:
                await shell.send(message["bytes"])
            elif message.get("text") is not None:
                await shell.send(message["text"])

    async def watch() -> StackyardError:
        while True:
            await asyncio.sleep(gate.every)
            refused = refusal(await asyncio.to_thread(gate.role_now, principal))
            if refused is not None:
                return refused

    watching = asyncio.create_task(watch())
    tasks: list[asyncio.Task[Any]] = [asyncio.create_task(out()), asyncio.create_task(into())]
    tasks.append(watching)
    for task in tasks:
        task.add_done_callback(_retrieved)
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        revoked = _result(watching)
        ended = _finish(websocket, shell, revoked, record, principal, where, began)
        await to_the_end(ended)  # the shell's processes end, whatever happens here


async def _finish(
    websocket: WebSocket,
    shell: Shell,
    revoked: StackyardError | None,
    record: Recorder,
    principal: Principal,
    where: str,
    began: float,
) -> None:
    if revoked is not None:  # the browser learns at once, before the shell's processes end
        await _close(websocket, revoked)
    ending = await shell.end()
    if revoked is None:
        await _close_with(websocket, ending.code, ending.reason)
    detail = f"closed after {round(time.monotonic() - began)} s"
    if ending.detail:
        detail += f", {ending.detail}"
    if revoked is not None:
        detail += f"; ended by the service: {revoked.detail}"
    await asyncio.to_thread(
        record, principal.username, "container.shell.end", where, "success", detail
    )


async def _close(websocket: WebSocket, error: StackyardError) -> None:
    await _close_with(websocket, close_code(error), error.detail)


async def _close_with(websocket: WebSocket, code: int, reason: str) -> None:
    with contextlib.suppress(Exception):  # already closed, by either side
        await websocket.close(code=code, reason=close_reason(reason))


def _result(watching: asyncio.Task[StackyardError]) -> StackyardError | None:
    """Why the watch ended the shell; None when it did not (or could not tell)."""
    if not watching.done() or watching.cancelled() or watching.exception() is not None:
        return None
    return watching.result()


def _retrieved(task: asyncio.Task[Any]) -> None:
    """A relay that failed (the browser or the shell went away mid-message) just ended:
    its error is taken, not logged as never retrieved."""
    if not task.cancelled():
        task.exception()


# -- this host's own shell: an exec in a container -------------------------------------------
@dataclass(frozen=True)
class ExecShell:
    """A `docker exec` session with a terminal (`containers.shell`) as a `Shell`: the
    browser's bytes are keystrokes; its text messages are control messages,
    `{"type": "resize", "cols": C, "rows": R}` or `{"type": "input", "data": "..."}`."""

    session: Session

    @property
    def opened(self) -> str:
        return f"opened: {' '.join(self.session.command)}"

    async def output(self) -> AsyncIterator[Message]:
        while chunk := await self.session.read():
            yield chunk

    async def send(self, message: Message) -> None:
        if isinstance(message, bytes):
            await self.session.write(message)
            return
        with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
            control = parse_json(message)
            if control.get("type") == "resize":
                await self.session.resize(int(control["cols"]), int(control["rows"]))
            elif control.get("type") == "input":
                await self.session.write(str(control["data"]).encode())

    async def end(self) -> Ending:
        exit_code = await self.session.exit_code()
        await self.session.close()
        return Ending(detail="" if exit_code is None else f"exit code {exit_code}")


@dataclass(frozen=True)
class HostContainer:
    """A container of this host, as a `Place`: `start` opens the exec."""

    stack_id: str
    container: str
    start: Callable[[], Awaitable[Session]]

    async def locate(self) -> str:
        return f"{self.stack_id}/{self.container}"

    async def open(self, principal: Principal) -> Shell:
        return ExecShell(await self.start())
