"""Programs run in a running container (`docker exec`): to their end, detached, or with
a terminal, whose connection is handed over as a plain socket (`Terminal`).

The engine's refusals are classified here: NotFound (no such container), Invalid (it is
not running), Unavailable (refused otherwise, or the engine cannot be reached)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from stackyard.docker import sdk
from stackyard.docker.engine import Engine, explain, unreachable
from stackyard.errors import Invalid, NotFound, StackyardError, Unavailable


@dataclass(frozen=True)
class ExecState:
    running: bool
    exit_code: int | None  # None while it runs


class Terminal:
    """A started program with a terminal: `sock`, its connection (non-blocking), and
    its size and state."""

    def __init__(
        self,
        client: Engine,
        container_id: str,
        exec_id: str,
        sock: socket.socket,
        release: Callable[[], object],
    ) -> None:
        self.client = client
        self.container_id = container_id
        self.id = exec_id
        self.sock = sock
        self._release = release  # the SDK's response around the socket

    def resize(self, cols: int, rows: int) -> None:
        try:
            self.client.api.exec_resize(self.id, height=rows, width=cols)
        except sdk.DockerException as exc:
            raise _classified(exc, self.container_id, "the shell") from exc

    def state(self) -> ExecState:
        try:
            info = self.client.api.exec_inspect(self.id)
        except sdk.DockerException as exc:
            raise _classified(exc, self.container_id, "the shell") from exc
        code = info.get("ExitCode")
        running = bool(info.get("Running"))
        return ExecState(running, None if running or code is None else int(code))

    def close(self) -> None:
        """Close the connection (the program goes on: the engine cannot stop it)."""
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(Exception):
            self._release()


def open_terminal(
    client: Engine,
    container_id: str,
    command: list[str],
    environment: Mapping[str, str],
    cols: int,
    rows: int,
) -> Terminal:
    """Start `command` with a terminal of `cols` x `rows`, its standard input open."""
    try:
        created = client.api.exec_create(
            container_id, command, stdin=True, tty=True, environment=dict(environment)
        )
        exec_id = str(created["Id"])
        response = client.api.exec_start(exec_id, tty=True, socket=True)
    except sdk.DockerException as exc:
        raise _classified(exc, container_id, "the shell") from exc
    raw: object = getattr(response, "_sock", response)
    if not isinstance(raw, socket.socket):
        response.close()
        raise Unavailable("This Docker address gives no plain socket for a terminal")
    raw.setblocking(False)
    terminal = Terminal(client, container_id, exec_id, raw, response.close)
    with contextlib.suppress(StackyardError):
        terminal.resize(cols, rows)
    return terminal


def run(
    client: Engine, container_id: str, command: list[str], environment: Mapping[str, str]
) -> tuple[int | None, str]:
    """Run `command` to its end: (its exit code, what it wrote)."""
    try:
        created = client.api.exec_create(container_id, command, environment=dict(environment))
        output = client.api.exec_start(created["Id"])
        info = client.api.exec_inspect(created["Id"])
    except sdk.DockerException as exc:
        raise _classified(exc, container_id, "the command") from exc
    text = output.decode(errors="replace") if isinstance(output, bytes) else ""
    return info.get("ExitCode"), text


def start_detached(client: Engine, container_id: str, command: list[str]) -> None:
    """Start `command` and leave it (its output is not kept)."""
    try:
        created = client.api.exec_create(container_id, command, stdout=False, stderr=False)
        client.api.exec_start(created["Id"], detach=True)
    except sdk.DockerException as exc:
        raise _classified(exc, container_id, "the command") from exc


def _classified(exc: sdk.DockerException, container_id: str, what: str) -> StackyardError:
    if isinstance(exc, sdk.NotFound):
        return NotFound(f"Container {container_id[:12]} does not exist")
    if isinstance(exc, sdk.APIError):
        if exc.status_code == 409:
            return Invalid(f"The container is not running: {exc.explanation}")
        return Unavailable(f"The engine refused {what}: {explain(exc)}")
    return unreachable(exc)
