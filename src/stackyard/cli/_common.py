"""What the command groups share: settings, the database, the stacks of this host."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stackyard.backups.service import BackupService
    from stackyard.db import Database
    from stackyard.settings import Settings
    from stackyard.stacks.service import StackService


def settings() -> Settings:
    from stackyard.settings import Settings

    return Settings()


def database() -> Database:
    from stackyard.db import Database

    current = settings()
    current.prepare_dirs()
    db = Database(current.effective_database_url)
    db.reconcile()
    return db


def stacks() -> StackService:
    from stackyard.stacks.host import Host
    from stackyard.stacks.service import StackService

    current = settings()
    current.prepare_dirs()
    return StackService(Host(current))


def backups() -> BackupService:
    from stackyard.backups.service import BackupService

    return BackupService(stacks())
