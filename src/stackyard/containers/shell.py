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
from dataclasses import dataclass

from stackyard.docker.engine import Engine
from stackyard.docker.exec import Terminal, open_terminal, run, start_detached
from stackyard.errors import Invalid, StackyardError

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
    terminal: Terminal
    marker: str
    command: list[str]
    _closed: bool = False

    async def read(self) -> bytes:
        """What the terminal printed; b"" once the program has ended."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.sock_recv(self.terminal.sock, READ_SIZE)
        except OSError:
            return b""

    async def write(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(OSError):
            await loop.sock_sendall(self.terminal.sock, data)

    async def resize(self, cols: int, rows: int) -> None:
        cols, rows = _size(cols, rows)
        with contextlib.suppress(StackyardError):
            await asyncio.to_thread(self.terminal.resize, cols, rows)

    async def exit_code(self) -> int | None:
        with contextlib.suppress(StackyardError):
            return (await asyncio.to_thread(self.terminal.state)).exit_code
        return None

    async def close(self) -> None:
        """End the connection and every process the session started."""
        if self._closed:
            return
        self._closed = True
        self.terminal.close()
        running = True
        with contextlib.suppress(StackyardError):
            running = (await asyncio.to_thread(self.terminal.state)).running
        if running:
            await self._signal("HUP")
            await asyncio.sleep(1.0)
            await self._signal("KILL")

    async def _signal(self, signal_name: str) -> None:
        terminal = self.terminal
        try:
            await asyncio.to_thread(
                signal_marked, terminal.client, terminal.container_id, self.marker, signal_name
            )
        except StackyardError as exc:
            log.warning(
                "Could not end the shell session in %s: %s", terminal.container_id[:12], exc
            )


def signal_marked(client: Engine, container_id: str, marker: str, signal: str) -> None:
    """Send `signal` to every process of the container whose environment has the marker
    (a short exec of its own; the engine cannot stop an exec)."""
    start_detached(
        client, container_id, ["/bin/sh", "-c", _STOP_SCRIPT, "stop", f"{MARKER}={marker}", signal]
    )


def run_command(
    client: Engine, container_id: str, command: str, timeout: float
) -> tuple[int | None, str]:
    """Run `sh -c command` in the running container to its end, at most `timeout`
    seconds: (exit code, output); the code is None when it was stopped at the limit (it
    and what it started are ended, as a shell session's are)."""
    marker = secrets.token_hex(12)
    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(run, client, container_id, ["sh", "-c", command], {MARKER: marker})
    try:
        return future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        for signal in ("TERM", "KILL"):
            with contextlib.suppress(StackyardError):
                signal_marked(client, container_id, marker, signal)
        return None, ""
    finally:
        pool.shutdown(wait=False)


def _size(cols: int, rows: int) -> tuple[int, int]:
    return max(1, min(int(cols), 1000)), max(1, min(int(rows), 1000))


async def open_session(
    client: Engine, container_id: str, choice: str, cols: int, rows: int
) -> Session:
    """Start the program with a terminal of `cols` x `rows` in the running container."""
    command = command_for(choice)
    marker = secrets.token_hex(12)
    cols, rows = _size(cols, rows)
    environment = {MARKER: marker, "TERM": "xterm-256color"}
    terminal = await asyncio.to_thread(
        open_terminal, client, container_id, command, environment, cols, rows
    )
    return Session(terminal, marker, command)
