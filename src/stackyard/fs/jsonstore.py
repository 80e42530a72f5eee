"""One JSON document in a file, shared by threads and processes (the service, the CLI).

- Reading never blocks and never fails on a missing or corrupt file: the default is
  returned instead (or, when asked to be strict, `StoreCorrupt` is raised).
- Changing is read-modify-write under an exclusive `flock` on `<name>.lock` beside the
  file, so that two writers never lose each other's changes.
- Writing is `fs.atomic.write_atomic`: whole or not at all, mode 0600 (these files hold
  caches, preferences and credentials of the data folder).
- An optional `Codec` seals the bytes on disk (the credential store encrypts them).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from stackyard.fs.atomic import write_atomic

__all__ = ["Codec", "JsonStore", "StoreCorrupt"]

log = logging.getLogger(__name__)
FILE_MODE = 0o600


class StoreCorrupt(ValueError):
    """The file exists but cannot be decoded (bad JSON, or the codec refused it)."""


class Codec(Protocol):
    """Bytes on disk <-> the JSON text. `decode` raises ValueError for what it cannot
    read (e.g. a key that changed)."""

    def encode(self, data: bytes) -> bytes: ...

    def decode(self, data: bytes) -> bytes: ...


class JsonStore:
    def __init__(self, path: Path, *, codec: Codec | None = None, mode: int = FILE_MODE) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self._codec = codec
        self._mode = mode

    # -- reading ----------------------------------------------------------------------
    def read(self, default: Any = None, *, strict: bool = False) -> Any:
        """The document; `default` when there is no file. A file that cannot be decoded
        counts as absent (logged), or raises StoreCorrupt when `strict`."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return default
        try:
            if self._codec is not None:
                raw = self._codec.decode(raw)
            return json.loads(raw)
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, the codec's
            if strict:
                raise StoreCorrupt(f"{self.path.name} cannot be read") from exc
            log.warning("%s cannot be read; starting from empty", self.path)
            return default

    # -- changing ---------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive across threads and processes (flock on the lock file)."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, self._mode)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def write(self, value: Any) -> None:
        """Replace the document (under the lock)."""
        with self.locked():
            self._write(value)

    def update(
        self, change: Callable[[Any], Any], default: Any = None, *, strict: bool = False
    ) -> Any:
        """Read the current document (`default` when absent), `change` it, write what it
        returns; all under the lock. Returns the new document."""
        with self.locked():
            value = change(self.read(default, strict=strict))
            self._write(value)
            return value

    def remove(self) -> None:
        """Delete the document and its lock file. A writer that waited for the lock
        meanwhile still writes, as if it had come after the removal."""
        with self.locked():
            for path in (self.path, self.lock_path):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()

    def _write(self, value: Any) -> None:
        data = json.dumps(value).encode()
        if self._codec is not None:
            data = self._codec.encode(data)
        write_atomic(self.path, data, mode=self._mode)
