"""Host: the host-local parts of one machine's stacks, wired together once per process
(the central service for its own host, an agent for its host, the CLI)."""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docker

from stackyard.compose.probe import ComposeTool, compose_tool
from stackyard.compose.project import Project, ProjectCache, run_config
from stackyard.docker.engine import connect, insecure_registries
from stackyard.errors import StackyardError
from stackyard.registry.client import RegistryClient
from stackyard.registry.credentials import CredentialStore
from stackyard.registry.digests import DigestCache
from stackyard.settings import Settings
from stackyard.stacks.prefs import PrefsStore
from stackyard.stacks.runs import RunBoard
from stackyard.stacks.store import StackStore

#: `docker compose config` runs at once when resolving many stacks.
RESOLVE_CONCURRENCY = 4


class Host:
    def __init__(self, settings: Settings, tool: ComposeTool | None = None) -> None:
        self.settings = settings
        self.tool = tool or compose_tool()
        data = settings.data_dir
        self.stacks_dir = settings.stacks_dir.resolve()
        self.projects = ProjectCache(self.tool, settings.docker_host, data / "projects.json")
        self.store = StackStore(self.stacks_dir, self.validate)
        self.runs = RunBoard(data)
        self.digests = DigestCache(data / "digests.json")
        self.credentials = CredentialStore(
            data / "registry-credentials", settings.effective_secret_key
        )
        self.prefs = PrefsStore(data / "stack-prefs.json")
        # The summary's cache key part that the engine cannot tell: what changed on disk.
        self.generation = 0

    @functools.cached_property
    def docker(self) -> docker.DockerClient:
        return connect(self.settings.docker_host)

    def registry_client(self) -> RegistryClient:
        return RegistryClient(self.credentials.lookup, insecure_registries(self.docker))

    def validate(self, folder: Path, compose: Path, env_file: Path | None) -> None:
        run_config(self.tool, folder, [compose], env_file, self.settings.docker_host)

    def project(self, stack_id: str) -> Project:
        """The stack's resolved compose project (Invalid with compose's error)."""
        return self.projects.get(self.stacks_dir / stack_id)

    def resolve_all(self, stack_ids: list[str]) -> dict[str, Project | StackyardError]:
        """Every stack's project (or why it has none), a few compose runs at a time; the
        cache is written out afterwards."""

        def resolve(stack_id: str) -> Project | StackyardError:
            try:
                return self.project(stack_id)
            except StackyardError as exc:
                return exc

        with ThreadPoolExecutor(RESOLVE_CONCURRENCY) as pool:
            results = dict(zip(stack_ids, pool.map(resolve, stack_ids), strict=True))
        self.projects.flush()
        return results

    def cached_project(self, stack_id: str) -> Project | None:
        return self.projects.cached(self.stacks_dir / stack_id)

    def roots(self) -> list[Path]:
        """The stacks folder as this process and as the Docker host see it."""
        roots = [self.stacks_dir]
        host_dir = self.settings.effective_stacks_host_dir
        if host_dir.is_absolute() and host_dir not in roots:
            roots.append(host_dir)
        return roots

    def changed(self) -> None:
        """Something on disk or in the caches changed: summaries are rebuilt."""
        self.generation += 1

    def close(self) -> None:
        if "docker" in self.__dict__:
            self.docker.close()
