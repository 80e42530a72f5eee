"""Runs compose commands in a stack folder and streams their output lines."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from stackyard.compose.probe import ComposeTool
from stackyard.compose.project import compose_env
from stackyard.errors import Unavailable


def progress_args(tool: ComposeTool) -> list[str]:
    """The flags that pick the output format: JSON events, or plain text on older tools."""
    if tool.json_progress:
        return ["--progress", "json"]
    if tool.command and tool.command[-1] == "compose":  # v2 before 2.29
        return ["--ansi", "never", "--progress", "plain"]
    return ["--ansi", "never"]  # v1 docker-compose


async def run_compose(
    tool: ComposeTool,
    folder: Path,
    args: Sequence[str],
    on_line: Callable[[str], None],
    docker_host: str | None = None,
) -> int:
    """Run `compose <progress flags> ARGS` in `folder`; every output line goes to on_line.

    Output is split on both newlines and carriage returns (text progress redraws with \\r).
    """
    if tool.command is None:
        raise Unavailable("No compose tool is installed (docker compose v2 or docker-compose)")
    process = await asyncio.create_subprocess_exec(
        *tool.command,
        *progress_args(tool),
        *args,
        cwd=folder,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=compose_env(docker_host),
    )
    assert process.stdout is not None
    pending = b""
    try:
        while chunk := await process.stdout.read(65536):
            pending += chunk
            *lines, pending = pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
            for line in lines:
                on_line(line.decode(errors="replace"))
        if pending:
            on_line(pending.decode(errors="replace"))
        return await process.wait()
    except asyncio.CancelledError:
        process.terminate()
        await process.wait()
        raise
