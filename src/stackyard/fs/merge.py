"""Moving a staged tree into a folder that exists, so that it can be taken back.

`move_in(staged, target, aside, replace)` moves each entry of `staged` into `target`:
where both hold a folder of that name (and its path is not in `replace`), the two are
merged the same way and the folder then takes the staged one's owner, mode and times;
anything else that `target` holds under the name is first moved into `aside` (at the
same path), whole. Nothing of `target` that `staged` lacks is touched. Every step is a
rename within one file system, and every step is logged: `undo` puts everything back,
`finish` removes what was moved aside. Each step is also handed to `note` before it is
taken (a log on disk), so that a process killed halfway is undone from that log at its
next start (`undo_noted`). All of it through descriptors, beneath the three roots,
links never followed.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from stackyard.fs.at import DIRECTORY, Fd, lstat_at, remove_tree_at
from stackyard.fs.beneath import open_beneath, open_parent


class Meta(NamedTuple):
    """A folder's own metadata: owner, group, mode and times (ns)."""

    uid: int
    gid: int
    mode: int
    atime_ns: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> Meta:
        return cls(st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode), st.st_atime_ns, st.st_mtime_ns)


@dataclass(frozen=True)
class Step:
    kind: str  # "in": staged -> target; "aside": target -> aside; "meta": a folder's own
    path: str
    before: Meta | None = None  # "meta": the folder's owner, mode, times before


@dataclass
class TreeMove:
    staged: int
    target: int
    aside: int
    note: Callable[[Step], None] = lambda step: None
    log: list[Step] = field(default_factory=list)

    def take(self, step: Step) -> None:
        """Take a rename step: noted first, logged once done."""
        self.note(step)
        if step.kind == "aside":
            _move(self.target, self.aside, step.path, make_parents=True)
        elif step.kind == "in":
            _move(self.staged, self.target, step.path)
        self.log.append(step)

    def undo(self) -> None:
        """Everything back where it was (newest step first)."""
        undo_noted(self.staged, self.target, self.aside, self.log)
        self.log.clear()

    def finish(self) -> None:
        """Remove what was moved aside (the old entries the staged ones replaced)."""
        for name in os.listdir(self.aside):
            if stat.S_ISDIR(os.lstat(name, dir_fd=self.aside).st_mode):
                remove_tree_at(self.aside, name)
            else:
                os.unlink(name, dir_fd=self.aside)
        self.log.clear()


def move_in(
    staged: int,
    target: int,
    aside: int,
    replace: frozenset[str],
    note: Callable[[Step], None] = lambda step: None,
) -> TreeMove:
    """See the module. On a failure what was done is undone and the error raised."""
    move = TreeMove(staged, target, aside, note)
    # Merged folders with the staged one's own metadata, taken before any entry moves
    # (which changes a folder's times); the target's is logged first, for `undo`.
    merged = [("", Meta.of(os.fstat(staged)))]
    move.take(Step("meta", "", Meta.of(os.fstat(target))))
    try:
        pending = [""]
        while pending:
            folder = pending.pop()
            with Fd(open_beneath(staged, folder, DIRECTORY | os.O_NOFOLLOW)) as fd:
                names = sorted(os.listdir(fd))
            for name in names:
                path = posixpath.join(folder, name) if folder else name
                ours, theirs = _lstat(staged, path), _lstat(target, path)
                if ours is None:
                    raise FileNotFoundError(f"{path} left the staged tree")
                if (
                    path not in replace
                    and theirs is not None
                    and stat.S_ISDIR(ours.st_mode)
                    and stat.S_ISDIR(theirs.st_mode)
                ):
                    pending.append(path)
                    merged.append((path, Meta.of(ours)))
                    move.take(Step("meta", path, Meta.of(theirs)))
                    continue
                if theirs is not None:
                    move.take(Step("aside", path))
                move.take(Step("in", path))
        for path, wanted in reversed(merged):  # deepest first, the root last
            _set_meta(target, path, wanted)
    except BaseException:
        move.undo()
        raise
    return move


def undo_noted(staged: int, target: int, aside: int, steps: Iterable[Step]) -> None:
    """Undo a move whose process was killed, from the steps it noted (the last of which
    may not have been taken): each rename that happened is taken back, newest first,
    then the merged folders get their metadata back."""
    noted = list(steps)
    for step in reversed(noted):
        moved = _lstat(target, step.path) is not None
        if step.kind == "in" and moved and _lstat(staged, step.path) is None:
            _move(target, staged, step.path, make_parents=True)
        elif step.kind == "aside" and not moved and _lstat(aside, step.path) is not None:
            _move(aside, target, step.path)
    for step in reversed(noted):
        if step.before is not None and _lstat(target, step.path) is not None:
            _set_meta(target, step.path, step.before)


def _lstat(root: int, path: str) -> os.stat_result | None:
    if not path:
        return os.fstat(root)
    parent, name = open_parent(root, path)
    with Fd(parent):
        return lstat_at(parent, name)


def _move(src_root: int, dst_root: int, path: str, make_parents: bool = False) -> None:
    src, name = open_parent(src_root, path)
    with Fd(src):
        if make_parents:
            _make_parents(dst_root, path)
        dst, _ = open_parent(dst_root, path)
        with Fd(dst):
            os.rename(name, name, src_dir_fd=src, dst_dir_fd=dst)


def _make_parents(root: int, path: str) -> None:
    head = posixpath.dirname(path)
    fd = os.dup(root)
    try:
        for part in head.split("/") if head else []:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o700, dir_fd=fd)
            child = os.open(part, DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


def _set_meta(root: int, path: str, meta: Meta) -> None:
    """A folder's owner, mode and times (the owner first: it clears set-id bits)."""
    with Fd(open_beneath(root, path, DIRECTORY | os.O_NOFOLLOW)) as fd:
        with contextlib.suppress(PermissionError):  # not root: the owner stays
            os.chown(fd, meta.uid, meta.gid)
        os.chmod(fd, meta.mode)
        os.utime(fd, ns=(meta.atime_ns, meta.mtime_ns))
