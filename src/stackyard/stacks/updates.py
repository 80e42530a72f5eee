"""Image update detection: remote digests by HEAD (each distinct reference once per pass,
bounded concurrency, per-registry failures recorded), local digests from the engine, the
per-stack summary read from those caches only, and the auto-update pass."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import TypeAdapter

from stackyard.clock import utcnow
from stackyard.compose.project import Project
from stackyard.docker.images import local_images
from stackyard.errors import (
    Invalid,
    NotInRegistry,
    RegistryError,
    RegistryUnreachable,
    StackyardError,
)
from stackyard.registry.digests import DigestSnapshot, LocalDigest, RemoteDigest
from stackyard.registry.reference import ImageRef, parse_reference
from stackyard.stacks.machine import Machine
from stackyard.stacks.prefs import AutoUpdateOutcome
from stackyard.stacks.runs import RUN_ORIGIN, Run

log = logging.getLogger(__name__)

ImageState = Literal["update_available", "up_to_date", "pinned", "local", "unknown", "error"]
CONCURRENCY = 8  # registry requests in flight


@dataclass(frozen=True)
class ImageUpdate:
    service: str
    image: str
    state: ImageState
    local_digest: str | None
    remote_digest: str | None
    checked_at: datetime | None
    error: str | None


@dataclass(frozen=True)
class StackUpdate:
    stack: str
    has_update: bool
    auto_update: bool
    last_auto_update: AutoUpdateOutcome | None
    images: tuple[ImageUpdate, ...]


@dataclass(frozen=True)
class UpdateSummary:
    last_check: datetime | None
    stacks: tuple[StackUpdate, ...]


_SUMMARY = TypeAdapter(UpdateSummary)


def _when(text: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def _refs(project: Project) -> list[tuple[str, str, ImageRef | None]]:
    """(service, image text, parsed reference or None when it is not a registry image)."""
    found: list[tuple[str, str, ImageRef | None]] = []
    for service in project.services:
        if not service.image:
            continue
        try:
            found.append((service.name, service.image, parse_reference(service.image)))
        except Invalid:
            found.append((service.name, service.image, None))
    return found


def _tagged_refs(projects: Iterable[Project]) -> dict[str, ImageRef]:
    """The distinct registry images, by name, whose digest can change (not pinned)."""
    return {
        ref.name: ref
        for project in projects
        for _, _, ref in _refs(project)
        if ref is not None and not ref.pinned
    }


def image_state(ref: ImageRef | None, snapshot: DigestSnapshot) -> tuple[ImageState, str | None]:
    if ref is None:
        return "local", None
    if ref.pinned:
        return "pinned", None
    local = snapshot.local.get(ref.name)
    remote = snapshot.remote.get(ref.name)
    if local is not None and local.present and not local.digests:
        return "local", None  # built or loaded here: no registry digest to compare
    if remote is None:
        return "unknown", None
    if remote.status == "not_found":
        return "local", remote.error
    if remote.status == "error":
        return "error", remote.error
    if local is None or not local.present:
        return "unknown", None
    return ("up_to_date" if remote.digest in local.digests else "update_available"), None


class UpdateService:
    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self._summary: tuple[tuple[int, int], UpdateSummary] | None = None
        self._summary_json: tuple[UpdateSummary, bytes] | None = None
        self._check_lock = asyncio.Lock()

    # -- reading (caches only) --------------------------------------------------------
    def summary(self) -> UpdateSummary:
        """From the caches only: never a registry request, never a compose run."""
        key = self._key()
        if self._summary is None or self._summary[0] != key:
            self._summary = (key, self._build())
        return self._summary[1]

    def summary_json(self) -> bytes:
        """`summary()` as JSON: the UI polls it, so it is encoded once per change of the
        summary, not per request."""
        summary = self.summary()
        cached = self._summary_json
        if cached is None or cached[0] is not summary:
            cached = self._summary_json = (summary, _SUMMARY.dump_json(summary))
        return cached[1]

    def _key(self) -> tuple[int, int]:
        try:
            root_mtime = self.machine.stacks_dir.stat().st_mtime_ns
        except FileNotFoundError:
            root_mtime = 0
        return (self.machine.generation, root_mtime)

    def _build(self) -> UpdateSummary:
        snapshot = self.machine.digests.snapshot()
        prefs = self.machine.prefs.all()
        stacks = []
        for stack_id in self.machine.store.ids():
            project = self.machine.cached_project(stack_id)
            images = []
            for service, text, ref in _refs(project) if project else []:
                state, error = image_state(ref, snapshot)
                local = snapshot.local.get(ref.name) if ref else None
                remote = snapshot.remote.get(ref.name) if ref else None
                images.append(
                    ImageUpdate(
                        service=service,
                        image=text,
                        state=state,
                        local_digest=(
                            ref.digest
                            if ref and ref.pinned
                            else (local.digests[0] if local and local.digests else None)
                        ),
                        remote_digest=remote.digest if remote else None,
                        checked_at=_when(remote.checked_at) if remote else None,
                        error=error,
                    )
                )
            stack_prefs = prefs.get(stack_id)
            stacks.append(
                StackUpdate(
                    stack=stack_id,
                    has_update=any(i.state == "update_available" for i in images),
                    auto_update=bool(stack_prefs and stack_prefs.auto_update),
                    last_auto_update=stack_prefs.last_auto_update if stack_prefs else None,
                    images=tuple(images),
                )
            )
        return UpdateSummary(_when(snapshot.last_check), tuple(stacks))

    # -- refreshing -------------------------------------------------------------------
    async def _projects(self, stack_ids: list[str]) -> dict[str, Project]:
        resolved = await asyncio.to_thread(self.machine.resolve_all, stack_ids)
        projects: dict[str, Project] = {}
        for stack_id, result in resolved.items():
            if isinstance(result, Project):
                projects[stack_id] = result
            else:
                # Never the error text: it can quote the stack's .env or .secrets.
                log.info("Stack %s skipped in the update check: invalid compose file", stack_id)
        return projects

    async def check(self) -> UpdateSummary:
        """One pass over every stack: each distinct image reference asked once."""
        async with self._check_lock:
            projects = await self._projects(self.machine.store.ids())
            refs = _tagged_refs(projects.values())
            local = await asyncio.to_thread(self._local, list(refs.values()))
            # Built or loaded here (present, no registry digest): nothing to ask anyone.
            asked = [
                ref
                for name, ref in refs.items()
                if not (local[name].present and not local[name].digests)
            ]
            remote = await self._remote(asked)
            self.machine.digests.update(remote, local, checked_at=utcnow())
            self.machine.changed()
        return self.summary()

    def _local(self, refs: list[ImageRef]) -> dict[str, LocalDigest]:
        now = utcnow().isoformat()
        return {
            name: LocalDigest(image.present, list(image.digests), now)
            for name, image in local_images(self.machine.docker, refs).items()
        }

    async def _remote(self, refs: list[ImageRef]) -> dict[str, RemoteDigest]:
        results: dict[str, RemoteDigest] = {}
        down: dict[str, str] = {}  # registry -> why it failed this pass
        semaphore = asyncio.Semaphore(CONCURRENCY)
        client = await asyncio.to_thread(self.machine.registry_client)

        async def ask(ref: ImageRef) -> None:
            async with semaphore:
                now = utcnow().isoformat()
                if ref.api_host in down:
                    results[ref.name] = RemoteDigest("error", None, now, down[ref.api_host])
                    return
                try:
                    digest = await client.manifest_digest(ref)
                    results[ref.name] = RemoteDigest("ok", digest, now)
                except NotInRegistry as exc:
                    results[ref.name] = RemoteDigest("not_found", None, now, str(exc))
                except RegistryUnreachable as exc:
                    # Retry later: the rest of this registry's images wait for the next pass.
                    down[ref.api_host] = exc.detail
                    results[ref.name] = RemoteDigest("error", None, now, exc.detail)
                except RegistryError as exc:  # denied, or an answer we cannot use
                    results[ref.name] = RemoteDigest("error", None, now, exc.detail)

        try:
            await asyncio.gather(*(ask(ref) for ref in refs))
        finally:
            await client.aclose()
        for host, why in down.items():
            log.warning("Registry %s unreachable during the update check: %s", host, why)
        return results

    async def reconcile(self, stack_id: str) -> None:
        """After a pull or update: the stack's local digests, read again from the engine,
        so that its update indicator clears at once."""
        refs = _tagged_refs((await self._projects([stack_id])).values())
        if refs:
            local = await asyncio.to_thread(self._local, list(refs.values()))
            self.machine.digests.update(local=local)
        self.machine.changed()

    # -- auto-update ------------------------------------------------------------------
    async def auto_update(
        self, update_stack: Callable[[str], Awaitable[Run]]
    ) -> list[tuple[str, AutoUpdateOutcome]]:
        """Update the opted-in stacks that have a newer digest, one at a time."""
        done: list[tuple[str, AutoUpdateOutcome]] = []
        for stack in self.summary().stacks:
            if not (stack.auto_update and stack.has_update):
                continue
            origin = RUN_ORIGIN.set("auto-update")
            try:
                run = await update_stack(stack.stack)
                outcome = AutoUpdateOutcome(
                    utcnow(),
                    "updated" if run.status == "succeeded" else "failed",
                    "; ".join(run.fold.errors) or None,
                )
            except StackyardError as exc:
                outcome = AutoUpdateOutcome(utcnow(), "skipped", exc.detail)
            finally:
                RUN_ORIGIN.reset(origin)
            self.machine.prefs.change(stack.stack, outcome=outcome)
            self.machine.changed()
            log.info("Auto-update of %s: %s %s", stack.stack, outcome.outcome, outcome.detail or "")
            done.append((stack.stack, outcome))
        return done
