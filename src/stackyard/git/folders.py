"""A git stack's folder against its commits: the files a commit gives the stack (its
`.env` layered over the host's), what turns the folder into another commit's, and the
files edited here since the deployed commit (`.env` and `.secrets` are the host's own,
never counted). Blocking: called in threads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from stackyard.clock import utcnow
from stackyard.git import history
from stackyard.git.env import layered_env
from stackyard.git.model import GitStack
from stackyard.stacks.tree import OWN_FILES, Tree

ENV = ".env"
#: Reads a stack's files at the given paths (`StackStore.read_files`).
ReadFiles = Callable[[str, list[str]], Tree]


def stack_files(files: Tree, env_here: bytes | None) -> Tree:
    """A repository folder's files as the stack's: `.env` layered over the host's, and
    never what Stackyard keeps (`.secrets`) or git's own folder."""
    out: Tree = {
        p: d for p, d in files.items() if p != ENV and p.split("/")[0] not in (*OWN_FILES, ".git")
    }
    env = layered_env(files.get(ENV), env_here)
    if env is not None:
        out[ENV] = env
    return out


def deployed_files(mirror: Path, stack: GitStack) -> Tree:
    """The files of the stack's folder at its deployed commit (none before its first)."""
    if stack.deployed is None:
        return {}
    files, _ = history.files_at(mirror, stack.deployed, stack.path)
    return dict(files)


def writes(mirror: Path, stack: GitStack, sha: str, read: ReadFiles) -> Tree:
    """What turns the stack's folder into commit `sha`'s: its files, None for those the
    deployed commit had and this one has not, `.env` layered over the host's."""
    new, _ = history.files_at(mirror, sha, stack.path)
    old = deployed_files(mirror, stack)
    files: Tree = {p: None for p in old if p not in new and p != ENV}
    files.update(stack_files(new, read(stack.stack, [ENV])[ENV]))
    return files


def edited(mirror: Path, stack: GitStack, read: ReadFiles) -> list[str]:
    """The files of the deployed commit that differ in the stack's folder now."""
    files = {p: d for p, d in deployed_files(mirror, stack).items() if p != ENV}
    now = read(stack.stack, list(files))
    return sorted(p for p, data in files.items() if now.get(p) != data)


def keep_aside(stacks_dir: Path, stack_id: str, paths: list[str], read: ReadFiles) -> str:
    """Copies of the stack's files at `paths` in `.trash/<stack>-edits-<UTC time>/` of the
    stacks folder (before they are overwritten); where, relative to the stacks folder."""
    aside = f".trash/{stack_id}-edits-{utcnow():%Y%m%dT%H%M%SZ}"
    for path, data in read(stack_id, paths).items():
        if data is not None:
            target = stacks_dir / aside / path
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            target.write_bytes(data)
    return aside
