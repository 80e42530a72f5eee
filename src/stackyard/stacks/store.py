"""Stack folders in STACKS_DIR: listing, creating, reading and editing their files,
deleting. Ids are slugs; nothing here can reach outside STACKS_DIR.

A stack's files are read and written through descriptors: the stacks folder is opened,
the stack's folder opened in it without following a link, and each file opened beneath
that folder (`stackyard.fs.beneath`): a symlink inside the stack folder is followed, one
that leads out of it (to /etc/passwd, say) is refused."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from stackyard.compose.candidate import Validator, check_candidate
from stackyard.compose.project import COMPOSE_FILES, compose_file
from stackyard.errors import Conflict, Forbidden, Invalid, NotFound
from stackyard.fs import beneath
from stackyard.fs.at import (
    DIRECTORY,
    remove_tree_at,
    write_atomic_at,
)
from stackyard.fs.errors import converted
from stackyard.slugs import check_slug, slugify
from stackyard.stacks.tree import Tree, checked_tree, put_tree, read_tree

FileKind = Literal["compose", "env", "secrets"]
#: Ids the API uses as words under /api/stacks/.
RESERVED = frozenset({"updates"})
MAX_FILE_BYTES = 1024 * 1024
#: The folder of the stacks folder that deleted stacks are moved to.
TRASH = ".trash"


@dataclass(frozen=True)
class StackFiles:
    compose_name: str
    compose: str
    env: str
    has_secrets: bool


class StackStore:
    def __init__(self, root: Path, validate: Validator) -> None:
        self.root = root
        self._validate = validate

    def ids(self) -> list[str]:
        """Every folder of STACKS_DIR that holds a compose file, by id."""
        if not self.root.is_dir():
            return []
        found = []
        for entry in os.scandir(self.root):
            if (
                entry.is_dir(follow_symlinks=False)
                and _is_id(entry.name)
                and compose_file(Path(entry.path)) is not None
            ):
                found.append(entry.name)
        return sorted(found)

    def folder(self, stack_id: str) -> Path:
        """The folder of an existing stack (NotFound otherwise)."""
        check_slug(stack_id)
        path = self.root / stack_id
        if path.is_symlink() or not path.is_dir() or compose_file(path) is None:
            raise NotFound(f"Stack {stack_id!r} does not exist")
        return path

    @contextlib.contextmanager
    def _opened(self, stack_id: str) -> Iterator[int]:
        """The stack's folder as a descriptor: opened in the stacks folder, never through a
        link (a stack folder that is a symlink is no stack)."""
        self.folder(stack_id)
        try:
            root = os.open(self.root, DIRECTORY)
        except FileNotFoundError as exc:
            raise NotFound(f"Stack {stack_id!r} does not exist") from exc
        try:
            fd = os.open(stack_id, DIRECTORY | os.O_NOFOLLOW, dir_fd=root)
        except OSError as exc:
            raise NotFound(f"Stack {stack_id!r} does not exist") from exc
        finally:
            os.close(root)
        try:
            yield fd
        finally:
            os.close(fd)

    def create(self, name: str, compose: str, env: str = "") -> str:
        _check_size(compose, env)
        return self.create_from(name, {"compose.yaml": compose.encode(), ".env": env.encode()})

    def create_from(self, name: str, files: Tree) -> str:
        """A new stack of `files` (relative path -> bytes; one of them a compose file),
        checked as a stack's files are before the folder is in place."""
        stack_id = slugify(name)
        if stack_id in RESERVED:
            raise Invalid(f"{stack_id!r} is a reserved name")
        files = checked_tree(files)
        main = next((n for n in COMPOSE_FILES if files.get(n) is not None), None)
        if main is None:
            raise Invalid(f"No compose file among the files ({', '.join(COMPOSE_FILES)})")
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.root / stack_id
        if target.exists() or target.is_symlink():
            raise Conflict(f"Stack {stack_id!r} already exists")
        # Build the folder aside and move it into place only once it is valid.
        staging = Path(tempfile.mkdtemp(dir=self.root, prefix=f".{stack_id}.creating-"))
        root = os.open(self.root, DIRECTORY)
        try:
            folder = os.open(staging.name, DIRECTORY | os.O_NOFOLLOW, dir_fd=root)
            try:
                put_tree(folder, files)
                env = staging / ".env" if files.get(".env") is not None else None
                with _as_seen_at({str(staging): str(target)}):
                    self._validate(staging, [staging / main], env)
                os.fchmod(folder, 0o755)
            finally:
                os.close(folder)
            try:
                os.rename(staging.name, stack_id, src_dir_fd=root, dst_dir_fd=root)
            except OSError as exc:
                raise Conflict(f"Stack {stack_id!r} already exists") from exc
        finally:
            with contextlib.suppress(FileNotFoundError):
                remove_tree_at(root, staging.name)
            os.close(root)
        return stack_id

    def read(self, stack_id: str) -> StackFiles:
        with self._opened(stack_id) as folder:
            name = _compose_name(folder, stack_id)
            return StackFiles(
                compose_name=name,
                compose=_read_in(folder, stack_id, name) or "",
                env=_read_in(folder, stack_id, ".env") or "",
                has_secrets=_has(folder, stack_id, ".secrets"),
            )

    def read_files(self, stack_id: str, paths: list[str]) -> Tree:
        """The stack's files at `paths` as they are now (None: there is none)."""
        with self._opened(stack_id) as folder, _converted(stack_id, "a file"):
            return read_tree(folder, paths)

    def put_files(self, stack_id: str, files: Tree) -> None:
        """Files written whole, None ones removed (`stacks.tree.put_tree`); not checked
        as compose files: the caller deploys them through the update's gate."""
        with self._opened(stack_id) as folder, _converted(stack_id, "a file"):
            put_tree(folder, files)

    def read_secrets(self, stack_id: str) -> str:
        with self._opened(stack_id) as folder:
            return _read_in(folder, stack_id, ".secrets") or ""

    def write(self, stack_id: str, kind: FileKind, content: str) -> None:
        """Save a file; compose and .env are validated first, and kept as they were if
        the new content is refused. A link inside the stack folder is followed (the file
        it names is replaced); one that leads out of it is refused."""
        path = self.folder(stack_id)
        _check_size(content)
        with self._opened(stack_id) as folder:
            current = _compose_name(folder, stack_id)
            name = {"compose": current, "env": ".env", "secrets": ".secrets"}[kind]
            with _converted(stack_id, name):
                parent, final = beneath.open_parent_following(folder, name)
            try:
                if kind in ("compose", "env"):
                    with _converted(stack_id, name):
                        check_candidate(folder, path, name, content.encode(), self._validate)
                mode = 0o600 if kind == "secrets" else None
                with _converted(stack_id, name):
                    write_atomic_at(parent, final, content.encode(), mode)
            finally:
                os.close(parent)

    def delete_folder(self, stack_id: str, aside_as: str) -> str:
        """Move the stack's folder aside to `.trash/<aside_as>` in the stacks folder (a
        rename: the same file system, nothing copied, nothing erased; a dot-folder is never
        a stack). A name already taken gets a suffix. Returns the new place, relative to
        the stacks folder."""
        self.folder(stack_id)
        if "/" in aside_as or aside_as.startswith(".") or "\0" in aside_as:
            raise Invalid(f"{aside_as!r} is no name for a folder in {TRASH}")
        root = os.open(self.root, DIRECTORY)
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(TRASH, 0o700, dir_fd=root)
            try:
                trash = os.open(TRASH, DIRECTORY | os.O_NOFOLLOW, dir_fd=root)
            except OSError as exc:
                raise Conflict(
                    f"Stack {stack_id!r} was not deleted: {TRASH} in the stacks folder is not "
                    f"a folder ({exc.strerror})"
                ) from exc
            try:
                for attempt in range(1, 100):
                    name = aside_as if attempt == 1 else f"{aside_as}-{attempt}"
                    try:
                        # Claim the name, then rename the folder onto the empty folder we own.
                        os.mkdir(name, 0o700, dir_fd=trash)
                    except FileExistsError:
                        continue
                    try:
                        os.rename(stack_id, name, src_dir_fd=root, dst_dir_fd=trash)
                    except OSError as exc:
                        with contextlib.suppress(OSError):
                            os.rmdir(name, dir_fd=trash)
                        raise Conflict(
                            f"Stack {stack_id!r} was not deleted: its folder could not be "
                            f"moved to {TRASH} ({exc.strerror})"
                        ) from exc
                    return f"{TRASH}/{name}"
                raise Conflict(f"Stack {stack_id!r} was not deleted: {TRASH} is full of its names")
            finally:
                os.close(trash)
        finally:
            os.close(root)


def _converted(stack_id: str, name: str) -> AbstractContextManager[None]:
    """OSErrors about a stack's file, as typed errors; a link out of the folder is Forbidden."""
    return converted(
        f"{name} of stack {stack_id}",
        EXDEV=Forbidden(
            f"{name} of stack {stack_id!r} is a symbolic link that leads outside the stack "
            "folder; it is not followed"
        ),
    )


#: Opening never blocks (a FIFO) nor takes a terminal; non-files are refused after fstat.
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY


def _read_in(folder: int, stack_id: str, name: str) -> str | None:
    """A file of the stack folder (None: there is none)."""
    with _converted(stack_id, name):
        try:
            fd = beneath.open_beneath(folder, name, _READ)
        except FileNotFoundError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Invalid(f"{name} of stack {stack_id!r} is not a regular file")
            chunks = []
            while chunk := os.read(fd, 1024 * 1024):
                chunks.append(chunk)
        finally:
            os.close(fd)
    return b"".join(chunks).decode(errors="replace")


def _has(folder: int, stack_id: str, name: str) -> bool:
    """Whether the stack folder has file `name`. A link out of the folder counts (reading
    it is refused with a clear error)."""
    try:
        fd = beneath.open_beneath(folder, name, os.O_PATH)
    except OSError as exc:
        return exc.errno == errno.EXDEV
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def _compose_name(folder: int, stack_id: str) -> str:
    """The compose file's name, in compose's order of preference (see `compose_file`);
    a compose file that is a link out of the folder is refused."""
    for name in COMPOSE_FILES:
        with _converted(stack_id, name):
            try:
                fd = beneath.open_beneath(folder, name, os.O_PATH)
            except FileNotFoundError:
                continue
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return name
        finally:
            os.close(fd)
    raise NotFound(f"Stack {stack_id!r} does not exist")


@contextlib.contextmanager
def _as_seen_at(paths: dict[str, str]) -> Iterator[None]:
    """Compose names the file it checked: name the user's file, not our scratch copy."""
    try:
        yield
    except Invalid as exc:
        detail = exc.detail
        for scratch, real in paths.items():
            detail = detail.replace(scratch, real)
        raise Invalid(detail) from exc


def _is_id(name: str) -> bool:
    try:
        check_slug(name)
    except Invalid:
        return False
    return True


def _check_size(*contents: str) -> None:
    for content in contents:
        if len(content.encode()) > MAX_FILE_BYTES:
            raise Invalid(f"File too large (more than {MAX_FILE_BYTES // 1024} KiB)")
