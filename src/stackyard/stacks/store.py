"""Stack folders in STACKS_DIR: listing, creating, reading and editing their files,
deleting. Ids are slugs; nothing here can reach outside STACKS_DIR."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from stackyard.compose.project import compose_file
from stackyard.errors import Conflict, Invalid, NotFound
from stackyard.files_atomic import write_atomic
from stackyard.slugs import check_slug, slugify

FileKind = Literal["compose", "env", "secrets"]
#: Ids the API uses as words under /api/stacks/.
RESERVED = frozenset({"updates"})
MAX_FILE_BYTES = 1024 * 1024

#: Validates a candidate compose file (and env file) in a folder; raises Invalid.
Validator = Callable[[Path, Path, Path | None], None]


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

    def create(self, name: str, compose: str, env: str = "") -> str:
        stack_id = slugify(name)
        if stack_id in RESERVED:
            raise Invalid(f"{stack_id!r} is a reserved name")
        _check_size(compose, env)
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.root / stack_id
        if target.exists() or target.is_symlink():
            raise Conflict(f"Stack {stack_id!r} already exists")
        # Build the folder aside and move it into place only once it is valid.
        staging = Path(tempfile.mkdtemp(dir=self.root, prefix=f".{stack_id}.creating-"))
        try:
            (staging / "compose.yaml").write_text(compose)
            (staging / ".env").write_text(env)
            with _as_seen_at({str(staging): str(target)}):
                self._validate(staging, staging / "compose.yaml", staging / ".env")
            os.chmod(staging, 0o755)
            try:
                os.rename(staging, target)
            except OSError as exc:
                raise Conflict(f"Stack {stack_id!r} already exists") from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return stack_id

    def read(self, stack_id: str) -> StackFiles:
        folder = self.folder(stack_id)
        path = compose_file(folder)
        assert path is not None
        return StackFiles(
            compose_name=path.name,
            compose=path.read_text(errors="replace"),
            env=_read_optional(folder / ".env"),
            has_secrets=(folder / ".secrets").is_file(),
        )

    def read_secrets(self, stack_id: str) -> str:
        return _read_optional(self.folder(stack_id) / ".secrets")

    def write(self, stack_id: str, kind: FileKind, content: str) -> None:
        """Save a file; compose and .env are validated first, and kept as they were if
        the new content is refused."""
        folder = self.folder(stack_id)
        _check_size(content)
        current = compose_file(folder)
        assert current is not None
        target = {"compose": current, "env": folder / ".env", "secrets": folder / ".secrets"}[kind]
        if kind in ("compose", "env"):
            candidate = folder / f".{target.name}.stackyard-check"
            try:
                candidate.write_text(content)
                with _as_seen_at({str(candidate): str(target)}):
                    if kind == "compose":
                        self._validate(folder, candidate, _existing(folder / ".env"))
                    else:
                        self._validate(folder, current, candidate)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    candidate.unlink()
        write_atomic(target, content.encode(), mode=0o600 if kind == "secrets" else None)

    def delete_folder(self, stack_id: str) -> None:
        folder = self.folder(stack_id)
        # Move aside first: a half-deleted folder is never mistaken for a stack.
        doomed = Path(tempfile.mkdtemp(dir=self.root, prefix=f".{stack_id}.deleting-"))
        os.rename(folder, doomed / stack_id)
        shutil.rmtree(doomed)


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


def _existing(path: Path) -> Path | None:
    return path if path.is_file() else None


def _read_optional(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def _check_size(*contents: str) -> None:
    for content in contents:
        if len(content.encode()) > MAX_FILE_BYTES:
            raise Invalid(f"File too large (more than {MAX_FILE_BYTES // 1024} KiB)")
