"""Runs compose commands in a stack folder and streams their output lines.

Through the process seam (`stackyard.process.children.stream`): the minimal environment,
the resource limits, and the child killed with its group when the caller is cancelled (a
client that disconnects from a streamed action). The folder's references are checked
first, as for `docker compose config`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from stackyard.compose.probe import ComposeTool
from stackyard.compose.references import check_references
from stackyard.errors import Unavailable
from stackyard.process import children


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
    limits: children.Limits | None = None,
    project_dir: Path | None = None,
) -> int:
    """Run `compose <progress flags> ARGS` in `folder`; every output line goes to on_line.
    `project_dir`: the folder's path as the Docker host sees it, where that differs and
    leads to the same folder (`stackyard.stacks.project_dirs`): relative paths resolve to it.

    Output is split on both newlines and carriage returns (text progress redraws with \\r)
    and decoded with replacement (never raises on output that is not UTF-8).
    """
    if tool.command is None:
        raise Unavailable("No compose tool is installed (docker compose v2 or docker-compose)")
    await asyncio.to_thread(check_references, folder)
    pending = b""

    def on_output(chunk: bytes) -> None:
        nonlocal pending
        pending += chunk
        *lines, pending = pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        for line in lines:
            on_line(line.decode(errors="replace"))

    try:
        code = await children.stream(
            [
                *tool.command,
                *progress_args(tool),
                *("--project-directory", str(project_dir or folder)),
                *args,
            ],
            on_output,
            cwd=folder,
            env=children.child_env(docker_host),
            limits=limits,
            what="docker compose",
        )
    except OSError as exc:
        raise Unavailable(f"docker compose could not be started: {exc}") from exc
    if pending:
        on_line(pending.decode(errors="replace"))
    return code
