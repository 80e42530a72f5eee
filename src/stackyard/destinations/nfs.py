"""NFS destinations: the engine mounts the export, the service never does.

The export is a named volume `svc-nfs-dest-<owner>-<destination id>` (driver `local`,
type `nfs`), made again whenever the server, the export or the options change; `owner`
is this service's helper owner (`Helpers.owner`), so that services sharing an engine
never use or remove each other's volume. Every file
operation is a short-lived helper container with that volume at `/dest`
(`docker/helper.py`): an upload writes the archive into the helper through the engine's
archive API under a hidden temporary name and renames it into place, a listing runs
`stat`, a download reads the archive out of the helper, delete and test are short runs.
The service therefore needs no mount privileges, and a mount failure or an unreachable
server is the helper's failure, reported as a destination error. Ownership stays inside
the archive: shares with `root_squash` refuse `chown`, so nothing here changes owners.
"""

from __future__ import annotations

import asyncio
import contextlib
import tarfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from stackyard.backups.archive import ChunkReader
from stackyard.backups.names import is_archive_name
from stackyard.destinations.base import (
    Destination,
    checked_name,
    is_stale_partial,
    newest_first,
    partial_name,
    probe_name,
)
from stackyard.destinations.model import NfsSettings, Progress, RemoteArchive
from stackyard.docker import volumes
from stackyard.docker.engine import Engine
from stackyard.docker.helper import CHUNK, HelperError, HelperFailed, HelperMount, Helpers
from stackyard.errors import Conflict, DestinationError, NotFound, StackyardError

VOLUME_PREFIX = "svc-nfs-dest-"
DESTINATION_LABEL = "stackyard.destination"
MOUNT = "/dest"
_MISSING = 3  # exit status of our scripts for "no such archive"
_EXISTS = 4  # exit status of our scripts for "the final name is taken"
T = TypeVar("T")


def volume_name(owner: str, destination_id: int) -> str:
    return f"{VOLUME_PREFIX}{owner}-{destination_id}"


def volume_options(settings: NfsSettings) -> dict[str, str]:
    return {
        "type": "nfs",
        "o": f"addr={settings.server},{settings.options}",
        "device": f":{settings.export}",
    }


def _classified(exc: StackyardError, settings: NfsSettings) -> DestinationError:
    return DestinationError(f"NFS {settings.server}:{settings.export}: {exc.detail}")


def ensure_volume(client: Engine, owner: str, destination_id: int, settings: NfsSettings) -> str:
    """The destination's volume, made (again) when it is missing or its options changed."""
    name = volume_name(owner, destination_id)
    wanted = volume_options(settings)
    try:
        current = volumes.volume(client, name)
        if current is not None and current.options == wanted:
            return name
        if current is not None:
            volumes.remove_volume(client, name)
        volumes.create_volume(client, name, {DESTINATION_LABEL: str(destination_id)}, wanted)
    except StackyardError as exc:
        raise _classified(exc, settings) from exc
    return name


def remove_volume(client: Engine, owner: str, destination_id: int) -> None:
    """Forget the destination's volume (the export's files are not touched)."""
    try:
        volumes.remove_volume(client, volume_name(owner, destination_id))
    except NotFound:
        pass
    except StackyardError as exc:
        raise DestinationError(exc.detail) from exc


def _single_file_tar(name: str, path: Path, sent: Callable[[int], None]) -> Iterator[bytes]:
    """A tar of one regular file (owner root, mode 0600), read from disk in chunks."""
    size = path.stat().st_size
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o600, int(time.time())
    yield info.tobuf(format=tarfile.PAX_FORMAT)
    done = 0
    with path.open("rb") as source:
        while chunk := source.read(CHUNK):
            done += len(chunk)
            yield chunk
            sent(done)
    if size % tarfile.BLOCKSIZE:
        yield b"\0" * (tarfile.BLOCKSIZE - size % tarfile.BLOCKSIZE)
    yield b"\0" * (2 * tarfile.BLOCKSIZE)


class NfsDestination(Destination):
    """File operations through helpers on `volume` (the destination's NFS volume, or any
    volume: the tests use a local one)."""

    def __init__(self, helpers: Helpers, volume: str, settings: NfsSettings) -> None:
        self.helpers = helpers
        self.volume = volume
        self.settings = settings

    @property
    def _mount(self) -> HelperMount:
        return HelperMount("volume", self.volume, MOUNT)

    @property
    def folder(self) -> str:
        sub = self.settings.subdirectory
        return f"{MOUNT}/{sub}" if sub else MOUNT

    async def _call(self, work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except HelperError as exc:
            raise _classified(exc, self.settings) from exc

    def _script(self, script: str, *args: str, timeout: int = 120) -> str:
        return self.helpers.check_output(
            [self._mount], ["sh", "-c", script, "sh", *args], timeout=timeout
        )

    def _status(self, script: str, *args: str) -> int:
        """Run a script whose exit status is an answer (0, _MISSING or _EXISTS)."""
        result = self.helpers.run([self._mount], ["sh", "-c", script, "sh", *args], timeout=120)
        if result.exit_code not in (0, _MISSING, _EXISTS):
            raise HelperFailed("The NFS helper", result.exit_code, result.output.strip())
        return result.exit_code

    async def test(self) -> str:
        probe = probe_name()
        script = 'mkdir -p "$1" && echo ok > "$1/$2" && rm "$1/$2" && ls -1 "$1"'
        listing = await self._call(lambda: self._script(script, self.folder, probe))
        count = sum(1 for line in listing.splitlines() if is_archive_name(line.strip()))
        return (
            f"Mounted {self.settings.server}:{self.settings.export}; the folder "
            f"{self.settings.subdirectory or '/'} is writable and holds {count} Stackyard archives"
        )

    async def push(self, path: Path, name: str, progress: Progress) -> None:
        checked_name(name)
        await self._call(lambda: self._push(path, name, progress))

    def _push(self, path: Path, name: str, progress: Progress) -> None:
        folder = self.folder
        self._script('mkdir -p "$1"', folder)
        self._sweep()
        partial = partial_name(name)
        if self._exists(name):
            raise Conflict(f"{name} is already on the destination")
        try:
            with self.helpers.created([self._mount]) as helper:
                self.helpers.write_tar(helper, folder, _single_file_tar(partial, path, progress))
            moved = self._status(
                f'[ -e "$1/$3" ] && exit {_EXISTS}; mv "$1/$2" "$1/$3"', folder, partial, name
            )
            if moved == _EXISTS:
                raise Conflict(f"{name} is already on the destination")
        except BaseException:
            with contextlib.suppress(StackyardError):
                self._script('rm -f "$1/$2"', folder, partial)
            raise

    def _exists(self, name: str) -> bool:
        return self._status(f'[ -e "$1/$2" ] || exit {_MISSING}', self.folder, name) == 0

    def _sweep(self) -> None:
        now = datetime.now(UTC)
        for name, _size, modified in self._entries():
            if is_stale_partial(name, modified, now):
                with contextlib.suppress(StackyardError):
                    self._script('rm -f "$1/$2"', self.folder, name)

    def _entries(self) -> list[tuple[str, int, datetime]]:
        """Regular files of the folder: name, size, time (`stat` in a helper)."""
        script = (
            'cd "$1" 2>/dev/null || exit 0; '
            'for f in * .[!.]*; do [ -f "$f" ] && stat -c "%s %Y %n" -- "$f"; done; exit 0'
        )
        found = []
        for line in self._script(script, self.folder).splitlines():
            size, _, rest = line.partition(" ")
            stamp, _, name = rest.partition(" ")
            if size.isdigit() and stamp.isdigit() and name:
                found.append((name, int(size), datetime.fromtimestamp(int(stamp), UTC)))
        return found

    async def archives(self) -> list[RemoteArchive]:
        entries = await self._call(self._entries)
        return newest_first(
            [RemoteArchive(n, size, at) for n, size, at in entries if is_archive_name(n)]
        )

    async def pull(self, name: str, target: Path, progress: Progress) -> None:
        checked_name(name)
        await self._call(lambda: self._pull(name, target, progress))

    def _pull(self, name: str, target: Path, progress: Progress) -> None:
        if not self._exists(name):
            raise NotFound(f"{name} is not on the destination")
        with self.helpers.created([self._mount]) as helper:
            chunks = self.helpers.read_tar(helper, f"{self.folder}/{name}")
            with tarfile.open(fileobj=ChunkReader(chunks), mode="r|", bufsize=CHUNK) as stream:
                member = stream.next()
                source = stream.extractfile(member) if member is not None else None
                if source is None:
                    raise DestinationError(f"{name} is not a regular file on the destination")
                done = 0
                with target.open("xb") as sink:
                    while chunk := source.read(CHUNK):
                        sink.write(chunk)
                        done += len(chunk)
                        progress(done)

    async def delete(self, name: str) -> None:
        checked_name(name)
        script = f'[ -f "$1/$2" ] || exit {_MISSING}; rm -- "$1/$2"'
        if await self._call(lambda: self._status(script, self.folder, name)) == _MISSING:
            raise NotFound(f"{name} is not on the destination")
