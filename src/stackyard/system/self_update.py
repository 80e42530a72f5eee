"""Self-update: the service sees a newer release of its own image and replaces itself.

Supported when the service runs in a container that compose made: its labels name the
project, working folder, compose files (and env files) and service, which is all a
helper needs to run `compose pull` and `up -d` for it. The release is the highest full
semver tag of the container's image repository (`release.py`), read with the registry
client (anonymous token flow, HTTPS then HTTP for insecure registries) and cached for
ten minutes.

An update pulls the new image first, in this process: a pull that fails is reported and
nothing is replaced. Then a detached helper container from the current image runs
`stackyard.system.update_helper` with the Docker socket, the working folder, the compose
and env files' folders mounted at the same paths, `STACKYARD_VERSION` set to the new
version (what `deploy/compose.yaml` reads), and the service's data folder, where it leaves
its outcome for the new process to report. The helper removes itself when it ends.

The outcome file holds one update at a time: an update replaces the last one's outcome
with a pending entry before its helper starts, so that the process which runs after it
(the new release, or the previous one rolled back) waits for this update's outcome
rather than taking the last one's for it, and records each outcome once (marked under
the file's lock, whichever process gets there first)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from stackyard.docker.containers import PROJECT, SERVICE, WORKING_DIR
from stackyard.docker.engine import Engine
from stackyard.docker.helper import HelperError, HelperMount, start_detached
from stackyard.docker.images import pull
from stackyard.docker.own import own_container
from stackyard.errors import Conflict, Invalid, RegistryError, StackyardError, Unavailable
from stackyard.events import Event, EventName, Sink
from stackyard.fs.jsonstore import JsonStore
from stackyard.registry.reference import parse_reference
from stackyard.system.release import latest_release, newer
from stackyard.system.update_helper import HEALTH_SECONDS

if TYPE_CHECKING:
    from stackyard.auth.audit import Recorder
    from stackyard.registry.client import RegistryClient
    from stackyard.settings import Mode

#: How long the latest release found stays believed.
CACHE_SECONDS = 600
#: Labels compose puts on the containers it makes (beside PROJECT, SERVICE, WORKING_DIR).
CONFIG_FILES = "com.docker.compose.project.config_files"
ENV_FILE = "com.docker.compose.project.environment_file"
#: The label of self-update helpers.
HELPER_LABEL = "stackyard.self-update"
RESULT_NAME = "self-update.json"
SOCKET = "/var/run/docker.sock"


@dataclass(frozen=True)
class Installation:
    """How the running service was deployed (from its container)."""

    container_id: str
    image_id: str
    image: str  # the image's reference, as the container names it
    repository: str  # the image's repository, as its reference names it
    project: str
    working_dir: str
    config_files: list[str]
    env_files: list[str]
    service: str
    socket_source: str
    data_mount: dict[str, str]  # Type, Source (volume name or host path) of /data


@dataclass(frozen=True)
class LastUpdate:
    status: Literal["succeeded", "failed", "rolled_back"]
    from_version: str
    to_version: str
    finished_at: datetime
    #: What the helper ran and said, with the new release's last log lines when it was
    #: not healthy; null in an answer to whoever may not read logs (they may hold secrets).
    output: str | None
    #: Why it did not succeed ("" when it did).
    why: str = ""
    #: The name of the helper container that made it.
    helper: str = ""


def _last_update(raw: dict[str, Any]) -> LastUpdate | None:
    """The outcome in the result file; None when there is none (an update is under way)."""
    if raw.get("pending"):
        return None
    try:
        return LastUpdate(
            status=raw["status"] if raw["status"] in ("succeeded", "rolled_back") else "failed",
            from_version=str(raw["from_version"]),
            to_version=str(raw["to_version"]),
            finished_at=datetime.fromisoformat(raw["finished_at"]),
            output=str(raw.get("output", "")),
            why=str(raw.get("why", "")),
            helper=str(raw.get("helper", "")),
        )
    except (ValueError, KeyError, TypeError):
        return None


def update_outcome(last: LastUpdate) -> tuple[str, str]:
    """The audit log's outcome and detail of an update that ended."""
    if last.status == "succeeded":
        return "success", "updated"
    said = "rolled back" if last.status == "rolled_back" else "failed"
    return "failure", f"{said} ({last.why})" if last.why else said


_OUTCOME_EVENTS: dict[str, EventName] = {
    "succeeded": "self_update_done",
    "failed": "self_update_failed",
    "rolled_back": "self_update_rolled_back",
}


@dataclass(frozen=True)
class UpdateStatus:
    update_supported: bool
    reason: str | None  # why not, when it is not
    current_version: str
    latest_version: str | None
    update_available: bool
    repository: str | None
    checked_at: datetime | None
    check_error: str | None
    last_update: LastUpdate | None


def without_output(status: UpdateStatus) -> UpdateStatus:
    """The status without the last update's output (null): for whoever may not read logs."""
    last = status.last_update
    return status if last is None else replace(status, last_update=replace(last, output=None))


@dataclass(frozen=True)
class UpdateStarted:
    from_version: str
    to_version: str
    helper: str  # the helper container's name


def _installation(client: Engine, data_dir: Path) -> Installation | str:
    """The installation, or why it cannot update itself."""
    try:
        container = own_container(client)
    except StackyardError as exc:
        return f"The service's own container cannot be inspected: {exc.detail}"
    if container is None:
        return "The service is not running in a container: update it as you installed it"
    labels = container.labels
    missing = [
        label for label in (PROJECT, WORKING_DIR, CONFIG_FILES, SERVICE) if not labels.get(label)
    ]
    if missing:
        return (
            "The service was not started by docker compose (its container has no "
            f"{', '.join(missing)} label): update it as you started it, or deploy it "
            "with deploy/compose.yaml"
        )
    socket = next((m.source for m in container.mounts if m.destination == SOCKET), None)
    if socket is None:
        return f"The Docker socket is not mounted at {SOCKET} in the service's container"
    data_path = str(data_dir.resolve())
    data = next((m for m in container.mounts if m.destination == data_path), None)
    if data is None:
        return (
            f"The data folder {data_dir} is not a volume or a mounted folder: an update "
            "would lose it"
        )
    try:
        reference = parse_reference(container.image)
    except StackyardError:
        return f"The service's image reference {container.image!r} cannot be read"
    return Installation(
        container_id=container.id,
        image_id=container.image_id,
        image=container.image,
        repository=f"{reference.registry}/{reference.repository}",
        project=labels[PROJECT],
        working_dir=labels[WORKING_DIR],
        config_files=[f for f in labels[CONFIG_FILES].split(",") if f],
        env_files=[f for f in labels.get(ENV_FILE, "").split(",") if f],
        service=labels[SERVICE],
        socket_source=socket,
        data_mount={"Type": data.type, "Source": data.name or data.source},
    )


class SelfUpdate:
    def __init__(
        self,
        version: str,
        data_dir: Path,
        docker_client: Callable[[], Engine],
        registry: Callable[[], RegistryClient],
        mode: Mode = "central",
        health_seconds: float = HEALTH_SECONDS,
    ) -> None:
        self.version = version
        self.data_dir = data_dir
        self.mode = mode
        self.health_seconds = health_seconds
        #: Where an update's outcome and a newer release are said (notifications).
        self.events: Sink | None = None
        self._docker = docker_client
        self._registry = registry
        self._checked: tuple[float, datetime, str | None, str | None] | None = None
        self._lock = asyncio.Lock()
        #: The helper writes the outcome into it (atomically, once); this service writes
        #: the pending entry and marks an outcome recorded, under the file's lock.
        self._results = JsonStore(data_dir / RESULT_NAME)

    def installation(self) -> Installation | str:
        return _installation(self._docker(), self.data_dir)

    def _result(self) -> dict[str, Any] | None:
        """What the last update's helper left (read by the process it started), or the
        pending entry of the update under way."""
        try:
            raw = json.loads((self.data_dir / RESULT_NAME).read_text())
        except (OSError, ValueError):
            return None
        return raw if isinstance(raw, dict) else None

    def begin(self, started: UpdateStarted, by: str) -> None:
        """The last update's outcome replaced by this one's pending entry, before its helper
        starts: until the helper writes this update's outcome there is none to report."""
        pending = {
            "pending": True,
            "from_version": started.from_version,
            "to_version": started.to_version,
            "helper": started.helper,
            "by": by,
            "started_at": datetime.now(UTC).isoformat(),
        }
        self._results.write(pending)

    def last_update(self) -> LastUpdate | None:
        raw = self._result()
        return None if raw is None else _last_update(raw)

    async def record_outcome(self, recorder: Recorder) -> None:
        """The last update's outcome in the audit log, once, by the process that runs after
        it (the new release, or the previous one rolled back): the helper writes it once
        that process answers, so it is looked for during the helper's longest wait."""
        deadline = time.monotonic() + 2 * self.health_seconds + 60
        while not await asyncio.to_thread(self.record_once, recorder):
            if time.monotonic() > deadline:
                return
            await asyncio.sleep(2)

    def record_once(self, recorder: Recorder) -> bool:
        """Whether the last update's outcome is in the audit log (recorded now, or before);
        False while there is none to record (an update under way, or none ever). It is
        marked recorded under the file's lock before it is told, so that it is told once
        even if two processes look at once."""
        claimed: dict[str, Any] | None = None

        def claim(raw: Any) -> Any:
            nonlocal claimed
            if isinstance(raw, dict) and not raw.get("recorded") and _last_update(raw):
                claimed = raw
                return raw | {"recorded": True}
            return raw

        raw = self._result()
        if raw is None or _last_update(raw) is None:
            return False  # no update, or one under way: its helper has not written yet
        if raw.get("recorded"):
            return True
        self._results.update(claim)
        last = None if claimed is None else _last_update(claimed)
        if claimed is None or last is None:
            return True  # another process claimed it meanwhile
        outcome, said = update_outcome(last)
        detail = f"{last.from_version} -> {last.to_version}: {said}"
        recorder(str(claimed.get("by") or "system"), "system.update", None, outcome, detail)
        if self.events is not None:
            name = _OUTCOME_EVENTS[last.status]
            self.events(Event(name, "stackyard", f"Stackyard {detail}", last.to_version))
        return True

    async def _latest(
        self, repository: str, fresh: bool
    ) -> tuple[datetime, str | None, str | None]:
        """(checked at, latest release tag, error), from the cache when it is younger than
        ten minutes."""
        async with self._lock:
            if not fresh and self._checked and time.monotonic() - self._checked[0] < CACHE_SECONDS:
                return self._checked[1:]
            reference = parse_reference(f"{repository}:latest")
            error = latest = None
            client = self._registry()
            try:
                latest = latest_release(await client.tags(reference.api_host, reference.repository))
            except RegistryError as exc:
                error = exc.detail
            finally:
                await client.aclose()
            self._checked = (time.monotonic(), datetime.now(UTC), latest, error)
            return self._checked[1:]

    async def status(self, fresh: bool = False) -> UpdateStatus:
        found = await asyncio.to_thread(self.installation)
        last = await asyncio.to_thread(self.last_update)
        if isinstance(found, str):
            return UpdateStatus(False, found, self.version, None, False, None, None, None, last)
        checked_at, latest, error = await self._latest(found.repository, fresh)
        available = latest is not None and newer(latest, self.version)
        if available and latest is not None and self.events is not None:
            text = f"Stackyard {latest} is out (this is {self.version})"
            self.events(Event("release_available", "stackyard", text, latest))
        return UpdateStatus(
            True, None, self.version, latest, available, found.repository, checked_at, error, last
        )

    async def start(self, by: str) -> UpdateStarted:
        """Pull the newer release, then hand over to the helper (Invalid when this
        installation cannot update itself)."""
        found = await asyncio.to_thread(self.installation)
        if isinstance(found, str):
            raise Invalid(found)
        # The release the status showed (at most ten minutes old): a tag removed since
        # makes the pull fail, and nothing is replaced.
        _, latest, error = await self._latest(found.repository, fresh=False)
        if latest is None:
            raise Unavailable(error or f"No release tag found in {found.repository}")
        if not newer(latest, self.version):
            raise Conflict(f"Version {self.version} is the latest release ({latest})")
        await asyncio.to_thread(self._pull, f"{found.repository}:{latest}")
        target = latest.removeprefix("v") if latest.startswith("v") else latest
        started = UpdateStarted(
            self.version, target, f"{found.project}-self-update-{int(time.time())}"
        )
        await asyncio.to_thread(self.begin, started, by)
        try:
            await asyncio.to_thread(self._spawn, found, latest, target, by, started.helper)
        except Unavailable:
            await asyncio.to_thread(self._results.remove)  # no update: no outcome to wait for
            raise
        return started

    def _pull(self, image: str) -> None:
        try:
            pull(self._docker(), image)
        except Unavailable as exc:
            raise Unavailable(
                f"The new image could not be pulled; nothing was changed: {exc.detail}"
            ) from exc

    def _spawn(self, found: Installation, tag: str, version: str, by: str, name: str) -> None:
        folders = {
            found.working_dir,
            *(str(Path(f).parent) for f in [*found.config_files, *found.env_files]),
        }
        # The env file's folder is written: the new version is kept there (a `.env` in
        # the working directory when compose was given none).
        writable = {str(Path(f).parent) for f in found.env_files} or {found.working_dir}
        mounts = [
            HelperMount("bind", found.socket_source, SOCKET),
            HelperMount(
                "volume" if found.data_mount["Type"] == "volume" else "bind",
                found.data_mount["Source"],
                "/data",
            ),
            *(
                HelperMount("bind", folder, folder, read_only=folder not in writable)
                for folder in sorted(folders)
            ),
        ]
        command = [
            "python",
            "-m",
            "stackyard.system.update_helper",
            "--project",
            found.project,
            "--project-directory",
            found.working_dir,
            "--service",
            found.service,
            "--from-version",
            self.version,
            "--from-image",
            found.image_id,
            "--from-reference",
            found.image,
            "--to-version",
            version,
            "--result",
            f"/data/{RESULT_NAME}",
            "--health-seconds",
            f"{self.health_seconds:g}",
            "--by",
            by,
            "--name",
            name,
        ]
        if self.mode == "agent":
            command.append("--agent")
        for file in found.config_files:
            command += ["--file", file]
        for env_file in found.env_files:
            command += ["--env-file", env_file]
        try:
            start_detached(
                self._docker(),
                found.image_id,
                command,
                name=name,
                mounts=mounts,
                environment={"STACKYARD_VERSION": tag},
                labels={HELPER_LABEL: found.project},
            )
        except HelperError as exc:
            raise Unavailable(
                f"The update helper could not be started; nothing was changed: {exc.detail}"
            ) from exc
