"""Restore drills: a backup proven to restore, before anyone needs it.

A drill restores an archive into a scratch clone through the restore path itself (the
archive's members checked first, then written as a clone: its own volumes, its bind
folders in a scratch folder, never the original's), reads every volume and bind folder
it wrote back and compares it, entry by entry, with the archive's member (content,
owner, mode, time: `stackyard.backups.contents`), then starts the clone isolated (no
network, no published port, no fixed container name, no restart, nothing of the
original's mounted: `isolated`), waits for its health checks (or for it to keep running
for the settle time), and removes everything it made. The record ("restore verified",
or why not, with the figures) is kept per stack (`DrillRecords`); the drill is a run of
the stack (followed like a backup; its end is news: `drill_verified`, `drill_failed`).

Everything a drill makes is named by one compose project, `stackyard-drill-<token>`,
and one folder, `<stacks>/.stackyard-drills/<project>/` (hidden from the stacks list).
The journal names both before anything is made: a drill the service was killed in is
removed whole at the next start (`remove_leftovers`)."""

from __future__ import annotations

import asyncio
import copy
import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stackyard.backups import restore, tartool
from stackyard.backups.archive import ROOT, ArchiveReader, inflated
from stackyard.backups.contents import Contents, contents, differences
from stackyard.backups.restore import Declared, RestorePlan
from stackyard.clock import utcnow
from stackyard.compose.project import run_config
from stackyard.compose.runner import run_compose
from stackyard.docker.containers import ContainerInfo, project_containers, remove_project
from stackyard.docker.helper import HelperMount, Helpers
from stackyard.errors import Invalid, StackyardError
from stackyard.fs.jsonstore import JsonStore
from stackyard.stacks.runs import Run, progress_reporter

if TYPE_CHECKING:
    from stackyard.stacks.machine import Machine

#: The folder of the stacks folder where drills make their clones (hidden: a dot).
DRILLS = ".stackyard-drills"
PREFIX = "stackyard-drill-"
#: How long a clone must keep running when it has no health check (seconds).
SETTLE = 30
#: How long a drill waits for health checks to pass, at most (seconds).
HEALTH_WAIT = 300.0
POLL = 1.0
#: Records kept per stack.
KEEP = 50
_EXITED = re.compile(r"Exited \((\d+)\)")


@dataclass(frozen=True)
class DrillRecord:
    """What a drill found."""

    id: str = field(metadata={"description": "The run of the stack that was the drill"})
    stack: str
    archive: str
    clone: str = field(metadata={"description": "The scratch clone's compose project (removed)"})
    started_at: datetime
    finished_at: datetime
    verified: bool = field(
        metadata={"description": "Restore verified: written, compared equal, started"}
    )
    compared: int = field(metadata={"description": "Volumes and bind folders compared"})
    files: int
    bytes: int
    started: bool = field(metadata={"description": "The clone's services were started"})
    services: list[str] = field(metadata={"description": "Each service as it ended: healthy…"})
    notes: list[str] = field(metadata={"description": "What the drill left out, and why"})
    error: str | None = None


class DrillRecords:
    """The drills of this host's stacks, newest first per stack (the one JSON store)."""

    def __init__(self, path: Path) -> None:
        self._store = JsonStore(path)

    def add(self, record: DrillRecord) -> None:
        def change(data: dict[str, Any]) -> dict[str, Any]:
            kept = [r for r in data.get(record.stack, []) if r.get("id") != record.id]
            data[record.stack] = [_dumped(record), *kept][:KEEP]
            return data

        self._store.update(change, {})

    def of(self, stack: str) -> list[DrillRecord]:
        found = []
        for raw in (self._store.read({}) or {}).get(stack, []):
            try:
                found.append(_loaded(raw))
            except (TypeError, ValueError, KeyError):
                continue
        return found

    def get(self, stack: str, drill_id: str) -> DrillRecord | None:
        return next((r for r in self.of(stack) if r.id == drill_id), None)


def _dumped(record: DrillRecord) -> dict[str, Any]:
    data = dict(record.__dict__)
    data["started_at"] = record.started_at.isoformat()
    data["finished_at"] = record.finished_at.isoformat()
    return data


def _loaded(raw: dict[str, Any]) -> DrillRecord:
    data = dict(raw)
    data["started_at"] = datetime.fromisoformat(str(data["started_at"]))
    data["finished_at"] = datetime.fromisoformat(str(data["finished_at"]))
    return DrillRecord(**data)


# -- the clone, isolated ---------------------------------------------------------------
def isolated(
    raw: dict[str, Any], project: str, original_project: str, roots: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """The clone's resolved compose configuration made a drill's, and what it left out.

    Every service without network (`network_mode: none`), ports, links, fixed container
    name or restart policy; a service built from source runs the original's image. Every
    volume is one of the clone's project (local driver, no options): a volume of another
    name (external, named by hand, NFS) is a new empty one, never the original's. A bind
    mount, secret or config from outside the clone's folders (`roots`) is not mounted."""
    config = copy.deepcopy(raw)
    config["name"] = project
    config.pop("networks", None)
    notes: list[str] = []
    for key, spec in list((config.get("volumes") or {}).items()):
        name = str((spec or {}).get("name") or "")
        if not name.startswith(f"{project}_"):
            notes.append(f"volume {name or key}: not of the backup, an empty one in the drill")
            name = f"{project}_{key}"
        config["volumes"][key] = {"name": name}
    outside: dict[str, set[str]] = {}
    for kind in ("secrets", "configs"):
        for key, spec in list((config.get(kind) or {}).items()):
            source = str((spec or {}).get("file") or "")
            if source and not _within(source, roots):
                outside.setdefault(kind, set()).add(key)
                del config[kind][key]
                notes.append(f"{kind[:-1]} {key} ({source}): outside the backup, not mounted")
    for name, service in (config.get("services") or {}).items():
        for key in ("ports", "networks", "links", "external_links", "container_name", "build"):
            service.pop(key, None)
        service.pop("pull_policy", None)
        service["network_mode"] = "none"
        service["restart"] = "no"
        service.setdefault("image", f"{original_project}-{name}")
        service["labels"] = {**(service.get("labels") or {}), "stackyard.drill": project}
        kept = []
        for mount in service.get("volumes") or []:
            source = str(mount.get("source") or "") if isinstance(mount, dict) else ""
            if (
                isinstance(mount, dict)
                and mount.get("type") == "bind"
                and not _within(source, roots)
            ):
                notes.append(f"{name}: {source} is not of the backup, not mounted in the drill")
                continue
            kept.append(mount)
        service["volumes"] = kept
        service["volumes_from"] = [
            v for v in service.get("volumes_from") or [] if not str(v).startswith("container:")
        ]
        for kind, keys in outside.items():
            service[kind] = [s for s in service.get(kind) or [] if _source(s) not in keys]
    return config, notes


def _source(use: Any) -> Any:
    """The secret or config a service's entry uses (long syntax, or its name)."""
    return use.get("source") if isinstance(use, dict) else use


def _within(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


# -- the drill ---------------------------------------------------------------------------
@dataclass
class _Place:
    """A drill's scratch: its compose project and folder (as this process and the host
    see it)."""

    project: str
    local: Path
    host: str

    @property
    def stack_local(self) -> Path:
        return self.local / "stack"

    @property
    def stack_host(self) -> str:
        return f"{self.host}/stack"

    @property
    def binds_host(self) -> str:
        return f"{self.host}/binds"

    def as_data(self) -> dict[str, str]:
        return {"project": self.project, "local": str(self.local), "host": self.host}


class Drill:
    """One drill of an archive of this host (a run of its stack: `BackupService.drill`).
    `declared`: what a staged stack folder's compose file uses, as the clone names it
    (`BackupService.declared`); `records`: where its record is kept."""

    def __init__(
        self,
        machine: Machine,
        declared: Callable[[Path, str], Declared],
        records: DrillRecords,
        path: Path,
        settle: int,
    ) -> None:
        self.machine = machine
        self.declared = declared
        self.records = records
        self.path = path
        self.settle = settle
        project = f"{PREFIX}{secrets.token_hex(6)}"
        local = self.machine.stacks_dir / DRILLS / project
        host = str(self.machine.project_dirs.project_dir(local))
        self.place = _Place(project, local, host)
        self.started_at = utcnow()
        self.compared = self.files = self.bytes = 0
        self.started = False
        self.services: list[str] = []
        self.notes: list[str] = []

    async def run(self, run: Run, stack: str) -> DrillRecord:
        """The drill, its scratch removed at its end whatever happened; its record."""
        error: str | None = None
        with self.machine.journal.drilling(stack, self.place.as_data()):
            try:
                await self._drill(run)
            except StackyardError as exc:
                error = exc.detail
            finally:
                run.feed_line("Removing the drill's clone")
                await asyncio.to_thread(
                    remove_leftovers, self.machine.helpers(), self.place.as_data()
                )
        record = DrillRecord(
            id=run.id,
            stack=stack,
            archive=self.path.name,
            clone=self.place.project,
            started_at=self.started_at,
            finished_at=utcnow(),
            verified=error is None,
            compared=self.compared,
            files=self.files,
            bytes=self.bytes,
            started=self.started,
            services=self.services,
            notes=self.notes,
            error=error,
        )
        await asyncio.to_thread(self.records.add, record)
        return record

    async def _drill(self, run: Run) -> None:
        place = self.place
        await asyncio.to_thread(_make_folders, place)
        with ArchiveReader(self.path) as reader:
            plan = await asyncio.to_thread(self._plan, reader)
            for key, reason in plan.skipped.items():
                self.notes.append(f"{key.partition(':')[2]}: {reason}")
            total = sum(reader.size(i.result.member or "") for i in plan.items)
            total += reader.size(reader.manifest.stack_member or "")
            steps = len(plan.items)
            run.feed_line(f"Drill of {self.path.name}: checking the archive (1 of 4)")
            checking = progress_reporter(run, total, steps, "Checking the archive (1 of 4)")
            folders = await asyncio.to_thread(restore.check_archive, reader, plan, checking)
            run.feed_line("Restoring it as a scratch clone (2 of 4)")
            writing = progress_reporter(run, total, steps, "Restoring a scratch clone (2 of 4)")
            done, left_out = await asyncio.to_thread(
                restore.restore_data,
                reader,
                plan,
                folders,
                self.machine.helpers(),
                place.stack_local,
                place.stack_host,
                lambda staged: self.declared(staged, place.project),
                writing,
            )
            self.notes += left_out
            run.feed_line("Comparing what was written with the archive (3 of 4)")
            written = [
                i for i in plan.items if any(d.startswith(f"{i.kind} {i.target}") for d in done)
            ]
            comparing = progress_reporter(run, total, len(written), "Comparing (3 of 4)")
            await asyncio.to_thread(self._compare, reader, written, comparing)
            run.feed_line(
                f"{self.compared} volumes and folders the same as in the archive: "
                f"{self.files} files, {self.bytes} bytes"
            )
            original = reader.manifest.inventory.project if reader.manifest.inventory else ""
        await self._start(run, original or place.project)

    def _plan(self, reader: ArchiveReader) -> RestorePlan:
        place = self.place
        return restore.plan(
            reader.manifest,
            place.project,
            place.stack_host,
            restore_binds=True,
            wanted=None,
            scratch=place.binds_host,
        )

    def _compare(
        self,
        reader: ArchiveReader,
        written: list[restore.RestoreItem],
        progress: Callable[[int, int], None],
    ) -> None:
        helpers = self.machine.helpers()
        gnu = helpers.gnu_tar()
        read = 0
        for n, item in enumerate(written):
            member = item.result.member or ""
            chunks = reader.chunks(member)
            expected = contents(inflated(chunks, member) if member.endswith(".gz") else chunks, gnu)
            mount = HelperMount(
                "volume" if item.kind == "volume" else "bind", item.target, f"/{ROOT}"
            )
            found = _read_back(helpers, mount, gnu)
            if lines := differences(expected, found):
                where = item.inside or item.result.key.partition(":")[2]
                raise Invalid(
                    f"{item.kind} {where} restored differs from the archive: " + "; ".join(lines)
                )
            self.compared += 1
            self.files += expected.files
            self.bytes += expected.bytes
            read += reader.size(member)
            progress(read, n + 1)

    async def _start(self, run: Run, original_project: str) -> None:
        place = self.place
        machine = self.machine
        tool = machine.tool
        raw = await asyncio.to_thread(
            run_config, tool, place.stack_local, None, None, machine.settings.docker_host,
            Path(place.stack_host),
        )  # fmt: skip
        config, notes = isolated(
            raw, place.project, original_project, [place.stack_host, place.binds_host]
        )
        self.notes += notes
        if not config.get("services"):
            raise Invalid("The restored compose file has no service to start")
        file = place.local / "drill.json"
        await asyncio.to_thread(file.write_text, json.dumps(config))
        run.feed_line("Starting the clone without network or published ports (4 of 4)")
        args = ["-p", place.project, "-f", str(file), "up", "-d", "--no-build"]
        code = await run_compose(
            tool,
            place.stack_local,
            args,
            run.feed_line,
            machine.settings.docker_host,
            project_dir=Path(place.stack_host),
        )
        self.started = True
        if code != 0:
            raise Invalid("The clone did not start: see the output above")
        await self._healthy(run)

    async def _healthy(self, run: Run) -> None:
        """Until every service is healthy (those with a health check) and has run for
        the settle time; Invalid when one fails, exits with an error or never gets
        healthy."""
        began = time.monotonic()
        client = self.machine.docker
        while True:
            found = await asyncio.to_thread(project_containers, client, self.place.project)
            self.services = sorted(f"{c.service}: {_state(c)}" for c in found)
            if not found:
                raise Invalid("The clone has no container")
            failed = [c for c in found if _failed(c)]
            if failed:
                raise Invalid(
                    "The clone failed: " + ", ".join(f"{c.service} {_state(c)}" for c in failed)
                )
            waiting = [c for c in found if c.health == "starting" or c.state == "created"]
            unchecked = [c for c in found if c.health is None and c.state == "running"]
            elapsed = time.monotonic() - began
            if not waiting and (not unchecked or elapsed >= self.settle):
                run.feed_line("The clone runs: " + ", ".join(self.services))
                return
            if elapsed > max(HEALTH_WAIT, self.settle):
                names = ", ".join(c.service for c in waiting)
                raise Invalid(f"The clone's {names} did not get healthy in {HEALTH_WAIT:g} s")
            await asyncio.sleep(POLL)


def _state(container: ContainerInfo) -> str:
    if container.health:
        return container.health.replace("health: ", "")
    exited = _EXITED.search(container.status)
    return f"exited ({exited.group(1)})" if exited else container.state


def _failed(container: ContainerInfo) -> bool:
    exited = _EXITED.search(container.status)
    return (
        container.health == "unhealthy"
        or container.state in ("restarting", "dead")
        or (exited is not None and exited.group(1) != "0")
    )


def _make_folders(place: _Place) -> None:
    place.local.parent.mkdir(mode=0o755, exist_ok=True)
    place.local.mkdir(mode=0o755)
    (place.local / "binds").mkdir(mode=0o755)


def _read_back(helpers: Helpers, mount: HelperMount, gnu: bool) -> Contents:
    moving = tartool.Moving()
    if gnu:
        return contents(tartool.read_gnu(helpers, mount, [], moving))
    return contents(tartool.read_busybox(helpers, mount, moving), with_times=False)


def remove_leftovers(helpers: Helpers, data: dict[str, Any]) -> None:
    """Everything a drill made (its journal entry's `data`): its compose project's
    containers, networks and volumes, and its folder (through a helper: the restored
    files keep their owners)."""
    project = str(data["project"])
    if not project.startswith(PREFIX) or "/" in project:
        raise Invalid(f"{project!r} is not a drill's project")
    remove_project(helpers.client, project)
    host = str(data["host"])
    parent = host.rsplit("/", 1)[0]
    if parent.rsplit("/", 1)[-1] != DRILLS or host.rsplit("/", 1)[-1] != project:
        raise Invalid(f"{host!r} is not a drill's folder")
    if Path(str(data["local"])).exists():
        helpers.check_output(
            [HelperMount("bind", parent, "/drills")], ["rm", "-rf", f"/drills/{project}"]
        )
