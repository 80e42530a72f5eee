"""A stack folder's compose project, as `docker compose config` resolves it (interpolation,
override files, includes), cached until one of the folder's compose inputs changes."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from stackyard.compose.probe import ComposeTool
from stackyard.errors import Invalid, Unavailable
from stackyard.files_atomic import write_atomic

#: Compose's own file names, in its order of preference.
COMPOSE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
_INPUTS = (
    *COMPOSE_FILES,
    "compose.override.yaml",
    "compose.override.yml",
    "docker-compose.override.yaml",
    "docker-compose.override.yml",
    ".env",
)


@dataclass(frozen=True)
class Service:
    name: str
    image: str | None  # None: built locally with no image name
    builds: bool


@dataclass(frozen=True)
class Project:
    name: str
    services: tuple[Service, ...]
    raw: dict = field(repr=False, compare=False, default_factory=dict)


def compose_file(folder: Path) -> Path | None:
    for name in COMPOSE_FILES:
        if (folder / name).is_file():
            return folder / name
    return None


def compose_env(docker_host: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if docker_host:
        env["DOCKER_HOST"] = docker_host
    # Interpolation must come from the stack's own .env, not from the service's environment.
    for key in ("COMPOSE_PROJECT_NAME", "COMPOSE_FILE", "COMPOSE_PROFILES"):
        env.pop(key, None)
    return env


def run_config(
    tool: ComposeTool,
    folder: Path,
    files: list[Path] | None = None,
    env_file: Path | None = None,
    docker_host: str | None = None,
) -> dict:
    """`docker compose config` as JSON; Invalid carries compose's own error text."""
    if tool.command is None:
        raise Unavailable("No compose tool is installed (docker compose v2 or docker-compose)")
    args = [*tool.command]
    for file in files or []:
        args += ["-f", str(file)]
    if env_file is not None:
        args += ["--env-file", str(env_file)]
    args += ["--project-directory", str(folder), "config", "--format", "json"]
    try:
        done = subprocess.run(
            args,
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=60,
            env=compose_env(docker_host),
        )
    except subprocess.TimeoutExpired as exc:
        raise Unavailable("docker compose config did not answer within 60 s") from exc
    if done.returncode != 0:
        message = done.stderr.strip() or done.stdout.strip() or "invalid compose file"
        raise Invalid(f"Invalid compose file: {message}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise Invalid("docker compose config did not return JSON") from exc


def parse_project(config: dict, default_name: str) -> Project:
    services = []
    for name, spec in sorted((config.get("services") or {}).items()):
        services.append(Service(name, spec.get("image"), "build" in spec))
    return Project(str(config.get("name") or default_name), tuple(services), config)


def _fingerprint(folder: Path) -> tuple:
    stamps = []
    for name in _INPUTS:
        try:
            st = (folder / name).stat()
        except FileNotFoundError:
            continue
        stamps.append((name, st.st_mtime_ns, st.st_size))
    return tuple(stamps)


class ProjectCache:
    """Resolved projects per folder, re-resolved when a compose input changes. Kept in a
    file too (`flush`), so that a restart does not run compose again for every stack."""

    def __init__(
        self, tool: ComposeTool, docker_host: str | None = None, path: Path | None = None
    ) -> None:
        self.tool = tool
        self.docker_host = docker_host
        self.path = path
        self._cache: dict[Path, tuple[tuple, Project | Invalid]] = self._load()
        self._dirty = False
        self._lock = threading.Lock()

    def get(self, folder: Path) -> Project:
        """The project, or Invalid (cached too, so a broken file is not re-run each time)."""
        stamp = _fingerprint(folder)
        with self._lock:
            hit = self._cache.get(folder)
        if hit is None or hit[0] != stamp:
            try:
                result: Project | Invalid = parse_project(
                    run_config(self.tool, folder, docker_host=self.docker_host), folder.name
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
                {"folder": str(folder), "stamp": stamp, "config": result.raw}
                for folder, (stamp, result) in self._cache.items()
                if isinstance(result, Project)
            ]
            self._dirty = False
        write_atomic(self.path, json.dumps(entries).encode(), mode=0o600)

    def _load(self) -> dict[Path, tuple[tuple, Project | Invalid]]:
        if self.path is None:
            return {}
        try:
            entries = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        loaded = {}
        for entry in entries:
            folder = Path(entry["folder"])
            stamp = tuple(tuple(item) for item in entry["stamp"])
            loaded[folder] = (stamp, parse_project(entry["config"], folder.name))
        return loaded
