"""A restore without a half-way state.

Everything is first written beside what it replaces, on the same file system: the stack
folder (with the bind folders and files inside it) into a hidden folder beside it; a
volume or a bound folder outside it into a hidden folder inside it; a bound file into a
hidden folder beside it. Only when all of it is written are the old contents moved aside
and the new moved in (renames only: no copy, no space needed), target after target; a
failure there moves what was switched back. The old contents are removed last. A failure
before the switch removes what was written, and the volumes and folders the restore
made: everything stays as it was, and nothing is left behind.

The stack folder is merged, not replaced (`stackyard.fs.merge`): what the archive holds
replaces what is there, the chosen bind folders inside it are replaced whole, and the
rest of the folder (binds not restored, files the archive does not know) stays.

Needs room for the old and the new contents of each target until the switch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import posixpath
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from stackyard.backups import tartool
from stackyard.backups.archive import ROOT
from stackyard.docker.containers import PROJECT
from stackyard.docker.engine import Engine
from stackyard.docker.helper import HelperMount, Helpers
from stackyard.docker.volumes import create_volume, remove_volume, volume
from stackyard.errors import StackyardError
from stackyard.fs.at import DIRECTORY, Fd, remove_tree_at, rename_at
from stackyard.fs.beneath import open_beneath
from stackyard.fs.merge import Meta, Step, move_in, undo_noted

VOLUME_LABEL = "com.docker.compose.volume"
_NEW = ".stackyard-restoring-"
_OLD = ".stackyard-replaced-"

# Run in a helper with the target at /data (a volume or a bound folder; for a bound
# file, its folder, the file's name as $2); $1 is the restore's token.
_VARS = f'cd /data; S="{_NEW}$1"; O="{_OLD}$1"; '
# Times to the nanosecond go by reference (`touch -r`: busybox's `-d` takes no fraction):
# the target's own in "$S/time", the staged root's as the time of "$S/meta", each
# carried over in the helper's /r while the entries around it change.
_PREPARE = _VARS + 'stat -c %Y .; touch -r . /r; mkdir "$S" "$S/time"; touch -r /r "$S/time"'
_SWAP_FOLDER = (
    _VARS
    + 'set -e; stat -c \'%u:%g %a\' "$S/data" > "$S/meta"; touch -r "$S/data" "$S/meta"; '
    + 'mkdir "$O"; '
    + 'find . -mindepth 1 -maxdepth 1 ! -name "$S" ! -name "$O" -exec mv -- {} "$O/" \\; ; '
    + '[ -z "$(find . -mindepth 1 -maxdepth 1 ! -name "$S" ! -name "$O")" ]; '
    + 'find "$S/data" -mindepth 1 -maxdepth 1 -exec mv -- {} . \\; ; rmdir "$S/data"'
)
_UNSWAP_FOLDER = (
    _VARS
    + '[ -d "$O" ] || exit 0; set -e; mkdir -p "$S/data"; '
    + 'find . -mindepth 1 -maxdepth 1 ! -name "$S" ! -name "$O" -exec mv -- {} "$S/data/" \\; ; '
    + 'find "$O" -mindepth 1 -maxdepth 1 -exec mv -- {} . \\; ; rmdir "$O"'
)
_FINISH_FOLDER = (
    _VARS
    + 'set -e; read owner mode rest < "$S/meta"; touch -r "$S/meta" /r; rm -rf "$O" "$S"; '
    + 'chown "$owner" .; chmod "$mode" .; touch -r /r .'
)
_SWAP_FILE = (
    _VARS
    + 'set -e; mkdir "$O"; if [ -e "$2" ] || [ -L "$2" ]; then mv -- "$2" "$O/"; fi; '
    + 'mv -- "$S/data" "$2"'
)
_UNSWAP_FILE = (
    _VARS
    + '[ -d "$O" ] || exit 0; set -e; '
    + 'if [ -e "$2" ] || [ -L "$2" ]; then mv -- "$2" "$S/data"; fi; '
    + 'if [ -e "$O/$2" ] || [ -L "$O/$2" ]; then mv -- "$O/$2" "$2"; fi; rmdir "$O"'
)
_FINISH_FILE = _VARS + 'rm -rf "$O" "$S"'
# The folder's mtime as it was ($2: to the second, from a journal of before "$S/time").
_DISCARD = (
    _VARS
    + 'if [ -d "$S/time" ]; then touch -r "$S/time" /r; else touch -d "@$2" /r; fi; '
    + 'rm -rf "$S"; touch -r /r .'
)
# An inside target, written in the staged stack folder at /data: into a folder of its
# own, then renamed to its path ($2) there.
_PLACE_INSIDE = (
    'set -e; cd /data; mkdir -p "$(dirname "$2")"; rm -rf "$2"; '
    'mv -- ".in-$1/data" "$2"; rmdir ".in-$1"'
)


# The host paths $2... walked name by name from the host's root (mounted at /host),
# links never followed: per path, its number and "link" (it leads through a symbolic
# link), "exists" or "missing".
_HOST_PATHS = (
    'i=0; for p in "$@"; do i=$((i+1)); rest="${p#/}"; at=/host; state=exists; '
    'while [ -n "$rest" ]; do name="${rest%%/*}"; '
    'case "$rest" in */*) rest="${rest#*/}";; *) rest="";; esac; at="$at/$name"; '
    'if [ -L "$at" ]; then state=link; break; fi; '
    '[ -e "$at" ] || { state=missing; break; }; done; echo "$i $state"; done'
)

PathState = Literal["link", "exists", "missing"]
#: An archive member to write: its chunks (as stored), and its name.
Part = tuple[Iterable[bytes], str]


def host_paths(helpers: Helpers, paths: list[str]) -> dict[str, PathState]:
    """How the host has each of `paths`: whether it leads through a symbolic link (which
    the engine would follow when it mounts it: into the data folder, say), exists, or
    is missing. Read in a helper with the host's root mounted read-only."""
    if not paths:
        return {}
    host = HelperMount("bind", "/", "/host", read_only=True)
    out = helpers.check_output([host], ["sh", "-c", _HOST_PATHS, "paths", *paths], 120)
    states: dict[str, PathState] = {}
    for line in out.splitlines():
        number, _, state = line.partition(" ")
        states[paths[int(number) - 1]] = cast(PathState, state)
    return states


@contextlib.contextmanager
def _times_kept(root: Path, path: str) -> Iterator[None]:
    """The access and modification times of `root` and of the folders on the way to
    `path` beneath it (those that exist; links never followed) put back after the block."""
    fds: list[tuple[int, os.stat_result]] = []
    try:
        with contextlib.suppress(OSError):
            fds.append(_with_stat(os.open(root, DIRECTORY | os.O_NOFOLLOW)))
            parts = [p for p in path.split("/") if p]
            for n in range(1, len(parts) + 1):
                fd = open_beneath(fds[0][0], "/".join(parts[:n]), DIRECTORY | os.O_NOFOLLOW)
                fds.append(_with_stat(fd))
        yield
        for fd, st in fds:
            os.utime(fd, ns=(st.st_atime_ns, st.st_mtime_ns))
    finally:
        for fd, _ in fds:
            os.close(fd)


def _with_stat(fd: int) -> tuple[int, os.stat_result]:
    return fd, os.fstat(fd)


@dataclass
class _Place:
    """A target outside the stack folder, written beside its contents."""

    mount: HelperMount  # at /data: the volume or the bound folder, or a bound file's folder
    file: str | None  # a bound file: its name in that folder
    mtime: str = ""  # that folder's, before anything was staged in it
    swapped: bool = False


Phase = Literal["staging", "switching", "switched"]


@dataclass
class Staging:
    """One restore's staged writes (see the module). `folder_local` and `folder_host`:
    the stack folder as the service and as the host see it. `record` is given the
    `snapshot` before each change (a journal keeps it, for `recover` after a crash)."""

    helpers: Helpers
    folder_local: Path
    folder_host: str
    record: Callable[[dict[str, Any]], None] = lambda snapshot: None
    token: str = field(default_factory=lambda: secrets.token_hex(6))
    places: list[_Place] = field(default_factory=list)
    volumes_made: list[str] = field(default_factory=list)
    folders_made: list[str] = field(default_factory=list)
    phase: Phase = "staging"
    _inside: set[str] = field(default_factory=set)

    # -- after a crash ----------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        return {
            "folder_local": str(self.folder_local),
            "folder_host": self.folder_host,
            "token": self.token,
            "places": [asdict(place) for place in self.places],
            "volumes_made": self.volumes_made,
            "folders_made": self.folders_made,
            "phase": self.phase,
        }

    def _record(self) -> None:
        self.record(self.snapshot())

    @classmethod
    def recover(cls, helpers: Helpers, snapshot: dict[str, Any]) -> list[str]:
        """Resolve the staged writes of a restore the service was killed in: finished
        when every target was switched already, else undone (everything as before the
        restore, nothing of it left). What was done, as lines."""
        places = [
            _Place(HelperMount(**p["mount"]), p["file"], p["mtime"], p["swapped"])
            for p in snapshot["places"]
        ]
        staging = cls(
            helpers,
            Path(snapshot["folder_local"]),
            snapshot["folder_host"],
            token=snapshot["token"],
            places=places,
            volumes_made=list(snapshot["volumes_made"]),
            folders_made=list(snapshot["folders_made"]),
        )
        if snapshot["phase"] == "switched":
            problems: list[str] = []
            staging._finish(problems)
            _remove_local(staging._aside)
            _remove_local(staging.stack)
            return ["its data had been switched in: the old contents were removed", *problems]
        if staging._merge_log.exists():
            staging._undo_merge()
        elif staging._aside.exists():  # (left by a version that kept no log)
            return [
                f"it was switching the stack folder: the files it replaced are kept in "
                f"{staging._aside}, the rest of the archive's in {staging.stack} (nothing "
                "was deleted: compare and remove them by hand)"
            ]
        staging._unswitch()
        staging.discard()
        return ["undone: every volume and folder is as it was before it, nothing of it left"]

    # -- where things go ------------------------------------------------------------------
    @property
    def stack(self) -> Path:
        """The staged stack folder (as the service sees it), beside the real one."""
        return self.folder_local.parent / f".{self.folder_local.name}.restoring-{self.token}"

    @property
    def _aside(self) -> Path:
        """Where the stack folder's replaced entries wait for the end of the switch."""
        return self.folder_local.parent / f".{self.folder_local.name}.replaced-{self.token}"

    @property
    def _merge_log(self) -> Path:
        """The steps of the stack folder's merge, each written before it is taken."""
        return self.folder_local.parent / f".{self.folder_local.name}.merging-{self.token}"

    @property
    def _stack_mount(self) -> HelperMount:
        host = posixpath.join(posixpath.dirname(self.folder_host), self.stack.name)
        return HelperMount("bind", host, f"/{ROOT}")

    def _script(self, mounts: list[HelperMount], script: str, *args: str) -> str:
        command = ["sh", "-c", script, "restore", *args]
        return self.helpers.check_output(mounts, command, timeout=3600)

    # -- staging ----------------------------------------------------------------------------
    def stack_folder(self, part: Part | None) -> Path:
        """The staged stack folder, made (and filled with `part`, a tar of `data/`, whose
        first entry gives the folder its owner, mode and times)."""
        self._record()
        self.stack.mkdir(mode=0o755)
        if part is not None:
            tartool.write(self.helpers, [self._stack_mount], "/", *part)
        return self.stack

    def inside(self, path: str, part: Part) -> None:
        """A bind folder or file inside the stack folder, at `path` of the staged one.
        The folders on its way keep the times the archive gave them."""
        mount = self._stack_mount
        with _times_kept(self.stack, posixpath.dirname(path)):
            self.helpers.check_output([mount], ["mkdir", f"/{ROOT}/.in-{self.token}"])
            tartool.write(self.helpers, [mount], f"/{ROOT}/.in-{self.token}", *part)
            self._script([mount], _PLACE_INSIDE, self.token, path)
        self._inside.add(path)

    def volume(self, name: str, project: str, key: str | None, part: Part) -> None:
        if _ensure_volume(self.helpers.client, name, project, key):
            self.volumes_made.append(name)
            self._record()
        self._stage(_Place(HelperMount("volume", name, f"/{ROOT}"), None), part)

    def bind(self, path: str, is_folder: bool, part: Part) -> None:
        """A bind folder or file outside the stack folder (its folder must exist)."""
        parent, name = posixpath.split(path.rstrip("/"))
        if is_folder:
            if self._make_folder(parent or "/", name):
                self.folders_made.append(path)
                self._record()
            place = _Place(HelperMount("bind", path, f"/{ROOT}"), None)
        else:
            place = _Place(HelperMount("bind", parent or "/", f"/{ROOT}"), name)
        self._stage(place, part)

    def _stage(self, place: _Place, part: Part) -> None:
        self.places.append(place)
        self._record()
        place.mtime = self._script([place.mount], _PREPARE, self.token).strip()
        self._record()
        tartool.write(self.helpers, [place.mount], f"/{ROOT}/{_NEW}{self.token}", *part)

    def _make_folder(self, parent: str, name: str) -> bool:
        """`name` in the host folder `parent`, made when missing; whether it was made."""
        out = self.helpers.check_output(
            [HelperMount("bind", parent, "/parent")],
            ["sh", "-c", '[ -d "/parent/$1" ] && echo kept || mkdir "/parent/$1"', "mk", name],
            timeout=120,
        )
        return "kept" not in out

    # -- the switch -----------------------------------------------------------------------
    def commit(self) -> list[str]:
        """Switch every target to its staged contents, then remove the old ones; on a
        failure of the switch everything is switched back and the error raised. What
        could not be cleaned up afterwards, as lines."""
        problems: list[str] = []
        self.phase = "switching"
        try:
            for place in self.places:
                swap = _SWAP_FOLDER if place.file is None else _SWAP_FILE
                place.swapped = True  # a half-done swap is undone too
                self._record()
                self._script([place.mount], swap, self.token, place.file or "")
            self._switch_stack(problems)
        except BaseException:
            self._unswitch()
            raise
        self.phase = "switched"
        self._record()
        self._finish(problems)
        return problems

    def _finish(self, problems: list[str]) -> None:
        """The old contents of every switched target removed."""
        for place in self.places:
            finish = _FINISH_FOLDER if place.file is None else _FINISH_FILE
            try:
                self._script([place.mount], finish, self.token, place.file or "")
            except Exception as exc:
                problems.append(f"The old contents of {place.mount.source} stay in {_OLD}*: {exc}")

    def _switch_stack(self, problems: list[str]) -> None:
        """The staged stack folder in place: renamed there when there is none, merged
        into it otherwise (the last step of the switch: undone by itself on a failure)."""
        with Fd(os.open(self.folder_local.parent, DIRECTORY)) as stacks:
            try:
                rename_at(stacks, self.stack.name, stacks, self.folder_local.name, replace=False)
                return
            except FileExistsError:
                pass
        self._aside.mkdir(mode=0o700)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
        with (
            Fd(os.open(self._merge_log, flags, 0o600)) as log,
            Fd(os.open(self.stack, DIRECTORY | os.O_NOFOLLOW)) as staged,
            Fd(os.open(self.folder_local, DIRECTORY | os.O_NOFOLLOW)) as target,
            Fd(os.open(self._aside, DIRECTORY | os.O_NOFOLLOW)) as aside,
        ):
            try:
                move = move_in(staged, target, aside, frozenset(self._inside), _noting(log))
            except BaseException:
                _remove_local(self._aside)
                self._merge_log.unlink()
                raise
            try:
                move.finish()
            except OSError as exc:
                problems.append(f"The stack folder's old entries stay in {self._aside}: {exc}")
                return
        _remove_local(self._aside)
        _remove_local(self.stack)
        self._merge_log.unlink()

    def _undo_merge(self) -> None:
        """Undo the merge of a process killed halfway, from its log on disk."""
        steps = [_step(line) for line in self._merge_log.read_bytes().splitlines() if line]
        with (
            Fd(os.open(self.stack, DIRECTORY | os.O_NOFOLLOW)) as staged,
            Fd(os.open(self.folder_local, DIRECTORY | os.O_NOFOLLOW)) as target,
            Fd(os.open(self._aside, DIRECTORY | os.O_NOFOLLOW)) as aside,
        ):
            undo_noted(staged, target, aside, steps)
        _remove_local(self._aside)
        self._merge_log.unlink()

    def _unswitch(self) -> None:
        for place in reversed(self.places):
            if place.swapped:
                unswap = _UNSWAP_FOLDER if place.file is None else _UNSWAP_FILE
                with contextlib.suppress(Exception):
                    self._script([place.mount], unswap, self.token, place.file or "")
                place.swapped = False

    def discard(self) -> None:
        """Remove everything staged, and the volumes and folders this restore made."""
        for place in self.places:
            with contextlib.suppress(Exception):
                self._script([place.mount], _DISCARD, self.token, place.mtime)
        _remove_local(self.stack)
        for name in self.volumes_made:
            with contextlib.suppress(StackyardError):
                remove_volume(self.helpers.client, name)
        for path in self.folders_made:
            parent, name = posixpath.split(path.rstrip("/"))
            with contextlib.suppress(Exception):
                self.helpers.check_output(
                    [HelperMount("bind", parent or "/", "/parent")], ["rmdir", f"/parent/{name}"]
                )


def _noting(log: int) -> Callable[[Step], None]:
    """Writes each step of a merge to the log `log` (a JSON line, before it is taken)."""

    def note(step: Step) -> None:
        os.write(log, json.dumps(dataclasses.astuple(step)).encode() + b"\n")

    return note


def _step(line: bytes) -> Step:
    kind, path, before = json.loads(line)
    return Step(kind, path, Meta(*before) if before else None)


def _remove_local(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        with Fd(os.open(path.parent, DIRECTORY)) as fd:
            remove_tree_at(fd, path.name)


def _ensure_volume(client: Engine, name: str, project: str, key: str | None) -> bool:
    """The volume, created (with compose's labels) when missing; whether it was."""
    if volume(client, name) is not None:
        return False
    labels = {PROJECT: project}
    if key:
        labels[VOLUME_LABEL] = key
    create_volume(client, name, labels)
    return True
