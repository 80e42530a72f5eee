"""Machine: this machine's side of its stacks (the Docker engine, the compose tool, the
caches, the runs, the helper containers), wired together once per process: the central
service for its own host, an agent for its host, the CLI for one command."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stackyard.compose.declared import DeclaredCache
from stackyard.compose.probe import ComposeTool, compose_tool
from stackyard.compose.project import Project, ProjectCache, fingerprint, run_config
from stackyard.containers.usage import UsageCollector
from stackyard.docker.containers import running_containers
from stackyard.docker.engine import (
    Engine,
    connect,
    disconnect,
    engine_state,
    insecure_registries,
    ping,
)
from stackyard.docker.helper import Helpers
from stackyard.errors import Invalid, StackyardError, Unavailable
from stackyard.events import EventHub
from stackyard.process import children, tuning
from stackyard.registry.credentials import CredentialStore
from stackyard.registry.digests import DigestCache
from stackyard.settings import Settings
from stackyard.stacks.journal import Journal
from stackyard.stacks.news import run_event
from stackyard.stacks.prefs import PrefsStore
from stackyard.stacks.project_dirs import project_dirs
from stackyard.stacks.runs import RunBoard, RunState
from stackyard.stacks.store import StackStore
from stackyard.stacks.warmup import Warmer

if TYPE_CHECKING:
    from stackyard.db.admin_settings import AdminSettings
    from stackyard.docker.streams import EngineStreams
    from stackyard.registry.client import RegistryClient

#: `docker compose config` runs at once when resolving many stacks.
RESOLVE_CONCURRENCY = 4


class Machine:
    def __init__(
        self,
        settings: Settings,
        tool: ComposeTool | None = None,
        admin_settings: Callable[[], AdminSettings | None] = lambda: None,
    ) -> None:
        """`admin_settings`: where the registry logins are kept, when first needed (the
        central's database; none on an agent)."""
        self.settings = settings
        # Every child of this process (compose config, actions, the probe) runs under these.
        children.set_default_limits(
            children.Limits(settings.subprocess_memory_mb, settings.subprocess_cpu_seconds)
        )
        self._given_tool = tool
        data = settings.data_dir
        self.stacks_dir = settings.stacks_dir.resolve()
        self.project_dirs = project_dirs(self.stacks_dir, settings.effective_stacks_host_dir)
        self.projects = ProjectCache(
            lambda: self.tool,
            settings.docker_host,
            data / "projects.json",
            self.project_dirs.project_dir,
        )
        # What the files declare, for the list (no compose run); the full resolutions
        # the list lacks are made in the background.
        self.declared = DeclaredCache(children.child_env(settings.docker_host))
        self.warmer = Warmer(self._resolve_quietly, self._resolved)
        self.store = StackStore(self.stacks_dir, self.validate)
        self.runs = RunBoard(data)
        #: What happens on this host that someone may want to hear of (notifications).
        self.events = EventHub()
        self.runs.ended.append(self._run_ended)
        self.digests = DigestCache(data / "digests.json")
        self.credentials = CredentialStore(admin_settings)
        self.prefs = PrefsStore(data / "stack-prefs.json")
        #: Work to undo should the service die in it (backups, restores, updates).
        self.journal = Journal(data / "journal.json")
        # The summary's cache key part that the engine cannot tell: what changed on disk.
        self.generation = 0

    def stack_of(self, project: str) -> str | None:
        """The id of the stack a compose project is, if it is one of this host's."""
        return project if (self.stacks_dir / project).is_dir() else None

    def _run_ended(self, state: RunState, origin: str | None) -> None:
        event = run_event(state, origin)
        if event is not None:
            self.events.raise_event(event)

    @functools.cached_property
    def streams(self) -> EngineStreams:
        """Logs, resource use and events: async streams from the engine (made, with the
        aiohttp they are read with, when first asked for: a start needs none)."""
        from stackyard.docker.streams import EngineStreams

        return EngineStreams(self.settings.docker_host)

    @functools.cached_property
    def usage(self) -> UsageCollector:
        """Resource use of the running containers, collected while anyone looks."""
        return UsageCollector(
            self.streams, lambda: asyncio.to_thread(running_containers, self.docker)
        )

    @functools.cached_property
    def tool(self) -> ComposeTool:
        """The compose tool, probed when first needed (the warm-up needs it first: a
        start of the service does not wait for `docker compose version`)."""
        return self._given_tool or compose_tool()

    @functools.cached_property
    def docker(self) -> Engine:
        return connect(self.settings.docker_host)

    @functools.cached_property
    def _engine_name(self) -> str:
        client = self.docker  # no connection: raised, not remembered as no name
        try:
            return engine_state(client).name
        except Unavailable:
            return ""

    def host_name(self) -> str:
        """This host's name as its engine knows it (what archive names carry), or the
        setting STACKYARD_HOST_NAME when given."""
        return self.settings.host_name or self._engine_name or "host"

    def helpers(self) -> Helpers:
        """The helper-container runner of this service (its helpers labelled as its own)."""
        owner = hashlib.sha256(str(self.settings.data_dir.resolve()).encode()).hexdigest()[:12]
        return Helpers(self.docker, self.settings.backup_helper_image, owner)

    def warm_up(self) -> None:
        """Ahead of the first request: connect to the engine, probe the compose tool and
        read every stack's files (what the list shows; their full resolutions follow in the
        background), so that the first list or action after a start does not pay for it.
        A failure is left for the requests to report."""
        with contextlib.suppress(Exception):
            ping(self.docker)
        self.tool  # noqa: B018 (probed now)
        with contextlib.suppress(Exception):
            self.listed_projects(self.store.ids())

    def registry_client(self) -> RegistryClient:
        """A client of the registries (httpx loads with the first: a start needs none)."""
        from stackyard.registry.client import RegistryClient

        return RegistryClient(self.credentials.lookup, insecure_registries(self.docker))

    def validate(self, folder: Path, compose: list[Path], env_file: Path | None) -> None:
        run_config(self.tool, folder, compose, env_file, self.settings.docker_host)

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

    def listed_projects(self, stack_ids: list[str]) -> dict[str, Project | StackyardError]:
        """Every stack's project for the list, without running compose: the full
        resolution where it is current, else what the files declare (for a project
        that uses what that reading does not model, `include` or `extends`, the last
        full resolution if there is one). Stacks without a current full resolution are
        resolved in the background; the list never waits for it."""
        results: dict[str, Project | StackyardError] = {}
        stale: list[tuple[Path, tuple[Any, ...]]] = []
        folders = set()
        for stack_id in stack_ids:
            folder = self.stacks_dir / stack_id
            folders.add(folder)
            stamp = fingerprint(folder)
            full = self.projects.fresh(folder, stamp)
            if full is not None:
                results[stack_id] = full
                continue
            stale.append((folder, stamp))
            declared = self.declared.get(folder, stamp)
            if declared.project is None:
                results[stack_id] = Invalid(declared.error or "Invalid compose file")
            elif declared.complete:
                results[stack_id] = declared.project
            else:
                results[stack_id] = self.projects.cached(folder) or declared.project
        self.declared.retain(folders)
        if stale:
            self.warmer.schedule(stale)
        return results

    def _resolve_quietly(self, folder: Path) -> None:
        """One background resolution; an invalid file is a result too (cached as such)."""
        with contextlib.suppress(Invalid), tuning.in_background():
            self.projects.get(folder)

    def _resolved(self) -> None:
        self.projects.flush()
        self.changed()

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

    async def aclose(self) -> None:
        """Stop the streams (resource use, the HTTP client of the streams), if any began."""
        if "usage" in self.__dict__:
            await self.usage.close()
        if "streams" in self.__dict__:
            await self.streams.aclose()

    def close(self) -> None:
        self.warmer.close()
        if "docker" in self.__dict__:
            disconnect(self.docker)
