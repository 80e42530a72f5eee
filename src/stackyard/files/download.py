"""What a download sends: a file's bytes, or a folder as a zip stream.

Both come from a descriptor opened beneath the root when the request was checked: what
is sent is what was checked, whatever happens to the path meanwhile."""

from __future__ import annotations

import mimetypes
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from stackyard.errors import Invalid
from stackyard.files.browse import CHUNK, READ_FLAGS
from stackyard.files.confine import clean, errors_for, open_in, opened_root
from stackyard.fs.at import Fd

# What compose folders hold, which not every system's MIME table knows.
for _suffix, _type in (
    (".yaml", "application/yaml"),
    (".yml", "application/yaml"),
    (".env", "text/plain"),
    (".toml", "application/toml"),
):
    mimetypes.add_type(_type, _suffix)


@dataclass(frozen=True)
class FileDownload:
    filename: str
    media_type: str
    size: int
    modified: float  # st_mtime
    chunks: Iterator[bytes]


@dataclass(frozen=True)
class ZipDownload:
    filename: str
    chunks: Iterator[bytes]


def _file_chunks(handle: Fd, size: int) -> Iterator[bytes]:
    """At most `size` bytes (the length announced), in 1 MiB chunks."""
    with handle as fd:
        left = size
        while left > 0:
            chunk = os.read(fd, min(CHUNK, left))
            if not chunk:
                break
            left -= len(chunk)
            yield chunk


def prepare(root: Path, user_path: str, zip_level: int) -> FileDownload | ZipDownload:
    relative = clean(user_path)
    name = relative.name or root.name
    with opened_root(root) as root_fd:
        handle = Fd(open_in(root_fd, relative, READ_FLAGS))
    try:
        with errors_for(relative):
            st = os.fstat(handle.fd)
    except BaseException:
        handle.close()
        raise
    if stat.S_ISDIR(st.st_mode):
        # stream-zip loads with the first folder download (0.05 s a start need not pay).
        from stackyard.files.zipstream import zip_folder

        return ZipDownload(f"{name}.zip", zip_folder(handle, zip_level, name))
    if not stat.S_ISREG(st.st_mode):
        handle.close()
        raise Invalid(f"Not a regular file or folder: {user_path}")
    media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return FileDownload(name, media_type, st.st_size, st.st_mtime, _file_chunks(handle, st.st_size))
