"""What a fetched commit holds, read in-process from the bare mirror with dulwich: a
commit's author and subject, the files of one folder at a commit, whether a folder
changed between two commits (one comparison of the folder's tree ids: a push that
touches one stack of a monorepo changes the tree of that stack's folder only), and the
text diff of two sets of files.

Whatever a repository holds is outside input: a symbolic link or a submodule in a
stack's folder is left out and said (a link could lead out of the stack folder), paths
are checked where they are written (`stacks.tree`), sizes are bounded. (dulwich loads
with the first read: a start reads no repository.)"""

from __future__ import annotations

import difflib
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from stackyard.errors import GitError
from stackyard.git.model import Change, Commit, FileChange
from stackyard.stacks.tree import MAX_TREE_BYTES, MAX_TREE_FILES
from stackyard.stacks.tree import Tree as Files

if TYPE_CHECKING:
    from dulwich.objects import Commit as DulwichCommit
    from dulwich.repo import Repo

#: A diff longer than this is cut (the apply shows the rest as a list of files).
MAX_DIFF_LINES = 2000


@contextmanager
def opened(mirror: Path) -> Iterator[Repo]:
    from dulwich.repo import Repo

    try:
        repo = Repo(str(mirror))
    except Exception as exc:  # (dulwich raises NotGitRepository, OSError, ...)
        raise GitError(f"The fetched copy of the repository cannot be read: {exc}") from exc
    try:
        yield repo
    finally:
        repo.close()


def _commit(repo: Repo, sha: str) -> DulwichCommit:
    from dulwich.objects import Commit as DulwichCommit

    try:
        found = repo[sha.encode()]
    except KeyError as exc:
        raise GitError(f"Commit {sha[:12]} is not in the fetched repository") from exc
    if not isinstance(found, DulwichCommit):
        raise GitError(f"{sha[:12]} is no commit")
    return found


def commit_of(mirror: Path, sha: str, page: str | None = None) -> Commit:
    with opened(mirror) as repo:
        commit = _commit(repo, sha)
    message = commit.message.decode(errors="replace").strip()
    zone = timezone(timedelta(seconds=commit.commit_timezone))
    return Commit(
        sha=sha,
        short=sha[:12],
        subject=(message.splitlines() or [""])[0][:200],
        author=commit.author.decode(errors="replace").split(" <")[0][:200],
        at=datetime.fromtimestamp(commit.commit_time, zone).astimezone(UTC),
        url=page,
    )


def folder_id(repo: Repo, sha: str, folder: str) -> bytes | None:
    """The tree id of `folder` at commit `sha`; None when the commit has no such folder."""
    from dulwich.errors import NotTreeError
    from dulwich.object_store import tree_lookup_path
    from dulwich.objects import ObjectID

    root: bytes = _commit(repo, sha).tree
    if not folder:
        return root
    try:
        mode, found = tree_lookup_path(
            repo.object_store.__getitem__, ObjectID(root), folder.encode()
        )
    except (KeyError, NotTreeError):
        return None
    return found if stat.S_ISDIR(mode) else None


def unchanged(mirror: Path, new: str, stacks: dict[str, tuple[str, str]]) -> set[str]:
    """The stacks (name -> (its deployed commit, its folder)) whose folder is the same
    at commit `new`: one comparison of tree ids each, the repository read once."""
    ids: dict[tuple[str, str], bytes | None] = {}
    with opened(mirror) as repo:

        def tree(sha: str, folder: str) -> bytes | None:
            if (sha, folder) not in ids:
                ids[sha, folder] = folder_id(repo, sha, folder)
            return ids[sha, folder]

        return {
            name
            for name, (old, folder) in stacks.items()
            if tree(old, folder) is not None and tree(old, folder) == tree(new, folder)
        }


def files_at(mirror: Path, sha: str, folder: str) -> tuple[Files, list[str]]:
    """The files of `folder` at commit `sha` (path relative to the folder -> bytes), and
    what was left out (links, submodules). GitError when the commit has no such folder
    or it holds more than a stack may."""
    from dulwich.objects import Blob, ObjectID

    files: Files = {}
    left_out: list[str] = []
    size = 0
    with opened(mirror) as repo:
        tree_id = folder_id(repo, sha, folder)
        if tree_id is None:
            raise GitError(f"Commit {sha[:12]} has no folder {folder or '/'!r}")
        for entry in repo.object_store.iter_tree_contents(ObjectID(tree_id)):
            assert entry.path is not None and entry.mode is not None and entry.sha is not None
            path = entry.path.decode(errors="replace")
            if not stat.S_ISREG(entry.mode):
                left_out.append(path)
                continue
            blob = repo[entry.sha]
            assert isinstance(blob, Blob)
            data = blob.as_raw_string()
            size += len(data)
            if size > MAX_TREE_BYTES or len(files) >= MAX_TREE_FILES:
                raise GitError(
                    f"The folder {folder or '/'!r} holds more than a stack's files may "
                    f"({MAX_TREE_FILES} files, {MAX_TREE_BYTES // 2**20} MiB)"
                )
            files[path] = data
    return files, left_out


def file_changes(
    old: Mapping[str, bytes | None], new: Mapping[str, bytes | None]
) -> tuple[FileChange, ...]:
    """What turns the files `old` into `new`, file by file, with a text diff each."""
    changes = []
    for path in sorted(set(old) | set(new)):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        kind: Change = "added" if before is None else "removed" if after is None else "modified"
        changes.append(FileChange(path, kind, _diff(path, before, after)))
    return tuple(changes)


def _diff(path: str, before: bytes | None, after: bytes | None) -> str | None:
    try:
        old = (before or b"").decode().splitlines(keepends=True)
        new = (after or b"").decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        return None
    lines = list(
        difflib.unified_diff(
            old,
            new,
            f"a/{path}" if before is not None else "/dev/null",
            f"b/{path}" if after is not None else "/dev/null",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... {len(lines) - MAX_DIFF_LINES} more lines\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
