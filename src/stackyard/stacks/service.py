"""The stacks capability of one host: status, files, lifecycle actions, updates.

`StackView` and `StackDetail` are what the API serves of a stack, as they are (the
schema's descriptions are on their fields): the status from its containers, with what the
service adds, and on its page its files, the `.env` file for admins only."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import ConfigDict, Field, with_config

from stackyard.auth.audit import Recorder
from stackyard.auth.principal import Principal
from stackyard.compose.progress import ProgressFold
from stackyard.compose.project import Project, normalize_project_name
from stackyard.compose.runner import run_compose
from stackyard.containers.outside import OutsideContainers
from stackyard.docker.containers import compose_containers
from stackyard.errors import Conflict, Forbidden, Invalid, StackyardError
from stackyard.files import browse
from stackyard.process import tuning
from stackyard.registry.logins import RegistryLogins
from stackyard.registry.reference import parse_reference
from stackyard.stacks import removal
from stackyard.stacks.containers import StackContainers
from stackyard.stacks.guarded import Commands, GuardedUpdate
from stackyard.stacks.journal import Entry
from stackyard.stacks.machine import Machine
from stackyard.stacks.policy import UpdatePolicy
from stackyard.stacks.prefs import StackPrefs
from stackyard.stacks.pulls import pull_choice
from stackyard.stacks.removal import DeletePlan, DeleteResult
from stackyard.stacks.runs import Run, RunState, Steps
from stackyard.stacks.status import ContainerIndex, StackStatus, stack_status
from stackyard.stacks.store import FileKind
from stackyard.stacks.tree import Tree
from stackyard.stacks.updates import UpdateService
from stackyard.stacks.versions import retagged

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


#: Served as they are: every field is in each answer, so the schema says each is there
#: (`error` has a default).
@with_config(ConfigDict(json_schema_serialization_defaults_required=True))
@dataclass(frozen=True, kw_only=True)
class StackView(StackStatus):
    busy: Annotated[str | None, Field(description="The action in progress, if any")]
    auto_update: bool


@dataclass(frozen=True, kw_only=True)
class StackDetail(StackView):
    compose_file: str
    compose: str
    env: Annotated[str | None, Field(description="The `.env` file; null for roles below admin")]
    has_secrets: bool


class StackService:
    def __init__(self, machine: Machine, audit: Recorder | None = None) -> None:
        self.machine = machine
        #: Where the work of no request is audited (the central's log; None on an agent).
        self.audit = audit
        self.updates = UpdateService(machine)
        self.containers = StackContainers(machine)
        #: The host's containers that no stack owns (the stacks say which they own).
        self.outside = OutsideContainers(
            lambda: machine.docker, lambda: machine.streams, self.containers.owned
        )
        self.registries = RegistryLogins(machine.credentials)
        #: Why a stack's files may not be edited here (a stack from git), or None.
        self.read_only: Callable[[str], str | None] = lambda _: None
        #: Told of each stack deleted (what others keep of it goes with it).
        self.deleted: list[Callable[[str], None]] = []

    # -- reading ----------------------------------------------------------------------
    def list(self) -> list[StackView]:
        """Every stack from its files and one container listing: no compose run (full
        resolutions the list lacks are made in the background, see `Machine.listed_projects`)."""
        index = ContainerIndex(compose_containers(self.machine.docker), self.machine.roots())
        projects = self.machine.listed_projects(self.machine.store.ids())
        prefs = self.machine.prefs.all()
        default = self.machine.prefs.default_policy()
        return [
            self._view(stack_id, project, index, prefs.get(stack_id, StackPrefs()), default)
            for stack_id, project in projects.items()
        ]

    def detail(self, stack_id: str, principal: Principal) -> StackDetail:
        """The stack with its files; the `.env` file (secrets, often) for admins only."""
        files = self.machine.store.read(stack_id)
        index = ContainerIndex(compose_containers(self.machine.docker), self.machine.roots())
        project = self.machine.resolve_all([stack_id])[stack_id]
        prefs = self.machine.prefs
        view = self._view(stack_id, project, index, prefs.get(stack_id), prefs.default_policy())
        return StackDetail(
            **vars(view),
            compose_file=files.compose_name,
            compose=files.compose,
            env=files.env if principal.is_admin else None,
            has_secrets=files.has_secrets,
        )

    def _view(
        self,
        stack_id: str,
        project: Project | StackyardError,
        index: ContainerIndex,
        prefs: StackPrefs,
        default: UpdatePolicy,
    ) -> StackView:
        resolved: Project | None
        if isinstance(project, StackyardError):
            resolved, error = None, project.detail
        else:
            resolved, error = project, None
        containers = index.of(stack_id, resolved.name if resolved else None)
        last = prefs.last_update
        rolled_back = last is not None and last.outcome in ("rolled_back", "rollback_failed")
        status = stack_status(stack_id, resolved, containers, error, rolled_back)
        return StackView(
            **vars(status),
            busy=self.machine.runs.busy(stack_id),
            auto_update=prefs.effective(default).mode == "auto",
        )

    def require(self, stack_id: str) -> None:
        """NotFound unless the stack exists, or has a run (a restore making it)."""
        if self.machine.runs.last(stack_id) is None:
            self.machine.store.folder(stack_id)

    def secrets(self, stack_id: str) -> str:
        return self.machine.store.read_secrets(stack_id)

    def last_run(self, stack_id: str) -> RunState | None:
        """The current or last run's state, with its output (also of a restore that is
        making the stack, or failed to); None when the stack never ran anything."""
        state = self.machine.runs.last(stack_id)
        if state is None:
            self.machine.store.folder(stack_id)  # NotFound for a stack that is not there
        return state

    async def follow(self, stack_id: str) -> AsyncIterator[RunState]:
        """The run's state now and after each change, until it ends."""
        async for state in self.machine.runs.follow(stack_id):
            yield state

    # -- changing files ---------------------------------------------------------------
    def create(self, name: str, compose: str, env: str = "") -> str:
        stack_id = self.machine.store.create(name, compose, env)
        self._refresh(stack_id)
        return stack_id

    def create_from(self, name: str, files: Tree) -> str:
        """A new stack of `files` (relative path -> bytes), checked before it is in place."""
        stack_id = self.machine.store.create_from(name, files)
        self._refresh(stack_id)
        return stack_id

    def save(self, stack_id: str, kind: FileKind, content: str) -> None:
        if kind == "compose":  # (.env and .secrets are the host's own, whatever the source)
            self._editable(stack_id)
        self.machine.store.write(stack_id, kind, content)
        self._refresh(stack_id)

    def save_browsed(self, path: str, content: str, version: str | None) -> browse.TextFile:
        """A file of the stacks folder saved from the file browser: a stack's compose
        file or `.env` is checked as the stack page checks it (refused, it stays as it
        was); what the stacks show is rebuilt."""
        self.check_editable(path)
        saved = browse.save_text(
            self.machine.stacks_dir, path, content, version, self.machine.validate
        )
        self.machine.changed()
        return saved

    def _editable(self, stack_id: str) -> None:
        """Forbidden when the stack's files come from elsewhere and may not be edited here."""
        why = self.read_only(stack_id)
        if why is not None:
            raise Forbidden(why)

    def check_editable(self, *paths: str) -> None:
        """Forbidden when a path of the stacks folder (the file browser's) lies in a stack
        whose files may not be edited here (its `.env` and `.secrets` always may)."""
        for path in paths:
            first, _, rest = path.strip().strip("/").partition("/")
            if first not in ("", ".", "..") and rest not in (".env", ".secrets"):
                self._editable(first)

    def _refresh(self, stack_id: str) -> None:
        # A compose file that no longer resolves shows its error in the listing.
        with contextlib.suppress(StackyardError):
            self.machine.project(stack_id)
        self.machine.changed()

    def delete_plan(self, stack_id: str) -> DeletePlan:
        """What `delete` would remove, keep and move aside, said before it is done."""
        return removal.plan(self.machine, stack_id)

    async def delete(
        self, stack_id: str, remove_volumes: bool, confirm: str | None
    ) -> DeleteResult:
        """Refused unless `confirm` is the stack's id. `down` (named volumes only when
        asked), then the folder is moved aside to `.trash/<id>-<UTC time>`: never erased."""
        self.machine.store.folder(stack_id)
        removal.check_confirmation(stack_id, confirm)
        plan = await asyncio.to_thread(removal.plan, self.machine, stack_id, False)
        args = ("down", "--remove-orphans", *(("--volumes",) if remove_volumes else ()))
        # A compose file that no longer resolves cannot be brought down; with nothing
        # running from it there is nothing to bring down either.
        steps = () if plan.error is not None and not plan.containers else (args,)
        run = await self.machine.runs.run(
            stack_id, "delete", self._fold("down"), lambda r: self.compose_steps(stack_id, steps, r)
        )
        if run.status != "succeeded":
            raise Conflict(
                f"Stack {stack_id!r} was not deleted: compose down failed: "
                + "; ".join(run.fold.errors)
            )
        trash = await asyncio.to_thread(
            self.machine.store.delete_folder, stack_id, removal.trash_name(stack_id)
        )
        self.machine.projects.forget(self.machine.stacks_dir / stack_id)
        self.machine.prefs.forget(stack_id)
        self.machine.runs.forget(stack_id)
        for forget in self.deleted:
            forget(stack_id)
        self.machine.changed()
        existing = [v.name for v in plan.volumes if v.exists]
        return DeleteResult(
            stack=stack_id,
            trash=trash,
            containers=tuple(c.name for c in plan.containers),
            networks=plan.networks,
            volumes_removed=tuple(existing) if remove_volumes else (),
            volumes_kept=() if remove_volumes else tuple(existing),
        )

    # -- actions ----------------------------------------------------------------------
    def start(self, stack_id: str, action: str) -> Run:
        """Begin an action; Conflict when the stack is busy. Progress: follow the run."""
        return self.machine.runs.start(stack_id, action, *self._action(stack_id, action))

    async def run(self, stack_id: str, action: str) -> Run:
        """Run an action to its end (CLI, auto-update)."""
        return await self.machine.runs.run(stack_id, action, *self._action(stack_id, action))

    def _action(self, stack_id: str, action: str) -> tuple[ProgressFold, Steps]:
        if action not in ACTIONS:
            raise Invalid(f"Unknown action {action!r}; one of {', '.join(ACTIONS)}")
        self.machine.store.folder(stack_id)
        return self._fold(action), lambda run: self._perform(stack_id, action, run)

    def _fold(self, action: str) -> ProgressFold:
        return ProgressFold(
            mode="json" if self.machine.tool.json_progress else "text",
            containers_expected=action != "pull",
        )

    async def _perform(self, stack_id: str, action: str, run: Run) -> int:
        if action == "update":
            code = await self._update(stack_id, run)
        else:
            steps = ACTIONS[action]
            if action in _PULLS:
                steps = await self._pulling(stack_id, steps, run)
            code = await self.compose_steps(stack_id, steps, run)
        if action == "update" or (code == 0 and action in _PULLS):
            await self.updates.reconcile(stack_id)  # (a rollback put the old images back)
        self.machine.changed()
        return code

    async def _update(self, stack_id: str, run: Run) -> int:
        """To the newer version tags (when the policy follows them), pull and `up -d`
        through the health gate, rolled back when it fails."""
        try:  # as it runs now: what a rollback goes back to
            project = await asyncio.to_thread(self.machine.project, stack_id)
        except StackyardError:
            steps = await self._pulling(stack_id, ACTIONS["update"], run)
            return await self.compose_steps(stack_id, steps, run)  # compose says what is wrong

        async def prepare() -> tuple[dict[str, str], Commands]:
            moved = await asyncio.to_thread(self._to_newer_tags, stack_id, run)
            steps = await self._pulling(stack_id, ACTIONS["update"], run)
            return moved, tuple(args for args in steps if args[0] == "pull")

        images = {s.name: s.image for s in project.services if s.image}
        return await self._guarded(stack_id, project.name, run).perform(images, prepare)

    async def deploy(self, stack_id: str, files: Tree, said: str) -> Run:
        """`files` (relative path -> bytes; None: remove) written into the stack's folder
        (`said`: what is deployed, the run's first line and its summary)
        and brought up with `up -d` through the health gate, in a run of its own ("deploy");
        when that fails, the files as they were and what ran before run again
        (`GuardedUpdate`). Images the files name that are missing are pulled by `up`.
        Conflict when the stack is busy. The run, once it ended."""
        self.machine.store.folder(stack_id)

        async def steps(run: Run) -> int:
            run.feed_line(said)
            run.summary = said
            try:
                project = await asyncio.to_thread(self.machine.project, stack_id)
                name, images = project.name, {s.name: s.image for s in project.services if s.image}
            except StackyardError:  # nothing resolves now: there is nothing to go back to
                name, images = normalize_project_name(stack_id), {}

            async def prepare() -> tuple[dict[str, str], Commands]:
                await asyncio.to_thread(self.machine.store.put_files, stack_id, files)
                self.machine.changed()
                return {}, ()

            guarded = self._guarded(stack_id, name, run)
            code = await guarded.perform(images, prepare, tuple(files))
            self.machine.changed()
            return code

        return await self.machine.runs.run(stack_id, "deploy", self._fold("update"), steps)

    def _guarded(self, stack_id: str, project: str, run: Run) -> GuardedUpdate:
        return GuardedUpdate(
            self.machine,
            stack_id,
            project,
            self.machine.prefs.policy(stack_id),
            run,
            lambda commands: self.compose_steps(stack_id, commands, run),
        )

    async def recover(self, pending: Sequence[Entry]) -> None:
        """The updates a killed service left (`pending`: its journal as read when this
        start began): each undone, in a run that ends "interrupted" and says what it did."""
        for entry in (e for e in pending if e.kind == "updating"):

            async def undo(run: Run, entry: Entry = entry) -> int:
                run.recovering = True
                run.feed_line(
                    f"This service stopped during an update of {entry.stack} (begun "
                    f"{entry.began}): going back to what ran before it"
                )
                try:
                    project = str(entry.data["project"])
                    await self._guarded(entry.stack, project, run).undo_interrupted(entry.data)
                except (KeyError, TypeError, ValueError) as exc:
                    run.fail(
                        f"The update's journal entry cannot be read ({exc}): see to it by hand"
                    )
                finally:
                    await asyncio.to_thread(self.machine.journal.forget, entry)
                await self.updates.reconcile(entry.stack)
                return 0

            try:
                self.machine.runs.start(entry.stack, "update", self._fold("update"), undo)
            except Conflict:  # busy: its update is alive after all (a CLI's), and ends it
                continue
            except StackyardError as exc:  # a stack removed meanwhile, say
                log.warning(
                    "The interrupted update of %s was not undone: %s", entry.stack, exc.detail
                )
                await asyncio.to_thread(self.machine.journal.forget, entry)

    def _to_newer_tags(self, stack_id: str, run: Run) -> dict[str, str]:
        """The compose file edited to each newer version tag the update check found, saved
        as an edit is (checked); image name -> its new tag."""
        stack = next((s for s in self.updates.summary().stacks if s.stack == stack_id), None)
        moving = [i for i in stack.images if i.new_tag] if stack else []
        if not moving:
            return {}
        compose, moved = self.machine.store.read(stack_id).compose, {}
        for image in moving:
            ref = parse_reference(image.image)
            new_image = f"{image.image.removesuffix(f':{ref.tag}')}:{image.new_tag}"
            compose = retagged(compose, image.image, new_image)
            moved[ref.name] = str(image.new_tag)
            run.feed_line(f"{image.service}: {image.image} -> {new_image}")
        self.machine.store.write(stack_id, "compose", compose)
        return moved

    async def _pulling(
        self, stack_id: str, steps: tuple[tuple[str, ...], ...], run: Run
    ) -> tuple[tuple[str, ...], ...]:
        """The pull step names the services whose image comes from a registry; an image
        built or loaded here is never pulled. With none to pull the step is dropped (an
        update goes on with `up -d`)."""
        try:
            project = await asyncio.to_thread(self.machine.project, stack_id)
            choice = await asyncio.to_thread(pull_choice, self.machine, project)
        except StackyardError:
            return steps  # compose itself says what is wrong
        for service, why in choice.skipped:
            run.feed_line(f"Not pulling {service}: {why}")
        if not choice.pull:
            run.feed_line("Nothing to pull from a registry")
        return tuple(
            (*args, *choice.pull) if args[0] == "pull" else args
            for args in steps
            if args[0] != "pull" or choice.pull
        )

    async def compose_steps(
        self, stack_id: str, steps: tuple[tuple[str, ...], ...], run: Run
    ) -> int:
        """Compose commands in the stack's folder, one after another, their output into
        `run`; the first failing one's exit code (0 when all succeeded)."""
        folder = self.machine.store.folder(stack_id)
        for args in steps:
            code = await run_compose(
                self.machine.tool,
                folder,
                args,
                run.feed_line,
                self.machine.settings.docker_host,
                project_dir=self.machine.project_dirs.project_dir(folder),
            )
            if code != 0:
                return code
        return 0

    # -- updates ----------------------------------------------------------------------
    def set_auto_update(self, stack_id: str, enabled: bool) -> None:
        """The stack's policy with its mode auto, or notify."""
        policy = self.machine.prefs.policy(stack_id)
        self.set_policy(
            stack_id, policy.model_copy(update={"mode": "auto" if enabled else "notify"})
        )

    def set_policy(self, stack_id: str, policy: UpdatePolicy | None) -> None:
        """The stack's own update policy; None: the host's default. Invalid when its
        window never comes."""
        self.machine.store.folder(stack_id)
        if policy is not None:
            policy.checked()

        def apply(prefs: StackPrefs) -> None:
            prefs.policy = policy
            prefs.auto_update = policy is not None and policy.mode == "auto"

        self.machine.prefs.change(stack_id, apply)
        self.machine.changed()

    def set_default_policy(self, policy: UpdatePolicy) -> None:
        """Invalid when its window never comes."""
        self.machine.prefs.set_default_policy(policy.checked())
        self.machine.changed()

    async def check_and_auto_update(self, background: bool = False) -> None:
        """A check (`background`: the watch's, which leaves a registry whose quota is low
        alone), then the auto-update pass; each update it tried is audited (on the
        central) as the auto-update's."""
        await self.updates.check(background)
        done = await self.updates.auto_update(lambda stack_id: self.run(stack_id, "update"))
        for stack_id, outcome in done:
            if self.audit is not None and outcome.outcome != "skipped":
                ok = "success" if outcome.outcome == "updated" else "failure"
                self.audit("auto-update", "stack.update", stack_id, ok, outcome.detail)

    async def watch(self, interval: float, first_delay: float = 30.0) -> None:
        """The background refresh: a check (then the auto-update pass) every `interval`,
        the first after `first_delay` (or `interval`, when shorter)."""
        await asyncio.sleep(min(first_delay, interval))
        while True:
            try:
                with tuning.in_background():  # no request waits for it
                    await self.check_and_auto_update(background=True)
            except StackyardError as exc:
                log.warning("Update check failed: %s", exc.detail)
            except Exception:
                log.exception("Update check failed")
            await asyncio.sleep(interval)
