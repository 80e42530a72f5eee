"""Which project directory compose gets for a stack: the stack's folder by the Docker
host's path of the stacks folder, where that path leads to the same folder here.

When the service runs in a container with the stacks folder mounted at another path than
on the host (`STACKS_DIR` != `STACKS_HOST_DIR`), compose must resolve a stack's relative
bind mounts (`./data`) against the host's path, which the engine understands, not the
container's. Inside the container the host path is made to lead to the mounted folder (a
symlink, made once at start-up where nothing exists at that path) and compose is given it
as the project directory: the files are read through the link, the paths it writes into
the containers' definitions are the host's.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

#: Docker creates this file in every container.
IN_CONTAINER_MARK = Path("/.dockerenv")


@dataclass(frozen=True)
class ProjectDirs:
    """Which folder compose gets as each stack's project directory (`project_dir`)."""

    stacks_dir: Path
    #: The host's path of the stacks folder, when it differs from `stacks_dir`.
    host_dir: Path | None
    #: True when `host_dir` leads to `stacks_dir` in this process (compose can use it).
    usable: bool
    #: Why compose cannot use the host path, when it cannot (reported, never fatal).
    problem: str | None = None

    def project_dir(self, folder: Path) -> Path:
        """The folder compose takes as a stack's project directory: its host path where
        that leads to the same folder here, else the folder itself."""
        if not self.usable or self.host_dir is None:
            return folder
        try:
            return self.host_dir / folder.relative_to(self.stacks_dir)
        except ValueError:
            return folder


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def project_dirs(stacks_dir: Path, host_dir: Path, in_container: bool | None = None) -> ProjectDirs:
    """Make `host_dir` lead to `stacks_dir` where it can be done safely: only in a
    container, and only where nothing exists at `host_dir` yet (a link is added, nothing
    is ever replaced)."""
    stacks_dir = stacks_dir.resolve()
    if not host_dir.is_absolute() or host_dir == stacks_dir:
        return ProjectDirs(stacks_dir, None, False)
    if _same_folder(host_dir, stacks_dir):
        return ProjectDirs(stacks_dir, host_dir, True)
    if in_container is None:
        in_container = IN_CONTAINER_MARK.exists()
    if os.path.lexists(host_dir):
        problem = (
            f"STACKS_HOST_DIR {host_dir} exists here and is not the stacks folder "
            f"{stacks_dir}: relative bind mounts resolve to paths under {stacks_dir}"
        )
    elif not in_container:
        problem = (
            f"STACKS_HOST_DIR {host_dir} differs from STACKS_DIR {stacks_dir} outside a "
            f"container: relative bind mounts resolve to paths under {stacks_dir}"
        )
    else:
        try:
            host_dir.parent.mkdir(parents=True, exist_ok=True)
            host_dir.symlink_to(stacks_dir, target_is_directory=True)
        except OSError as exc:
            problem = f"Could not link {host_dir} to {stacks_dir} in this container: {exc}"
        else:
            log.info("Compose reaches the stacks folder by its host path %s", host_dir)
            return ProjectDirs(stacks_dir, host_dir, True)
    log.warning("%s", problem)
    return ProjectDirs(stacks_dir, host_dir, False, problem)
