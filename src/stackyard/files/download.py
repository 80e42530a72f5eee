"""What a download sends: a file's bytes, or a folder as a zip stream."""

from __future__ import annotations

import mimetypes
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from stackyard.errors import Invalid
from stackyard.files.confine import confine
from stackyard.files.zipstream import zip_folder

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
    path: Path
    filename: str
    media_type: str


@dataclass(frozen=True)
class ZipDownload:
    filename: str
    chunks: Iterator[bytes]


def prepare(root: Path, user_path: str, zip_level: int) -> FileDownload | ZipDownload:
    path = confine(root, user_path)
    if path.is_dir():
        return ZipDownload(f"{path.name}.zip", zip_folder(path, zip_level))
    if not path.is_file():
        raise Invalid(f"Not a regular file or folder: {user_path}")
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return FileDownload(path, path.name, media_type)
