"""OSError -> the error tree, where file-system calls enter capability code.

Messages name the path as the user gave it (relative to its root), never a host path
and never the text of the OSError (which may hold one).
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator

from stackyard.errors import Conflict, Forbidden, Invalid, NotFound, StackyardError

_MESSAGES: dict[int, tuple[type[StackyardError], str]] = {
    errno.ENOENT: (NotFound, "No such file or folder: {}"),
    errno.ENOTDIR: (Invalid, "Not a folder: {}"),
    errno.EISDIR: (Invalid, "Is a folder, not a file: {}"),
    errno.ELOOP: (Invalid, "Too many levels of symbolic links (a link loop?): {}"),
    errno.ENAMETOOLONG: (Invalid, "Name or path too long: {}"),
    errno.EEXIST: (Conflict, "Already exists: {}"),
    errno.ENOTEMPTY: (Conflict, "Folder is not empty: {}"),
    errno.EBUSY: (Conflict, "In use (a mount point?): {}"),
    errno.ETXTBSY: (Conflict, "In use: {}"),
    errno.ENOSPC: (Conflict, "No space left on the device for {}"),
    errno.EDQUOT: (Conflict, "Disk quota exceeded for {}"),
    errno.EACCES: (Forbidden, "Permission denied: {}"),
    errno.EPERM: (Forbidden, "Operation not permitted: {}"),
    errno.EROFS: (Forbidden, "Read-only file system: {}"),
    # From resolution beneath a root: a link or ".." that leads out of it.
    errno.EXDEV: (Forbidden, "Path leads outside the root: {}"),
    errno.ENXIO: (Invalid, "Not a regular file or folder: {}"),
    errno.EINVAL: (Invalid, "Invalid operation on {}"),
    errno.ESTALE: (Conflict, "Changed by someone else during the operation: {}"),
    errno.EMFILE: (Conflict, "Too many open files; try again: {}"),
}


def as_error(exc: OSError, what: str) -> StackyardError | None:
    """The typed error for `exc` about the user's path `what`, or None if unknown."""
    known = _MESSAGES.get(exc.errno or 0)
    if known is None:
        return None
    cls, message = known
    return cls(message.format(what or "/"))


@contextlib.contextmanager
def converted(what: str, **overrides: StackyardError) -> Iterator[None]:
    """Raise the typed error for an OSError inside the block (cause chained); unknown
    errnos propagate as they are. `overrides` by errno name, e.g. EXDEV=Invalid(...)."""
    try:
        yield
    except OSError as exc:
        name = errno.errorcode.get(exc.errno or 0, "")
        typed = overrides.get(name) or as_error(exc, what)
        if typed is None:
            raise
        raise typed from exc
