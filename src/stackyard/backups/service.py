"""Backups of this host's stacks: the inventory, creating an archive, restoring one, with
their progress as runs of the stack (one at a time per stack, followed like a deploy).

Around a capture the stack is made quiet: each running service's `stackyard.backup.pre`
hook runs (`docker exec`, `sh -c`, at most `stackyard.backup.timeout` seconds, 300 by
default; a database dump into a volume, say), a running stack is stopped, captured and
started again, then the `stackyard.backup.post` hooks run. A stopped stack stays stopped.
Whatever fails, a stack that was running is running again at the end. A restore stops a
running stack and starts it again the same way; a stopped one stays stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from stackyard import __version__
from stackyard.backups import capture, restore, tartool
from stackyard.backups.archive import ArchiveReader
from stackyard.backups.drill import SETTLE, Drill, DrillRecords, remove_leftovers
from stackyard.backups.inventory import inventory
from stackyard.backups.model import Asset, Inventory, Manifest
from stackyard.backups.names import archive_name
from stackyard.backups.restore import Declared, RestorePlan
from stackyard.backups.staging import Staging, host_paths
from stackyard.backups.store import ArchiveStore, VerifyReport
from stackyard.compose.progress import ProgressFold
from stackyard.compose.project import normalize_project_name
from stackyard.containers.shell import run_command
from stackyard.docker.containers import ContainerInfo
from stackyard.docker.details import inspect_container
from stackyard.docker.helper import Helpers
from stackyard.docker.own import overlap, own_container_id, own_mappings
from stackyard.errors import Conflict, Invalid, StackyardError
from stackyard.sizes import size_text
from stackyard.stacks.journal import Entry
from stackyard.stacks.runs import Run, progress_reporter

log = logging.getLogger(__name__)

PRE_HOOK = "stackyard.backup.pre"
POST_HOOK = "stackyard.backup.post"
HOOK_TIMEOUT = "stackyard.backup.timeout"
DEFAULT_HOOK_TIMEOUT = 300.0

if TYPE_CHECKING:
    from stackyard.stacks.service import StackService


class Into(Protocol):
    """Where a backup can be written straight into, instead of this host's archives (a
    repository destination)."""

    async def write(self, name: str, stack: str, capture: Callable[[Any], Manifest]) -> int:
        """`capture` run with a writer of members; the size of the archive kept."""
        ...


@dataclass(frozen=True)
class RestoreRequest:
    new_name: str | None = None
    overwrite: bool = False
    restore_binds: bool = True
    assets: list[str] | None = None
    special_files: bool = False
    bind_paths: dict[str, str] | None = None
    confirm_paths: list[str] | None = None


class BackupService:
    def __init__(self, stacks: StackService) -> None:
        self.stacks = stacks
        self.machine = stacks.machine
        self.store = ArchiveStore(self.machine.settings.data_dir / "backups")
        self.journal = self.machine.journal
        self.drills = DrillRecords(self.machine.settings.data_dir / "drills.json")

    def helpers(self) -> Helpers:
        return self.machine.helpers()

    def manifest(self, name: str) -> Manifest:
        with ArchiveReader(self.store.path(name)) as reader:
            return reader.manifest

    async def verify(self, name: str) -> VerifyReport:
        return await asyncio.to_thread(self.store.verify, name)

    def clean_up(self) -> None:
        """What an interrupted run of the service left: temporary archives, helpers."""
        try:
            self.store.sweep()
            self.helpers().sweep()
        except Exception:  # the engine may be away: the next start tries again
            log.warning("Cleaning up after an interrupted run failed", exc_info=True)

    # -- inventory ----------------------------------------------------------------------
    async def inventory(self, stack_id: str) -> Inventory:
        self.machine.store.folder(stack_id)
        return await asyncio.to_thread(inventory, self.machine, stack_id)

    # -- create -------------------------------------------------------------------------
    async def create(
        self, stack_id: str, selection: capture.Selection, into: Into | None = None
    ) -> Run:
        """Start a backup of the stack (its progress is the stack's run): into this host's
        archives, or straight `into` a repository (nothing kept on the host)."""
        found = await self.inventory(stack_id)
        chosen, skipped = capture.choose(found, selection)  # Invalid before anything runs
        fold = ProgressFold(mode="transfer")

        async def steps(run: Run) -> int:
            return await self._create(stack_id, found, chosen, skipped, run, into)

        return self.machine.runs.start(stack_id, "backup", fold, steps)

    async def _create(
        self,
        stack_id: str,
        found: Inventory,
        chosen: list[Asset],
        skipped: dict[str, str],
        run: Run,
        into: Into | None,
    ) -> int:
        # Three sizes, each said for what it is: the data the dialog estimated (the
        # inventory's), the data read so far of it (the counter), and the archive written
        # (compressed: smaller, as a rule).
        total = sum(a.size or 0 for a in chosen) + found.folder_size
        progress = progress_reporter(run, total, len(chosen), READING)
        created = datetime.now(UTC)
        name = archive_name(stack_id, await asyncio.to_thread(self.machine.host_name), created)
        temporary = self.store.temporary(name)
        hooks = await asyncio.to_thread(self._hooks, stack_id)
        running = await self._running(stack_id)
        run.feed_line(
            f"Backing up {stack_id}: the stack folder and {len(chosen)} of "
            f"{len(found.assets)} volumes and binds"
        )
        for key, reason in skipped.items():
            run.feed_line(f"Not captured: {key.partition(':')[2]} ({reason})")
        meta = (await asyncio.to_thread(self.machine.host_name), __version__, created)
        args = (found, chosen, skipped, self.helpers(), self.machine.store.folder(stack_id), meta)
        try:
            await self._hook(run, hooks, running, PRE_HOOK)
            async with self._quiet(stack_id, running, run):
                if into is None:
                    level = self.machine.settings.backup_level
                    manifest = await asyncio.to_thread(
                        capture.write_archive, temporary, *args, level, progress
                    )
                else:
                    made: list[Manifest] = []

                    def plain(writer: capture.Writer) -> Manifest:
                        made.append(capture.capture_into(writer, *args, None, progress))
                        return made[0]

                    size = await into.write(name, stack_id, plain)
                    manifest = made[0]
                _said_of_the_copy(run, manifest)  # before the stack's restart is told
            await self._hook(run, hooks, await self._running(stack_id), POST_HOOK)
            if into is None:
                size = (await asyncio.to_thread(self.store.keep, temporary, name)).stat().st_size
        except StackyardError as exc:
            run.fail(exc.detail)  # the run says "backup failed" already
            return 1
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
        read = max(total, run.fold.transfer.bytes_done)
        run.artifact = name
        where = "" if into is None else " in the repository"
        run.summary = f"archive {name}{where} ({size_text(size)})"
        run.advance(read, read, len(chosen), len(chosen), "Data read")
        captured = sum(1 for a in manifest.assets if a.captured)
        how = "compressed" if into is None else "as tars, deduplicated and encrypted by restic"
        run.feed_line(
            f"Archive {name}{where}: {size_text(size)} {how}, from {size_text(read)} of data, "
            f"checked ({captured} volumes and binds captured)"
        )
        return 0

    # -- restore ------------------------------------------------------------------------
    def restore_plan(self, path: Path, request: RestoreRequest) -> tuple[RestorePlan, Path, str]:
        """What a restore does, checked before it starts: Conflict for an existing stack
        without `overwrite`, Invalid for a bad archive or choice."""
        restore_plan, folder_local, folder_host = self._plan(path, request)
        if self._exists(folder_local) and not request.overwrite:
            raise Conflict(
                f"Stack {restore_plan.target_id!r} exists: restoring over it needs overwrite "
                "(its volumes and bind folders are replaced by the archive's contents, and the "
                "archive's files replace those of its stack folder)"
            )
        return restore_plan, folder_local, folder_host

    async def preview(self, path: Path, request: RestoreRequest) -> restore.RestorePreview:
        """What restoring the archive at `path` would write (nothing is written)."""
        restore_plan, folder_local, _ = await asyncio.to_thread(self._plan, path, request)
        return restore.preview(restore_plan, self._exists(folder_local))

    @staticmethod
    def _exists(folder_local: Path) -> bool:
        return folder_local.exists() or folder_local.is_symlink()

    def _plan(self, path: Path, request: RestoreRequest) -> tuple[RestorePlan, Path, str]:
        with ArchiveReader(path) as reader:
            manifest = reader.manifest
        target = restore.target_id(manifest, request.new_name)
        folder_local = self.machine.stacks_dir / target
        if self._exists(folder_local):
            self.machine.store.folder(target)  # a real stack folder, not a link or a file
        folder_host = str(self.machine.project_dirs.project_dir(folder_local))
        plan = restore.plan(
            manifest,
            target,
            folder_host,
            request.restore_binds,
            request.assets,
            self._guarded(),
            request.bind_paths,
        )
        outside = [i.target for i in plan.items if i.kind == "bind" and i.inside is None]
        states = host_paths(self.helpers(), outside)
        reasons: dict[str, str] = {}
        for host, state in states.items():
            if state == "link":
                reasons[host] = f"{host} leads through a symbolic link on the host: never written"
            elif state == "exists" and plan.renamed and not request.overwrite:
                reasons[host] = f"{host} exists: a clone writes over a folder only with overwrite"
        plan = dataclasses.replace(plan, special_files=request.special_files, outside=states)
        return restore.without(plan, reasons), folder_local, folder_host

    def _guarded(self) -> Callable[[str], str | None]:
        """Host paths a restore never writes: those holding this service's own folders
        or inside them (another stack's folder, the trash, the service's own data)."""
        in_container = own_container_id() is not None
        mappings = own_mappings(self.machine.docker) if in_container else []
        own = {
            "data folder": self.machine.settings.data_dir.resolve(),
            "stacks folder": self.machine.stacks_dir.resolve(),
        }

        def reason(path: str) -> str | None:
            for what, local in own.items():
                if how := overlap(path, local, mappings, in_container):
                    where = "holds" if how == "holds" else "is inside"
                    return f"{path} {where} this service's {what}: never written"
            return None

        return reason

    async def restore(self, path: Path, request: RestoreRequest) -> Run:
        """Start restoring the archive at `path` (its progress is the target's run).
        Conflict when it would write outside the stack folder and `confirm_paths` is not
        the list of those paths (the user saw them in its preview)."""
        plan, folder_local, folder_host = await asyncio.to_thread(self.restore_plan, path, request)
        outside = plan.outside_paths
        if outside and sorted(request.confirm_paths or []) != sorted(outside):
            raise Conflict(
                "This restore writes outside the stack folder, into "
                + ", ".join(outside)
                + ": see its preview and confirm those paths (confirm_paths)"
            )
        fold = ProgressFold(mode="transfer")

        async def steps(run: Run) -> int:
            return await self._restore(path, plan, folder_local, folder_host, run)

        return self.machine.runs.start(plan.target_id, "restore", fold, steps)

    async def _restore(
        self,
        path: Path,
        plan: RestorePlan,
        folder_local: Path,
        folder_host: str,
        run: Run,
    ) -> int:
        target = plan.target_id
        running = await self._running(target) if folder_local.exists() else []
        with ArchiveReader(path) as reader:
            total = sum(reader.size(i.result.member or "") for i in plan.items)
            total += reader.size(reader.manifest.stack_member or "")
            checking = progress_reporter(
                run, total, len(plan.items), "Checking the archive (1 of 2)"
            )
            writing = progress_reporter(run, total, len(plan.items), "Writing the data (2 of 2)")
            run.feed_line(f"Restoring {path.name} as {target}: checking the archive first")
            if not await asyncio.to_thread(self.helpers().gnu_tar):
                run.feed_line(tartool.WRITTEN_WITHOUT_GNU_TAR)
            for key, reason in plan.skipped.items():
                line = f"Not restored: {key.partition(':')[2]} ({reason})"
                if reason in restore.CHOSEN:
                    run.feed_line(line)
                else:
                    run.leave_out(line)
            try:
                folders = await asyncio.to_thread(restore.check_archive, reader, plan, checking)
                async with self._quiet(target, running, run):
                    with self.journal.staging(target) as record:
                        done, left_out = await asyncio.to_thread(
                            restore.restore_data,
                            reader,
                            plan,
                            folders,
                            self.helpers(),
                            folder_local,
                            folder_host,
                            lambda staged: self.declared(staged, target),
                            writing,
                            record,
                        )
            except StackyardError as exc:
                run.fail(exc.detail)  # the run says "restore failed" already
                return 1
        self.machine.projects.forget(folder_local)
        self.machine.changed()
        run.advance(total, total, len(plan.items), len(plan.items), "Writing the data (2 of 2)")
        for line in done:
            run.feed_line(f"Restored {line}")
        run.summary = f"wrote {'; '.join(done)}" if done else "wrote nothing"
        for line in left_out:
            run.leave_out(f"Not restored: {line}")
        return 0

    # -- drills -------------------------------------------------------------------------
    async def drill(self, name: str, settle: int = SETTLE) -> Run:
        """Start a restore drill of the archive `name` (`stackyard.backups.drill`): a run
        of its stack; its record is kept by the run's id."""
        path = self.store.path(name)
        manifest = await asyncio.to_thread(self.manifest, name)
        stack = restore.target_id(manifest, None)
        fold = ProgressFold(mode="transfer")

        async def steps(run: Run) -> int:
            record = await Drill(self.machine, self.declared, self.drills, path, settle).run(
                run, stack
            )
            run.artifact = name
            if record.error is not None:
                run.fail(record.error)  # (the run says "drill failed" already)
                return 1
            run.summary = (
                f"restore verified: {record.compared} volumes and folders, {record.files} "
                f"files, {size_text(record.bytes)} the same as in {name}; the clone ran "
                f"({', '.join(record.services)})"
            )
            return 0

        return self.machine.runs.start(stack, "drill", fold, steps)

    # -- around the data ----------------------------------------------------------------
    async def _running(self, stack_id: str) -> list[ContainerInfo]:
        found, _ = await asyncio.to_thread(self.stacks.containers.of, stack_id)
        return [c for c in found if c.state == "running"]

    @contextlib.asynccontextmanager
    async def _quiet(
        self, stack_id: str, running: list[ContainerInfo], run: Run
    ) -> AsyncIterator[None]:
        """The stack stopped while the block runs, when it was running; started again
        after it, whatever happened."""
        if not running:
            run.feed_line("The stack is not running: it stays stopped")
            yield
            return
        with self.journal.stopping(stack_id, run.action):  # (so a restart starts it again)
            run.feed_line("Stopping the stack for a consistent copy")
            if await self.stacks.compose_steps(stack_id, (("stop",),), run) != 0:
                raise Conflict("The stack could not be stopped: nothing was copied")
            try:
                yield
            finally:
                run.feed_line("Starting the stack again")
                if await self.stacks.compose_steps(stack_id, (("up", "-d"),), run) != 0:
                    run.fail("The stack could not be started again: see the output above")

    async def recover(self, pending: list[Entry]) -> None:
        """The work a killed service left (`pending`: its journal as read when this
        start began, before any work of its own): each restore's staged writes finished
        or undone, each restore drill's clone removed, then each stack a backup or a
        restore had stopped started again. Per
        stack, a run of the interrupted action says what was done, and ends as
        "interrupted" (the stack's page, the fleet's attention list and the CLI show it)."""
        notes: dict[str, list[str]] = {}
        for entry in (e for e in pending if e.kind == "staging"):
            if self.machine.runs.held(entry.stack):
                continue  # its restore is alive after all (a CLI's), and ends it
            try:
                lines = await asyncio.to_thread(Staging.recover, self.helpers(), entry.data)
            except (StackyardError, OSError, KeyError, TypeError) as exc:
                log.warning("The interrupted restore of %s was not resolved: %s", entry.stack, exc)
                continue  # (the next start tries again)
            said = f"A restore into {entry.stack} begun {entry.began} was interrupted"
            notes.setdefault(entry.stack, []).extend(f"{said}: {line}" for line in lines)
            log.warning("%s: %s", said, "; ".join(lines))
            await asyncio.to_thread(self.journal.forget, entry)
        for entry in (e for e in pending if e.kind == "drill"):
            try:
                await asyncio.to_thread(remove_leftovers, self.helpers(), entry.data)
            except (StackyardError, OSError, KeyError) as exc:
                log.warning("The interrupted drill of %s was not removed: %s", entry.stack, exc)
                continue  # (the next start tries again)
            said = "A restore drill of %s begun %s was interrupted: its clone was removed"
            log.warning(said, entry.stack, entry.began)
            await asyncio.to_thread(self.journal.forget, entry)
        stopped = {e.stack: e for e in pending if e.kind == "stopped"}
        actions = {e.stack: e.action for e in pending}
        for stack in sorted(notes.keys() | stopped.keys()):

            async def steps(run: Run, stack: str = stack) -> int:
                run.recovering = True
                for line in notes.get(stack, []):
                    run.feed_line(line)
                entry = stopped.get(stack)
                if entry is None:
                    return 0
                run.feed_line(
                    f"This service stopped during a {entry.action} of {stack} (begun "
                    f"{entry.began}), which had stopped the stack: starting it again"
                )
                try:
                    return await self.stacks.compose_steps(stack, (("up", "-d"),), run)
                finally:
                    await asyncio.to_thread(self.journal.forget, entry)

            try:
                fold = ProgressFold(mode="json" if self.machine.tool.json_progress else "text")
                self.machine.runs.start(stack, actions[stack], fold, steps)
            except Conflict:  # busy: its work is alive after all (a CLI's), and ends it
                continue
            except StackyardError as exc:  # a stack removed meanwhile, say
                log.warning("%s was not started again: %s", stack, exc.detail)
                if stack in stopped:
                    await asyncio.to_thread(self.journal.forget, stopped[stack])

    def declared(self, staged: Path, target: str) -> Declared:
        """What a staged stack folder's compose file uses, as the stack `target` will
        name it: a volume named after the staged folder's project is named after the
        target's. A compose file an edit would refuse (references outside the folder,
        unbounded YAML, compose's own refusal) refuses the restore: Invalid."""
        try:
            raw = self.machine.projects.get(staged).raw
        except StackyardError as exc:
            raise Invalid(
                f"The archive's compose file is refused, as an edit would be: {exc.detail}"
            ) from exc
        finally:
            self.machine.projects.forget(staged)
        staged_project = normalize_project_name(staged.name)
        project = normalize_project_name(target)
        volumes = set()
        for key, spec in (raw.get("volumes") or {}).items():
            name = str((spec or {}).get("name") or key)
            if raw.get("name") == staged_project and name == f"{staged_project}_{key}":
                name = f"{project}_{key}"
            volumes.add(name)
        binds = {
            str(mount["source"])
            for service in (raw.get("services") or {}).values()
            for mount in (service or {}).get("volumes") or []
            if isinstance(mount, dict) and mount.get("type") == "bind" and mount.get("source")
        }
        return Declared(volumes, binds)

    def _hooks(self, stack_id: str) -> dict[str, dict[str, str]]:
        """Per service, its backup hook labels as the compose file gives them (`config`
        writes `$` as `$$`: read back as `$`)."""
        try:
            raw = self.machine.project(stack_id).raw
        except StackyardError:
            return {}
        hooks = {}
        for service, spec in (raw.get("services") or {}).items():
            labels = spec.get("labels") or {}
            wanted = {
                k: str(v).replace("$$", "$")
                for k, v in labels.items()
                if k.startswith("stackyard.backup.")
            }
            if wanted:
                hooks[str(service)] = wanted
        return hooks

    async def _hook(
        self,
        run: Run,
        hooks: dict[str, dict[str, str]],
        running: list[ContainerInfo],
        which: str,
    ) -> None:
        """Run hook `which` in every running container of each service that has it (the
        container's own labels say the command); a failure names the hook."""
        for service, labels in hooks.items():
            if not labels.get(which):
                continue
            containers = [c for c in running if c.service == service]
            if not containers:
                run.feed_line(f"Hook {which} of {service}: not run (the service is not running)")
                continue
            for container in containers:
                own = await asyncio.to_thread(self._labels_of, container.id)
                command = own.get(which) or labels[which]
                try:
                    timeout = float(own.get(HOOK_TIMEOUT) or labels.get(HOOK_TIMEOUT) or 0)
                except ValueError:
                    timeout = 0
                timeout = timeout or DEFAULT_HOOK_TIMEOUT
                run.feed_line(f"Hook {which} of {service} in {container.name}: {command}")
                code, output = await asyncio.to_thread(
                    run_command, self.machine.docker, container.id, command, timeout
                )
                for line in output.splitlines()[-20:]:
                    run.feed_line(f"  {line}")
                if code is None:
                    raise Invalid(f"Hook {which} of {service} did not finish within {timeout:g} s")
                if code != 0:
                    raise Invalid(f"Hook {which} of {service} failed (exit status {code})")

    def _labels_of(self, container_id: str) -> dict[str, str]:
        try:
            return inspect_container(self.machine.docker, container_id).labels
        except StackyardError:
            return {}


#: The stage of a backup's counter: the data read so far, of the data there is to read.
READING = "Reading the data"


def _said_of_the_copy(run: Run, manifest: Manifest) -> None:
    """What the copy could not keep as it was: files that went away or changed while
    read, and attributes a part was read without."""
    for result in manifest.assets:
        part = result.key.partition(":")[2]
        if result.vanished:
            run.feed_line(
                f"{part}: {len(result.vanished)} files went away while they were read, "
                f"so they are not in the archive ({_some(result.vanished)})"
            )
        if result.changed:
            run.feed_line(
                f"{part}: {len(result.changed)} files changed while they were read "
                f"(kept as read: {_some(result.changed)})"
            )
    if lost := tartool.lost(manifest):
        run.feed_line(lost)


def _some(names: list[str]) -> str:
    return ", ".join(names[:5]) + (", ..." * (len(names) > 5))
