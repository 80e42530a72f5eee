"""What each role may do: the one table of permissions. The API's role checks follow the
same order of roles (`Role.at_least`), and `GET /api/auth/me` lists the signed-in user's
permissions, so that the UI offers only what the server allows."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal, get_args

from stackyard.auth.principal import Role

Permission = Literal[
    # Start / stop / restart / update / down a stack.
    "stacks.run",
    # "Check now": ask the registries for newer images.
    "stacks.checkUpdates",
    # The per-stack auto-update switch.
    "stacks.autoUpdate",
    # Read a stack's logs (they may hold secrets): live, and as a file.
    "stacks.logs",
    # A shell in a running container (root on it, as a rule).
    "stacks.shell",
    # Back a stack up, list and check archives.
    "backups.create",
    # Download (archives hold .secrets), upload, delete and restore archives.
    "backups.administer",
    # Backup destinations: their settings and secrets, tests, the archives on them, push and pull.
    "destinations.manage",
    # Backup schedules: timetables, retention, "run now", their history.
    "schedules.manage",
    # Agents: add, edit (their token), test, enable or disable, delete (everyone sees the list).
    "agents.manage",
    # Edit compose and .env, read and edit .secrets (compose can mount any host path).
    "stacks.editFiles",
    "stacks.create",
    # Delete a stack and its folder.
    "stacks.delete",
    # Start, stop, restart and read the logs of the containers no stack owns.
    "containers.manage",
    # Pull and remove the images of the repositories the stacks name.
    "disk.stackImages",
    # Remove any image, volume or network; preview and run prunes.
    "disk.manage",
    # The file browser: the whole stacks folder.
    "files",
    # Notification channels and rules, their tests and history.
    "notifications.manage",
    # Update Stackyard itself, or an agent, to the latest release.
    "system.update",
    # Users, registry credentials, the audit log.
    "admin.users",
    "admin.registries",
    "admin.audit",
]

#: Every permission, in the order above.
PERMISSIONS: Final[tuple[Permission, ...]] = get_args(Permission)

#: The least role that has each permission (a role has what the roles below it have).
LEAST_ROLE: Final[Mapping[Permission, Role]] = MappingProxyType(
    {
        "stacks.run": Role.operator,
        "stacks.checkUpdates": Role.operator,
        "stacks.autoUpdate": Role.operator,
        "stacks.logs": Role.operator,
        "stacks.shell": Role.admin,
        "backups.create": Role.operator,
        "backups.administer": Role.admin,
        "destinations.manage": Role.admin,
        "schedules.manage": Role.admin,
        "agents.manage": Role.admin,
        "stacks.editFiles": Role.admin,
        "stacks.create": Role.admin,
        "stacks.delete": Role.admin,
        "containers.manage": Role.admin,
        "disk.stackImages": Role.operator,
        "disk.manage": Role.admin,
        "files": Role.admin,
        "notifications.manage": Role.admin,
        "system.update": Role.admin,
        "admin.users": Role.admin,
        "admin.registries": Role.admin,
        "admin.audit": Role.admin,
    }
)


def allows(role: Role, permission: Permission) -> bool:
    return role.at_least(LEAST_ROLE[permission])


def permissions_of(role: Role) -> list[Permission]:
    """What `role` may do, in the order of `PERMISSIONS`."""
    return [permission for permission in PERMISSIONS if allows(role, permission)]
