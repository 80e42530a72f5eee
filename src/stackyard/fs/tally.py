"""What a folder holds: its files and their bytes, counted without following a link and
without reading past `COUNT_LIMIT` entries (a folder with millions of files answers "at
least" in time). The delete plan shows it; a backup's total and progress use it."""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

#: Entries counted in a folder before the count stops (and says "at least").
COUNT_LIMIT = 200_000


@dataclass(frozen=True)
class Tally:
    files: int  # anything but folders
    size: int  # bytes of regular files
    complete: bool  # False: an entry could not be read, or the count stopped at the limit


def tally(folder: Path, skip: Collection[Path] = (), limit: int = COUNT_LIMIT) -> Tally:
    """The files and bytes under `folder`, but those under the folders in `skip`."""
    files = size = seen = 0
    complete = True
    pending = [str(folder)]
    skipped = {str(path) for path in skip}
    while pending:
        current = pending.pop()
        try:
            entries = os.scandir(current)
        except OSError:
            complete = False
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > limit:
                    return Tally(files, size, False)
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    complete = False
                    continue
                if stat.S_ISDIR(info.st_mode):
                    if entry.path not in skipped:
                        pending.append(entry.path)
                    continue
                files += 1
                if stat.S_ISREG(info.st_mode):
                    size += info.st_size
    return Tally(files, size, complete)
