"""An update that undoes itself when it goes wrong.

Before the pull, each service's container and the image (by id) it runs are recorded, and
each of those images is tagged `stackyard/rollback:<stack>.<service>` so that no prune
takes it while it is a rollback target (the tag stays until the next update of the stack
moves it: the previous version, for a rollback by hand; images are never removed). After
`up -d`, each container the update created goes through the health gate (`stacks.gate`).
When one fails (or `up` itself does), every service's image reference is pointed back at
the image it ran before, the compose file edited by the update (a version tag) is put
back, `up -d` runs again, and the rolled-back containers go through the same gate: the
outcome is "rolled back", or, when that fails too, "the rollback failed" with what runs
now. Volumes and bind folders are not touched."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from stackyard.clock import utcnow
from stackyard.docker.engine import Engine
from stackyard.docker.images import image_id_of, put_tag, repo_digests
from stackyard.docker.lives import Running, life_of, project_containers
from stackyard.errors import Invalid, StackyardError
from stackyard.registry.reference import parse_reference
from stackyard.stacks.gate import GateFailure, gate, trouble
from stackyard.stacks.machine import Machine
from stackyard.stacks.policy import UpdatePolicy
from stackyard.stacks.prefs import StackPrefs, UpdateOutcome
from stackyard.stacks.runs import RUN_ORIGIN, Run
from stackyard.stacks.tree import Tree

log = logging.getLogger(__name__)

Commands = tuple[tuple[str, ...], ...]
ComposeSteps = Callable[[Commands], Awaitable[int]]
#: The repository of the tags that keep rollback targets.
KEEP_REPOSITORY = "stackyard/rollback"


@dataclass(frozen=True)
class Before:
    """What ran before the update: each service's container and image, the compose file."""

    running: tuple[Running, ...]
    images: dict[str, str]  # service -> the image reference its compose file names
    compose: str | None = None  # the compose file as it was
    #: Other files of the stack folder the update writes, as they were (None: absent).
    files: Tree = field(default_factory=dict)

    def as_data(self) -> dict[str, Any]:
        return {
            "running": [[r.service, r.container_id, r.image_id] for r in self.running],
            "images": self.images,
            "compose": self.compose,
            "files": {
                path: None if data is None else base64.b64encode(data).decode()
                for path, data in self.files.items()
            },
        }

    @classmethod
    def of_data(cls, data: dict[str, Any]) -> Before:
        """From a journal entry (KeyError, TypeError, ValueError for one that does not fit)."""
        running = tuple(Running(str(s), str(c), str(i)) for s, c, i in data["running"])
        images = {str(k): str(v) for k, v in dict(data["images"]).items()}
        compose = data.get("compose")
        files = {
            str(path): None if text is None else base64.b64decode(str(text))
            for path, text in dict(data.get("files") or {}).items()
        }
        return cls(running, images, compose if isinstance(compose, str) else None, files)


#: Edits the compose file to newer version tags and says what to pull: (image name -> its
#: new tag; the pull commands).
Prepare = Callable[[], Awaitable[tuple[dict[str, str], Commands]]]


def keep_tag(stack: str, service: str) -> str:
    tag = f"{stack}.{service}"
    if len(tag) > 128 or not tag[0].isalnum():
        tag = "h" + hashlib.sha256(tag.encode()).hexdigest()[:40]
    return f"{KEEP_REPOSITORY}:{tag}"


class GuardedUpdate:
    def __init__(
        self,
        machine: Machine,
        stack_id: str,
        project: str,
        policy: UpdatePolicy,
        run: Run,
        compose_steps: ComposeSteps,
    ) -> None:
        self.machine = machine
        self.stack_id = stack_id
        self.project = project  # the compose project's name
        self.policy = policy
        self.run = run
        self.compose_steps = compose_steps
        #: image name -> the version tag the compose file was edited to
        self.moved: dict[str, str] = {}

    @property
    def docker(self) -> Engine:
        return self.machine.docker

    async def perform(
        self, images: dict[str, str], prepare: Prepare, files: tuple[str, ...] = ()
    ) -> int:
        """Pull, `up -d`, the gate, and the rollback when needed; the exit code (non-zero
        when the update did not apply). `images`: each service's image reference as the
        compose file names it before the update; `files`: other files of the stack folder
        that `prepare` writes (put back as they were by a rollback). What ran before is in
        the journal until the update ends, so that a start after a kill undoes it
        (`undo_interrupted`). The outcome is kept for the stack."""
        before = await asyncio.to_thread(self._before, images, files)
        await asyncio.to_thread(self._keep, before)
        data = {**before.as_data(), "project": self.project}
        with self.machine.journal.updating(self.stack_id, data) as record:
            self.moved, pull = await prepare()
            if self.moved:
                record({"moved": self.moved})
            code = await self.compose_steps(pull) if pull else 0
            if code != 0:  # nothing was replaced
                await self._restore_compose(before)
                self._record(UpdateOutcome(utcnow(), "failed", "the pull failed", _by()))
                return code
            return await self._apply(before)

    async def undo_interrupted(self, data: dict[str, Any]) -> None:
        """An update the service was killed in (its journal entry's `data`): what ran
        before runs again (nothing is done when nothing was replaced)."""
        before = Before.of_data(data)
        self.moved = {str(k): str(v) for k, v in dict(data.get("moved") or {}).items()}
        now = {r.container_id for r in await asyncio.to_thread(self._containers)}
        edited = await asyncio.to_thread(self._edited, before)
        if not edited and now == {r.container_id for r in before.running}:
            self._say("Nothing had been replaced yet: nothing to undo")
            return
        failure = GateFailure("the update", "was interrupted: the service stopped while it ran", ())
        await self._roll_back(before, failure)

    async def _apply(self, before: Before) -> int:
        known = {r.container_id for r in before.running}
        code = await self.compose_steps((("up", "-d"),))
        created = await asyncio.to_thread(self._created, known)
        failure: GateFailure | None
        if code != 0:
            failure = GateFailure("the stack", "did not start: compose up failed", ())
        elif not created:
            self._record(UpdateOutcome(utcnow(), "updated", "nothing to recreate", _by()))
            return 0
        else:
            self._say(
                f"Waiting for {', '.join(sorted({c.service for c in created}))} to be up "
                f"(healthy, or running {self.policy.settle} s; at most "
                f"{self.policy.health_timeout} s)"
            )
            try:
                failure = await gate(
                    self.docker, created, self.policy.health_timeout, self.policy.settle
                )
            except StackyardError as exc:  # the engine stopped answering, say
                failure = GateFailure("the stack", f"could not be watched: {exc.detail}", ())
            if failure is None:
                self._say("Update healthy")
                self._record(UpdateOutcome(utcnow(), "updated", None, _by()), clear=True)
                return 0
        if not before.running:  # never started: no image to go back to
            detail = f"{failure}; nothing ran before this update: there is nothing to go back to"
            for line in failure.logs:
                self._say(f"  | {line}")
            self.run.fail(detail)
            self._record(UpdateOutcome(utcnow(), "failed", detail, _by(), failure.logs))
            return code or 1
        await self._roll_back(before, failure)
        return code or 1

    async def _roll_back(self, before: Before, failure: GateFailure) -> None:
        self._say(f"Rolling back: {failure}")
        for line in failure.logs:
            self._say(f"  | {line}")
        rolled_back = await asyncio.to_thread(self._point_back, before)
        for name, tag in self.moved.items():
            rolled_back.setdefault(name, []).append(f"tag:{tag}")
        await self._restore_compose(before)
        known = {r.container_id for r in await asyncio.to_thread(self._containers)}
        code = await self.compose_steps((("up", "-d"),))
        created = await asyncio.to_thread(self._created, known)
        again = (
            GateFailure("the stack", "did not start: compose up failed", ())
            if code != 0
            else await gate(self.docker, created, self.policy.health_timeout, self.policy.settle)
        )
        wrong = await asyncio.to_thread(self._not_back, before)
        if again is None and not wrong:
            detail = f"rolled back: {failure}"
            self._say("Rolled back: the previous images run again")
            self.run.rollback = "done"
            outcome = UpdateOutcome(utcnow(), "rolled_back", detail, _by(), failure.logs)
        else:
            now = await asyncio.to_thread(self._running_now)
            why = str(again) if again else "; ".join(wrong)
            detail = f"rolled back: {failure}; the rollback failed too ({why}); running now: {now}"
            self.run.rollback = "failed"
            outcome = UpdateOutcome(utcnow(), "rollback_failed", detail, _by(), failure.logs)
        self.run.fail(detail)
        self._record(outcome, rolled_back=rolled_back)

    async def _restore_compose(self, before: Before) -> None:
        """The stack's files as they were before the update (those it wrote)."""
        if before.files and await asyncio.to_thread(self._files_now, before) != before.files:
            self._say(f"The stack's files are as before again ({', '.join(sorted(before.files))})")
            await asyncio.to_thread(self.machine.store.put_files, self.stack_id, before.files)
        if (
            before.compose is not None
            and await asyncio.to_thread(self._compose_now) != before.compose
        ):
            self._say("The compose file is as before again")
            await asyncio.to_thread(
                self.machine.store.write, self.stack_id, "compose", before.compose
            )

    # -- the engine (blocking: called in threads) ------------------------------------
    def _before(self, images: dict[str, str], files: tuple[str, ...]) -> Before:
        running = self._containers()
        written = self.machine.store.read_files(self.stack_id, list(files)) if files else {}
        return Before(
            tuple(r for r in running if r.service in images), images, self._compose_now(), written
        )

    def _compose_now(self) -> str:
        return self.machine.store.read(self.stack_id).compose

    def _files_now(self, before: Before) -> Tree:
        return self.machine.store.read_files(self.stack_id, list(before.files))

    def _edited(self, before: Before) -> bool:
        """Whether the update changed the stack's files yet."""
        return self._compose_now() != before.compose or (
            bool(before.files) and self._files_now(before) != before.files
        )

    def _keep(self, before: Before) -> None:
        """Tag each image that ran before: a prune leaves a tagged image."""
        for running in before.running:
            try:
                put_tag(self.docker, running.image_id, keep_tag(self.stack_id, running.service))
            except StackyardError as exc:
                log.warning("Rollback target of %s: %s", running.service, exc.detail)

    def _containers(self) -> list[Running]:
        return project_containers(self.docker, self.project)

    def _created(self, known: set[str]) -> list[Running]:
        """The containers `up` created (not among `known`)."""
        return [r for r in self._containers() if r.container_id not in known]

    def _point_back(self, before: Before) -> dict[str, list[str]]:
        """Each service's image reference back on the image it ran; the digests given
        up, by image name."""
        given_up: dict[str, list[str]] = {}
        for running in before.running:
            reference = before.images[running.service]
            now = image_id_of(self.docker, reference)
            if now == running.image_id:
                continue
            if now is not None:
                try:
                    ref = parse_reference(reference)
                    given_up[ref.name] = repo_digests(self.docker, now, ref.repo_names)
                except Invalid:
                    pass
            put_tag(self.docker, running.image_id, reference)
        return given_up

    def _not_back(self, before: Before) -> list[str]:
        """The services not running the image they ran before."""
        now = {r.service: r.image_id for r in self._containers()}
        return [
            f"{r.service} runs another image"
            for r in before.running
            if now.get(r.service) not in (None, r.image_id)
        ]

    def _running_now(self) -> str:
        said = []
        for running in self._containers():
            life = life_of(self.docker, running.container_id)
            state = trouble(life) or (life.status if life else "gone")
            said.append(f"{running.service} {running.image_id[7:19]} ({state})")
        return ", ".join(sorted(said)) or "nothing"

    # -- saying and keeping ------------------------------------------------------------
    def _say(self, line: str) -> None:
        self.run.feed_line(line)

    def _record(
        self,
        outcome: UpdateOutcome,
        clear: bool = False,
        rolled_back: dict[str, list[str]] | None = None,
    ) -> None:
        def apply(prefs: StackPrefs) -> None:
            prefs.last_update = outcome
            if outcome.by == "auto-update":
                prefs.last_auto_update = outcome
            if clear:
                prefs.rolled_back.clear()
            for name, digests in (rolled_back or {}).items():
                prefs.rolled_back[name] = digests

        self.machine.prefs.change(self.stack_id, apply)
        self.machine.changed()


def _by() -> str | None:
    return RUN_ORIGIN.get()
