"""What every host has, built the same way for the central's own host, an agent's, and a
command's (`stackyard stack ...` builds no more than this)."""

from __future__ import annotations

from collections.abc import Callable

from stackyard.auth.audit import Recorder
from stackyard.backups.service import BackupService
from stackyard.db.admin_settings import AdminSettings
from stackyard.disk.service import DiskService
from stackyard.git.service import GitService
from stackyard.git.store import GitStore
from stackyard.root.services import Services
from stackyard.settings import Mode, Settings
from stackyard.stacks.machine import Machine
from stackyard.stacks.service import StackService
from stackyard.system.self_update import SelfUpdate


def host(
    settings: Settings,
    mode: Mode,
    admin: Callable[[], AdminSettings | None] = lambda: None,
    audit: Recorder | None = None,
) -> Services:
    """This host's services. `admin`: where the registry logins are kept, asked when first
    needed (the central's database; none on an agent); `audit`: where work that no
    request asked for is audited (the central's log; none on an agent)."""
    machine = Machine(settings, admin_settings=admin)
    stacks = StackService(machine, audit)
    git = GitService(
        stacks, GitStore(settings.data_dir, settings.effective_secret_key), settings.data_dir
    )
    return Services(
        settings=settings,
        machine=machine,
        stacks=stacks,
        backups=BackupService(stacks),
        self_update=SelfUpdate(
            settings.app_version,
            settings.data_dir,
            lambda: machine.docker,
            machine.registry_client,
            mode,
            settings.update_health_seconds,
        ),
        git=git,
        disk=DiskService(machine, machine.events.raise_event),
    )
