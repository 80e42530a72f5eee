"""A stack folder's compose project, as `docker compose config` resolves it (interpolation,
override files, includes), cached until one of the folder's compose inputs changes.

Compose runs only after `check_references` found nothing outside the stack folder, with
the minimal environment of `stackyard.process.children.child_env`, under the limits of
the process seam: the stack's `.env` is the one source of interpolation."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from stackyard.compose.probe import ComposeTool
from stackyard.compose.references import COMPOSE_FILES, OVERRIDE_FILES, check_references
from stackyard.errors import ComposeRejected, Invalid, Unavailable
from stackyard.fs.jsonstore import JsonStore
from stackyard.process import children

__all__ = [
    "COMPOSE_FILES",
    "Project",
    "ProjectCache",
    "Service",
    "compose_file",
    "fingerprint",
    "run_config",
]

_INPUTS = (*COMPOSE_FILES, *OVERRIDE_FILES, ".env")
#: Seconds `docker compose config` may take.
CONFIG_TIMEOUT = 60
#: Version of the entries of the cache file. 2: resolved with the minimal environment and
#: checked references; entries resolved before (which could hold the service's own
#: variables or other files' contents) are dropped and resolved again.
CACHE_VERSION = 2


@dataclass(frozen=True)
class Service:
    name: str
    image: str | None  # None: built locally with no image name
    builds: bool


@dataclass(frozen=True)
class Project:
    name: str
    services: tuple[Service, ...]
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)


def compose_file(folder: Path) -> Path | None:
    for name in COMPOSE_FILES:
        if (folder / name).is_file():
            return folder / name
    return None


def run_config(
    tool: ComposeTool,
    folder: Path,
    files: list[Path] | None = None,
    env_file: Path | None = None,
    docker_host: str | None = None,
    project_dir: Path | None = None,
) -> dict[str, Any]:
    """`docker compose config` as JSON; Invalid carries compose's own error text (which
    can only quote files of the stack folder: the references are checked first).
    `project_dir`: the folder as the Docker host sees it (relative paths resolve to it)."""
    if tool.command is None:
        raise Unavailable("No compose tool is installed (docker compose v2 or docker-compose)")
    check_references(folder, files, env_file)
    args = [*tool.command]
    for file in files or []:
        args += ["-f", str(file)]
    if env_file is not None:
        args += ["--env-file", str(env_file)]
    args += ["--project-directory", str(project_dir or folder), "config", "--format", "json"]
    try:
        done = children.run(
            args,
            cwd=folder,
            timeout=CONFIG_TIMEOUT,
            env=children.child_env(docker_host),
            what="docker compose config",
        )
    except OSError as exc:
        raise Unavailable(f"docker compose config could not be started: {exc}") from exc
    except children.OutputTooLarge as exc:
        raise ComposeRejected(exc.detail) from exc
    if done.returncode != 0:
        message = done.stderr.strip() or done.stdout.strip() or "invalid compose file"
        raise ComposeRejected(message)
    try:
        return cast(dict[str, Any], json.loads(done.stdout))
    except json.JSONDecodeError as exc:
        raise Invalid("docker compose config did not return JSON") from exc


_PROJECT_CHARS = re.compile(r"[a-z0-9_-]")


def normalize_project_name(name: str) -> str:
    """Compose's normalisation of a project name: lowercase, only `[a-z0-9_-]`, no
    leading `_` or `-`. (`config` prints a top-level `name:` as written; the containers
    are labelled with the normalised name.)"""
    return "".join(_PROJECT_CHARS.findall(name.lower())).lstrip("_-")


def parse_project(config: dict[str, Any], default_name: str) -> Project:
    services = []
    for name, spec in sorted((config.get("services") or {}).items()):
        services.append(Service(name, spec.get("image"), "build" in spec))
    name = normalize_project_name(str(config.get("name") or "")) or default_name
    return Project(name, tuple(services), config)


_INPUT_ORDER = {name: n for n, name in enumerate(_INPUTS)}


def fingerprint(folder: Path) -> tuple[Any, ...]:
    """What identifies the state of a folder's compose inputs: each present file's name,
    mtime and size (links followed), in `_INPUTS` order. One directory read and a stat
    per present input: the stack list takes it for every stack on every call."""
    found = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name in _INPUT_ORDER:
                    try:
                        st = entry.stat()
                    except (FileNotFoundError, NotADirectoryError):
                        continue  # a dangling link
                    found.append((entry.name, st.st_mtime_ns, st.st_size))
    except (FileNotFoundError, NotADirectoryError):
        return ()
    found.sort(key=lambda stamp: _INPUT_ORDER[stamp[0]])
    return tuple(found)


class ProjectCache:
    """Resolved projects per folder, re-resolved when a compose input changes. Kept in a
    file too (`flush`), so that a restart does not run compose again for every stack."""

    def __init__(
        self,
        tool: Callable[[], ComposeTool],
        docker_host: str | None = None,
        path: Path | None = None,
        project_dir: Callable[[Path], Path] | None = None,
    ) -> None:
        self.tool = tool
        self.docker_host = docker_host
        self.path = path
        self.project_dir = project_dir or (lambda folder: folder)
        self._cache: dict[Path, tuple[tuple[Any, ...], Project | Invalid]] = self._load()
        self._dirty = False
        self._lock = threading.Lock()

    def get(self, folder: Path) -> Project:
        """The project, or Invalid (cached too, so a broken file is not re-run each time)."""
        stamp = fingerprint(folder)
        with self._lock:
            hit = self._cache.get(folder)
        if hit is None or hit[0] != stamp:
            try:
                result: Project | Invalid = parse_project(
                    run_config(
                        self.tool(),
                        folder,
                        docker_host=self.docker_host,
                        project_dir=self.project_dir(folder),
                    ),
                    folder.name,
                )
            except Invalid as exc:
                result = exc
            with self._lock:
                self._cache[folder] = (stamp, result)
                self._dirty = True
            hit = (stamp, result)
        if isinstance(hit[1], Invalid):
            raise hit[1]
        return hit[1]

    def fresh(self, folder: Path, stamp: tuple[Any, ...]) -> Project | Invalid | None:
        """The resolution of the folder as it is now (`stamp`: its `fingerprint`), or
        None when it was never resolved or has changed since: never runs compose."""
        with self._lock:
            hit = self._cache.get(folder)
        return hit[1] if hit is not None and hit[0] == stamp else None

    def cached(self, folder: Path) -> Project | None:
        """The last resolved project, without running compose (None when unknown)."""
        with self._lock:
            hit = self._cache.get(folder)
        return hit[1] if hit and isinstance(hit[1], Project) else None

    def forget(self, folder: Path) -> None:
        with self._lock:
            self._dirty = self._cache.pop(folder, None) is not None or self._dirty

    def flush(self) -> None:
        """Write the resolved projects out, if anything changed since the last flush."""
        if self.path is None:
            return
        with self._lock:
            if not self._dirty:
                return
            entries = [
                {
                    "v": CACHE_VERSION,
                    "folder": str(folder),
                    "project_dir": str(self.project_dir(folder)),
                    "stamp": stamp,
                    "config": result.raw,
                }
                for folder, (stamp, result) in self._cache.items()
                if isinstance(result, Project)
            ]
            self._dirty = False
        JsonStore(self.path).write(entries)

    def _load(self) -> dict[Path, tuple[tuple[Any, ...], Project | Invalid]]:
        if self.path is None:
            return {}
        try:
            entries = JsonStore(self.path).read([])
        except OSError:
            return {}
        loaded: dict[Path, tuple[tuple[Any, ...], Project | Invalid]] = {}
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or entry.get("v") != CACHE_VERSION:
                continue  # resolved by an older version: resolve again
            folder = Path(entry["folder"])
            if entry.get("project_dir", entry["folder"]) != str(self.project_dir(folder)):
                continue  # resolved against another host path of the stacks folder
            stamp = tuple(tuple(item) for item in entry["stamp"])
            loaded[folder] = (stamp, parse_project(entry["config"], folder.name))
        return loaded
