"""Host paths that are never a stack's data: not selected by the inventory, never written
by a restore, whatever an archive says."""

from __future__ import annotations

import posixpath

#: Host paths that are never data of a stack.
SYSTEM_PATHS = frozenset(
    {
        "/",
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib64",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/tmp",
        "/usr",
        "/var",
        "/var/lib",
        "/var/lib/docker",
        "/var/run",
        "/var/run/docker.sock",
        "/run/docker.sock",
        "/mnt",
        "/media",
    }
)
#: Everything under these is system (sockets, kernel views, the engine's own data).
SYSTEM_TREES = (
    "/proc/",
    "/sys/",
    "/dev/",
    "/run/",
    "/var/run/",
    "/var/lib/docker/",
    "/boot/",
    "/etc/",
    "/usr/",
    "/bin/",
    "/sbin/",
    "/lib/",
    "/lib64/",
    "/root/",  # root's keys and shell start-up files
)


def system_reason(path: str) -> str | None:
    normal = posixpath.normpath(path)
    if normal in SYSTEM_PATHS or normal.startswith(SYSTEM_TREES):
        return f"{normal} is a system path of the host, not data of this stack"
    return None
