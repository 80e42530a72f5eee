"""Finds the compose tool once per process and whether it speaks `--progress json`."""

from __future__ import annotations

import functools
import shutil
from dataclasses import dataclass

from stackyard.errors import StackyardError
from stackyard.process import children
from stackyard.version import parse_semver

#: `--progress json` exists from compose 2.29.0.
JSON_PROGRESS_SINCE = (2, 29, 0)


@dataclass(frozen=True)
class ComposeTool:
    command: tuple[str, ...] | None  # None: no compose tool installed
    version: str | None
    json_progress: bool


def _version_of(command: tuple[str, ...]) -> str | None:
    try:
        done = children.run([*command, "version", "--short"], timeout=20)
    except (OSError, StackyardError):
        return None
    return done.stdout.strip().lstrip("v") if done.returncode == 0 else None


def _speaks_json(command: tuple[str, ...], version: str) -> bool:
    try:
        parsed = parse_semver(version)
    except ValueError:  # development builds print "dev": ask the tool itself
        try:
            done = children.run([*command, "--progress", "json", "version"], timeout=20)
        except (OSError, StackyardError):
            return False
        return done.returncode == 0
    return (parsed.major, parsed.minor, parsed.patch) >= JSON_PROGRESS_SINCE


def probe_command(command: tuple[str, ...]) -> ComposeTool | None:
    """What one compose command is and speaks; None when it does not answer."""
    if not shutil.which(command[0]):
        return None
    version = _version_of(command)
    if not version:
        return None
    return ComposeTool(command, version, _speaks_json(command, version))


def probe(docker_cli: str = "docker") -> ComposeTool:
    """The compose v2 plugin if it answers, else the v1 `docker-compose`."""
    for command in ((docker_cli, "compose"), ("docker-compose",)):
        tool = probe_command(command)
        if tool is not None:
            return tool
    return ComposeTool(None, None, False)


@functools.cache
def compose_tool() -> ComposeTool:
    """The probe result, computed once per process."""
    return probe()
