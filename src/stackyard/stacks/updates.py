"""Image update detection: a check asks the registries (`stacks.lookups`: digests by
HEAD, each distinct reference once per pass; version tags; each newer image's release),
local digests come from the engine, the per-stack summary is read from those caches only
(each stack as its update policy says: newer digests or newer version tags), and the
auto-update pass applies what its policy allows."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, TypeAdapter, with_config

from stackyard.clock import utcnow
from stackyard.compose.project import Project
from stackyard.docker.images import local_images
from stackyard.errors import Invalid, StackyardError
from stackyard.registry.digests import DigestSnapshot, LocalDigest
from stackyard.registry.reference import ImageRef, parse_reference
from stackyard.registry.releases import Release
from stackyard.stacks.lookups import RegistryPass, low, repository_key
from stackyard.stacks.machine import Machine
from stackyard.stacks.policy import UpdatePolicy
from stackyard.stacks.prefs import StackPrefs, UpdateOutcome
from stackyard.stacks.runs import RUN_ORIGIN, Run
from stackyard.stacks.versions import Jump, Track, jump, newer_tag, tag_version

log = logging.getLogger(__name__)

ImageState = Literal["update_available", "up_to_date", "pinned", "local", "unknown", "error"]


@with_config(ConfigDict(json_schema_serialization_defaults_required=True))
@dataclass(frozen=True)
class ImageUpdate:
    service: str
    image: str
    state: ImageState
    local_digest: str | None
    remote_digest: str | None
    checked_at: datetime | None
    error: str | None
    #: When this host first saw the newer image (what the cooldown counts from).
    first_seen: datetime | None = None
    #: This newer image was tried, failed its health gate and was rolled back: the
    #: auto-update pass leaves it (a newer one is tried).
    rolled_back: bool = False
    #: The newer version tag within the policy's range (the update edits the compose
    #: file to it); null when the update is a newer digest of the same tag, or none.
    new_tag: str | None = None
    #: The running image's version (its `org.opencontainers.image.version` label).
    current_version: str | None = None
    #: What the newer image's labels say of its release (read once per image).
    release: Release | None = None
    #: How big the version step is (from the tags, else from the versions' labels).
    jump: Jump | None = None


@dataclass(frozen=True)
class RegistryQuota:
    """The pull quota a registry announced with its last answer."""

    registry: str
    limit: int
    remaining: int
    window_seconds: int | None
    seen_at: datetime | None
    #: The background check leaves this registry alone until its window has passed.
    waiting: bool


@with_config(ConfigDict(json_schema_serialization_defaults_required=True))
@dataclass(frozen=True)
class StackUpdate:
    stack: str
    has_update: bool
    auto_update: bool
    last_auto_update: UpdateOutcome | None
    images: tuple[ImageUpdate, ...]
    #: The policy in force (the stack's own, or the host's default).
    policy: UpdatePolicy = field(default_factory=UpdatePolicy)
    policy_inherited: bool = True
    #: The last update, by hand or by the auto-update pass.
    last_update: UpdateOutcome | None = None


@with_config(ConfigDict(json_schema_serialization_defaults_required=True))
@dataclass(frozen=True)
class UpdateSummary:
    last_check: datetime | None
    stacks: tuple[StackUpdate, ...]
    registries: tuple[RegistryQuota, ...] = ()


_SUMMARY = TypeAdapter(UpdateSummary)


def without_logs(summary: UpdateSummary) -> UpdateSummary:
    """The summary with the log lines of failed updates left out (null): for whoever may
    not read the stacks' logs, since what a failing image printed may hold secrets."""

    def hidden(outcome: UpdateOutcome | None) -> UpdateOutcome | None:
        return None if outcome is None else replace(outcome, logs=None)

    stacks = tuple(
        replace(s, last_update=hidden(s.last_update), last_auto_update=hidden(s.last_auto_update))
        for s in summary.stacks
    )
    return replace(summary, stacks=stacks)


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


def version_track(ref: ImageRef | None, policy: UpdatePolicy) -> Track | None:
    """The range in which the policy looks for newer version tags of this image; None
    when it looks for none (digests only, or a tag that is no version)."""
    if ref is None or ref.pinned or tag_version(ref.tag or "") is None:
        return None
    return None if policy.track == "digest" else policy.track


def newer_image(
    ref: ImageRef, policy: UpdatePolicy, snapshot: DigestSnapshot
) -> tuple[str | None, str | None]:
    """(the newer version tag within the policy's range, or None; the key of the newer
    image's release in the cache, or None when there is no newer image)."""
    track = version_track(ref, policy)
    if track is not None:
        key = repository_key(ref)
        tag = newer_tag(ref.tag or "", snapshot.tags.get(key, {}), track, policy.prereleases)
        if tag is not None:
            return tag, f"{key}:{tag}"
    remote = snapshot.remote.get(ref.name)
    if image_state(ref, snapshot)[0] == "update_available" and remote and remote.digest:
        return None, remote.digest
    return None, None


def _image(
    service: str,
    text: str,
    ref: ImageRef | None,
    policy: UpdatePolicy,
    snapshot: DigestSnapshot,
    given_up: list[str],
) -> ImageUpdate:
    state, error = image_state(ref, snapshot)
    local = snapshot.local.get(ref.name) if ref else None
    remote = snapshot.remote.get(ref.name) if ref else None
    new_tag, key = newer_image(ref, policy, snapshot) if ref else (None, None)
    if new_tag is not None and state in ("up_to_date", "update_available"):
        state = "update_available"
    release = snapshot.releases.get(key) if key else None
    current = local.version if local else None
    if new_tag is not None and ref is not None:
        first_seen = _when(snapshot.tags.get(repository_key(ref), {}).get(new_tag))
        rolled_back = f"tag:{new_tag}" in given_up
        step = jump(ref.tag, new_tag)
    else:
        first_seen = _when(remote.first_seen) if remote else None
        rolled_back = bool(state == "update_available" and remote and remote.digest in given_up)
        step = jump(current, release.version if release else None)
    return ImageUpdate(
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
        first_seen=first_seen,
        rolled_back=rolled_back,
        new_tag=new_tag,
        current_version=current,
        release=release,
        jump=step,
    )


class UpdateService:
    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self._summary: tuple[tuple[int, int], UpdateSummary] | None = None
        #: With the logs of failed updates (True) or without: the JSON of each, and the
        #: summary it was encoded from.
        self._summary_json: dict[bool, tuple[UpdateSummary, bytes]] = {}
        self._check_lock = asyncio.Lock()

    # -- reading (caches only) --------------------------------------------------------
    def summary(self) -> UpdateSummary:
        """From the caches only: never a registry request, never a compose run."""
        key = self._key()
        if self._summary is None or self._summary[0] != key:
            self._summary = (key, self._build())
        return self._summary[1]

    def summary_json(self, logs: bool) -> bytes:
        """`summary()` as JSON, with the logs of failed updates or without them (see
        `without_logs`): the UI polls it, so it is encoded once per change of the summary,
        not per request."""
        summary = self.summary()
        cached = self._summary_json.get(logs)
        if cached is None or cached[0] is not summary:
            shown = summary if logs else without_logs(summary)
            cached = self._summary_json[logs] = (summary, _SUMMARY.dump_json(shown))
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
        default = self.machine.prefs.default_policy()
        stacks = []
        for stack_id in self.machine.store.ids():
            project = self.machine.cached_project(stack_id)
            stack_prefs = prefs.get(stack_id, StackPrefs())
            policy = stack_prefs.effective(default)
            images = tuple(
                _image(
                    service,
                    text,
                    ref,
                    policy,
                    snapshot,
                    stack_prefs.rolled_back.get(ref.name, []) if ref else [],
                )
                for service, text, ref in (_refs(project) if project else [])
            )
            stacks.append(
                StackUpdate(
                    stack=stack_id,
                    has_update=policy.mode != "off"
                    and any(i.state == "update_available" for i in images),
                    auto_update=policy.mode == "auto",
                    last_auto_update=stack_prefs.last_auto_update,
                    images=images,
                    policy=policy,
                    policy_inherited=stack_prefs.policy is None and not stack_prefs.auto_update,
                    last_update=stack_prefs.last_update,
                )
            )
        now = utcnow()
        quotas = tuple(
            RegistryQuota(
                host, q.limit, q.remaining, q.window_seconds, _when(q.seen_at), low(q, now)
            )
            for host, q in sorted(snapshot.limits.items())
        )
        return UpdateSummary(_when(snapshot.last_check), tuple(stacks), quotas)

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

    async def check(self, background: bool = False) -> UpdateSummary:
        """One pass over every stack whose updates are looked for: each distinct image
        asked once, each followed repository's tags listed once, each newer image's labels
        read once ever. The background check leaves a registry whose quota is low alone."""
        async with self._check_lock:
            prefs, default = self.machine.prefs.all(), self.machine.prefs.default_policy()
            policies = {
                stack_id: prefs.get(stack_id, StackPrefs()).effective(default)
                for stack_id in self.machine.store.ids()
            }
            looked_for = [stack_id for stack_id, p in policies.items() if p.mode != "off"]
            projects = await self._projects(looked_for)
            refs = _tagged_refs(projects.values())
            local = await asyncio.to_thread(self._local, list(refs.values()))
            before, now = self.machine.digests.snapshot(), utcnow()
            waiting = {host for host, q in before.limits.items() if background and low(q, now)}
            # Built or loaded here (present, no registry digest): nothing to ask anyone.
            asked = [
                ref
                for name, ref in refs.items()
                if not (local[name].present and not local[name].digests)
                and ref.api_host not in waiting
            ]
            followed = {
                repository_key(ref): ref
                for stack_id, project in projects.items()
                for _, _, ref in _refs(project)
                if ref is not None
                and version_track(ref, policies[stack_id]) is not None
                and ref.api_host not in waiting
            }
            client = await asyncio.to_thread(self.machine.registry_client)
            try:
                lookup = RegistryPass(client, before, now)
                await lookup.digests(asked)
                await lookup.version_tags(list(followed.values()))
                seen = replace(
                    before,
                    remote=before.remote | lookup.remote,
                    local=before.local | local,
                    tags=before.tags | lookup.tags,
                )
                await lookup.labels(self._unread(projects, policies, seen))
            finally:
                await client.aclose()
            self.machine.digests.update(
                lookup.remote,
                local,
                checked_at=now,
                tags=lookup.tags,
                releases=lookup.releases,
                limits=lookup.limits(),
            )
            self.machine.changed()
        return self.summary()

    @staticmethod
    def _unread(
        projects: dict[str, Project], policies: dict[str, UpdatePolicy], seen: DigestSnapshot
    ) -> dict[str, tuple[ImageRef, str]]:
        """The newer images whose release was never read: key -> (image, tag or digest)."""
        wanted: dict[str, tuple[ImageRef, str]] = {}
        for stack_id, project in projects.items():
            for _, _, ref in _refs(project):
                if ref is None:
                    continue
                new_tag, key = newer_image(ref, policies[stack_id], seen)
                if key is not None and key not in seen.releases:
                    wanted[key] = (ref, new_tag or key)
        return wanted

    def _local(self, refs: list[ImageRef]) -> dict[str, LocalDigest]:
        now = utcnow().isoformat()
        return {
            name: LocalDigest(image.present, list(image.digests), now, image.version)
            for name, image in local_images(self.machine.docker, refs).items()
        }

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
        self, update_stack: Callable[[str], Awaitable[Run]], now: datetime | None = None
    ) -> list[tuple[str, UpdateOutcome]]:
        """Update the stacks whose policy is auto and that have a newer image, one at a
        time: each only inside its maintenance window (at `now`), with images past their
        cooldown, and never again to a digest that was rolled back."""
        done: list[tuple[str, UpdateOutcome]] = []
        now = now or utcnow()
        for stack in self.summary().stacks:
            if not (stack.auto_update and stack.has_update):
                continue
            try:
                waiting = _waiting(stack, now)
            except StackyardError as exc:  # a window stored before it was checked, say
                detail = f"its update policy cannot be applied: {exc.detail}"
                log.warning("Auto-update of %s skipped: %s", stack.stack, detail)
                outcome = UpdateOutcome(utcnow(), "skipped", detail, "auto-update")
                self._keep_outcome(stack.stack, outcome, quiet=True)
                done.append((stack.stack, outcome))
                continue
            if waiting == "":
                continue  # only what was rolled back: its outcome says so already
            if waiting is not None:
                outcome = UpdateOutcome(utcnow(), "skipped", waiting, "auto-update")
                self._keep_outcome(stack.stack, outcome, quiet=True)
                done.append((stack.stack, outcome))
                continue
            origin, started = RUN_ORIGIN.set("auto-update"), utcnow()
            try:
                run = await update_stack(stack.stack)
                kept = self.machine.prefs.get(stack.stack).last_auto_update
                if kept is not None and kept.by == "auto-update" and kept.at >= started:
                    outcome = kept
                else:
                    outcome = UpdateOutcome(
                        utcnow(),
                        "updated" if run.status == "succeeded" else "failed",
                        "; ".join(run.fold.errors) or None,
                        "auto-update",
                    )
                    self._keep_outcome(stack.stack, outcome)
            except StackyardError as exc:
                outcome = UpdateOutcome(utcnow(), "skipped", exc.detail, "auto-update")
                self._keep_outcome(stack.stack, outcome)
            finally:
                RUN_ORIGIN.reset(origin)
            log.info("Auto-update of %s: %s %s", stack.stack, outcome.outcome, outcome.detail or "")
            done.append((stack.stack, outcome))
        return done

    def _keep_outcome(self, stack: str, outcome: UpdateOutcome, quiet: bool = False) -> None:
        """The pass's outcome for a stack it did not update (a skip); a skip for the same
        reason as the last one is not written again."""
        last = self.machine.prefs.get(stack).last_auto_update
        if quiet and last and (last.outcome, last.detail) == (outcome.outcome, outcome.detail):
            return

        def apply(prefs: StackPrefs) -> None:
            prefs.last_auto_update = outcome

        self.machine.prefs.change(stack, apply)
        self.machine.changed()


def _waiting(stack: StackUpdate, now: datetime) -> str | None:
    """Why the auto-update pass leaves a stack with an update for now: "" when every
    newer image it has was rolled back; None when it goes ahead."""
    newer = [i for i in stack.images if i.state == "update_available"]
    if all(i.rolled_back for i in newer):
        return ""
    if not stack.policy.in_window(now):
        return f"waiting for the maintenance window ({stack.policy.window})"
    young = [
        i.image
        for i in newer
        if not i.rolled_back and not stack.policy.old_enough(i.first_seen, now)
    ]
    if young:
        return (
            f"waiting for {', '.join(young)} to be {stack.policy.cooldown_hours} h old (cooldown)"
        )
    return None
