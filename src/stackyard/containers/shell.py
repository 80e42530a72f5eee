"""An interactive terminal in a running container: `docker exec` with a TTY, its
connection bridged to the caller (a WebSocket).

The engine keeps an exec's processes running when its connection closes (there is no
API to stop an exec), so every session's processes carry a marker in their environment,
and closing the session ends them: a short second exec signals every process of the
container whose environment holds the marker (SIGHUP, then SIGKILL).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import secrets
import shlex
import socket
from dataclasses import dataclass, field
from typing import Any

import docker
from docker.errors import APIError, DockerException
from docker.errors import NotFound as DockerNotFound

from stackyard.errors import Invalid, NotFound, Unavailable

log = logging.getLogger(__name__)

#: Starts bash where the container has it, else sh.
AUTO = "auto"
_AUTO_COMMAND = [
    "/bin/sh",
    "-c",
    "if command -v bash >/dev/null 2>&1; then exec bash; else exec sh; fi",
]
MARKER = "STACKYARD_SHELL"
MAX_COMMAND = 256
READ_SIZE = 64 * 1024

_STOP_SCRIPT = (
    "for p in /proc/[0-9]*; do "
    'if tr "\\0" "\\n" < "$p/environ" 2>/dev/null | grep -qx "$1"; then '
    'kill -"$2" "${p#/proc/}" 2>/dev/null; fi; done'
)


def command_for(choice: str) -> list[str]:
    """The program a session runs: `auto` (bash where present, else sh) or a command
    line of the caller's (split as a shell would, not run through one)."""
    choice = choice.strip()
    if not choice or choice == AUTO:
        return list(_AUTO_COMMAND)
    if len(choice) > MAX_COMMAND or "\0" in choice:
        raise Invalid(f"The command must be at most {MAX_COMMAND} characters")
    try:
        words = shlex.split(choice)
    except ValueError as exc:
        raise Invalid(f"The command cannot be read: {exc}") from exc
    if not words:
        raise Invalid("The command is empty")
    return words


@dataclass
class Session:
    client: docker.DockerClient
    container_id: str
    exec_id: str
    marker: str
    sock: socket.socket
    command: list[str]
    _response: Any = field(repr=False)
    _closed: bool = False

    async def read(self) -> bytes:
        """What the terminal printed; b"" once the program has ended."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.sock_recv(self.sock, READ_SIZE)
        except OSError:
            return b""

    async def write(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(OSError):
            await loop.sock_sendall(self.sock, data)

    async def resize(self, cols: int, rows: int) -> None:
        cols, rows = _size(cols, rows)
        with contextlib.suppress(DockerException):
            await asyncio.to_thread(self.client.api.exec_resize, self.exec_id, rows, cols)

    async def exit_code(self) -> int | None:
        with contextlib.suppress(DockerException):
            info = await asyncio.to_thread(self.client.api.exec_inspect, self.exec_id)
            if not info.get("Running"):
                code = info.get("ExitCode")
                return int(code) if code is not None else None
        return None

    async def close(self) -> None:
        """End the connection and every process the session started."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(Exception):
            self._response.close()
        running = True
        with contextlib.suppress(DockerException):
            info = await asyncio.to_thread(self.client.api.exec_inspect, self.exec_id)
            running = bool(info.get("Running"))
        if running:
            await self._signal("HUP")
            await asyncio.sleep(1.0)
            await self._signal("KILL")

    async def _signal(self, signal_name: str) -> None:
        try:
            await asyncio.to_thread(
                signal_marked, self.client, self.container_id, self.marker, signal_name
            )
        except DockerException as exc:
            log.warning("Could not end the shell session in %s: %s", self.container_id[:12], exc)


def signal_marked(client: docker.DockerClient, container_id: str, marker: str, signal: str) -> None:
    """Send `signal` to every process of the container whose environment has the marker
    (a short exec of its own; the engine cannot stop an exec)."""
    created = client.api.exec_create(
        container_id,
        ["/bin/sh", "-c", _STOP_SCRIPT, "stop", f"{MARKER}={marker}", signal],
        stdout=False,
        stderr=False,
    )
    client.api.exec_start(created["Id"], detach=True)


def run_command(
    client: docker.DockerClient, container_id: str, command: str, timeout: float
) -> tuple[int | None, str]:
    """Run `sh -c command` in the running container to its end, at most `timeout`
    seconds: (exit code, output); the code is None when it was stopped at the limit (it
    and what it started are ended, as a shell session's are)."""
    marker = secrets.token_hex(12)

    def execute() -> tuple[int | None, str]:
        created = client.api.exec_create(
            container_id, ["sh", "-c", command], environment={MARKER: marker}
        )
        output = client.api.exec_start(created["Id"])
        info = client.api.exec_inspect(created["Id"])
        text = output.decode(errors="replace") if isinstance(output, bytes) else ""
        return info.get("ExitCode"), text

    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(execute)
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        for signal in ("TERM", "KILL"):
            with contextlib.suppress(DockerException):
                signal_marked(client, container_id, marker, signal)
        return None, ""
    finally:
        pool.shutdown(wait=False)


def _size(cols: int, rows: int) -> tuple[int, int]:
    return max(1, min(int(cols), 1000)), max(1, min(int(rows), 1000))


async def open_session(
    client: docker.DockerClient, container_id: str, choice: str, cols: int, rows: int
) -> Session:
    """Start the program with a terminal of `cols` x `rows` in the running container."""
    command = command_for(choice)
    marker = secrets.token_hex(12)
    cols, rows = _size(cols, rows)

    def start() -> tuple[str, Any]:
        created = client.api.exec_create(
            container_id,
            command,
            stdin=True,
            tty=True,
            environment={MARKER: marker, "TERM": "xterm-256color"},
        )
        response = client.api.exec_start(created["Id"], tty=True, socket=True)
        with contextlib.suppress(DockerException):
            client.api.exec_resize(created["Id"], height=rows, width=cols)
        return created["Id"], response

    try:
        exec_id, response = await asyncio.to_thread(start)
    except DockerNotFound as exc:
        raise NotFound(f"Container {container_id[:12]} does not exist") from exc
    except APIError as exc:
        if exc.status_code == 409:
            raise Invalid(f"The container is not running: {exc.explanation}") from exc
        raise Unavailable(f"The engine refused the shell: {exc.explanation or exc}") from exc
    except DockerException as exc:
        raise Unavailable(f"Cannot reach the Docker engine: {exc}") from exc
    raw = getattr(response, "_sock", response)
    if not isinstance(raw, socket.socket):
        response.close()
        raise Unavailable("This Docker address gives no plain socket for a terminal")
    raw.setblocking(False)
    return Session(client, container_id, exec_id, marker, raw, command, response)
