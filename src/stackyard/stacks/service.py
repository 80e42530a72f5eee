"""The stacks capability of one host: status, files, lifecycle actions, updates."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from stackyard.compose.progress import ProgressFold
from stackyard.compose.project import Project
from stackyard.compose.runner import run_compose
from stackyard.docker.containers import compose_containers
from stackyard.errors import Conflict, Invalid, NotFound, StackyardError
from stackyard.stacks.host import Host
from stackyard.stacks.prefs import StackPrefs
from stackyard.stacks.runs import Run
from stackyard.stacks.status import ContainerIndex, StackStatus, stack_status
from stackyard.stacks.store import FileKind, StackFiles
from stackyard.stacks.updates import UpdateService

log = logging.getLogger(__name__)

#: Each action is one or more compose commands, run in order, stopping at a failure.
ACTIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "start": (("up", "-d"),),
    "stop": (("stop",),),
    "restart": (("restart",),),
    "down": (("down",),),
    "pull": (("pull",),),
    "update": (("pull",), ("up", "-d")),
}
_PULLS = {"pull", "update"}


@dataclass(frozen=True)
class StackView:
    status: StackStatus
    busy: str | None  # the action in progress
    auto_update: bool


class StackService:
    def __init__(self, host: Host) -> None:
        self.host = host
        self.updates = UpdateService(host)

    # -- reading ----------------------------------------------------------------------
    def list(self) -> list[StackView]:
        index = ContainerIndex(compose_containers(self.host.docker), self.host.roots())
        projects = self.host.resolve_all(self.host.store.ids())
        prefs = self.host.prefs.all()
        return [
            self._view(stack_id, project, index, prefs.get(stack_id))
            for stack_id, project in projects.items()
        ]

    def get(self, stack_id: str) -> tuple[StackView, StackFiles]:
        files = self.host.store.read(stack_id)
        index = ContainerIndex(compose_containers(self.host.docker), self.host.roots())
        project = self.host.resolve_all([stack_id])[stack_id]
        return self._view(stack_id, project, index, self.host.prefs.get(stack_id)), files

    def _view(
        self,
        stack_id: str,
        project: Project | StackyardError,
        index: ContainerIndex,
        prefs: StackPrefs | None,
    ) -> StackView:
        if isinstance(project, StackyardError):
            project, error = None, project.detail
        else:
            error = None
        containers = index.of(stack_id, project.name if project else None)
        status = stack_status(stack_id, project, containers, error)
        return StackView(status, self.host.runs.busy(stack_id), bool(prefs and prefs.auto_update))

    def secrets(self, stack_id: str) -> str:
        return self.host.store.read_secrets(stack_id)

    def last_run(self, stack_id: str) -> dict:
        """The current or last run's state, with its output."""
        self.host.store.folder(stack_id)
        state = self.host.runs.last(stack_id)
        if state is None:
            raise NotFound(f"Stack {stack_id!r} has no run yet")
        return state

    async def follow(self, stack_id: str) -> AsyncIterator[dict]:
        """The run's state now and after each change, until it ends."""
        async for state in self.host.runs.follow(stack_id):
            yield state

    # -- changing files ---------------------------------------------------------------
    def create(self, name: str, compose: str, env: str = "") -> str:
        stack_id = self.host.store.create(name, compose, env)
        self._refresh(stack_id)
        return stack_id

    def save(self, stack_id: str, kind: FileKind, content: str) -> None:
        self.host.store.write(stack_id, kind, content)
        self._refresh(stack_id)

    def _refresh(self, stack_id: str) -> None:
        # A compose file that no longer resolves shows its error in the listing.
        with contextlib.suppress(StackyardError):
            self.host.project(stack_id)
        self.host.changed()

    async def delete(self, stack_id: str, remove_volumes: bool) -> None:
        """`down` (with named volumes only when asked), then remove the folder."""
        self.host.store.folder(stack_id)
        args = ("down", "--remove-orphans", *(("--volumes",) if remove_volumes else ()))
        run = await self.host.runs.run(
            stack_id, "delete", self._fold("down"), lambda r: self._steps(stack_id, (args,), r)
        )
        if run.status != "succeeded":
            raise Conflict(
                f"Stack {stack_id!r} was not deleted: compose down failed: "
                + "; ".join(run.fold.errors)
            )
        await asyncio.to_thread(self.host.store.delete_folder, stack_id)
        self.host.projects.forget(self.host.stacks_dir / stack_id)
        self.host.prefs.forget(stack_id)
        self.host.runs.forget(stack_id)
        self.host.changed()

    # -- actions ----------------------------------------------------------------------
    def start(self, stack_id: str, action: str) -> Run:
        """Begin an action; Conflict when the stack is busy. Progress: follow the run."""
        return self.host.runs.start(stack_id, action, *self._action(stack_id, action))

    async def run(self, stack_id: str, action: str) -> Run:
        """Run an action to its end (CLI, auto-update)."""
        return await self.host.runs.run(stack_id, action, *self._action(stack_id, action))

    def _action(self, stack_id: str, action: str):
        if action not in ACTIONS:
            raise Invalid(f"Unknown action {action!r}; one of {', '.join(ACTIONS)}")
        self.host.store.folder(stack_id)
        return self._fold(action), lambda run: self._perform(stack_id, action, run)

    def _fold(self, action: str) -> ProgressFold:
        return ProgressFold(
            mode="json" if self.host.tool.json_progress else "text",
            containers_expected=action != "pull",
        )

    async def _perform(self, stack_id: str, action: str, run: Run) -> int:
        code = await self._steps(stack_id, ACTIONS[action], run)
        if code == 0 and action in _PULLS:
            await self.updates.reconcile(stack_id)
        self.host.changed()
        return code

    async def _steps(self, stack_id: str, steps: tuple[tuple[str, ...], ...], run: Run) -> int:
        folder = self.host.store.folder(stack_id)
        for args in steps:
            code = await run_compose(
                self.host.tool, folder, args, run.feed_line, self.host.settings.docker_host
            )
            if code != 0:
                return code
        return 0

    # -- updates ----------------------------------------------------------------------
    def set_auto_update(self, stack_id: str, enabled: bool) -> None:
        self.host.store.folder(stack_id)
        self.host.prefs.change(stack_id, auto_update=enabled)
        self.host.changed()

    async def check_and_auto_update(self) -> None:
        await self.updates.check()
        await self.updates.auto_update(lambda stack_id: self.run(stack_id, "update"))

    async def watch(self, interval: float, first_delay: float = 30.0) -> None:
        """The background refresh: a check (then the auto-update pass) every `interval`."""
        await asyncio.sleep(first_delay)
        while True:
            try:
                await self.check_and_auto_update()
            except StackyardError as exc:
                log.warning("Update check failed: %s", exc.detail)
            except Exception:
                log.exception("Update check failed")
            await asyncio.sleep(interval)
