"""The database phase (the central's): its database opened and brought up to date, and
what admins keep in it. Apart from the services (`stackyard.root.build`): a command on
accounts or tokens needs no more than this."""

from __future__ import annotations

from stackyard.auth.users import migrate_legacy_roles
from stackyard.db import Database
from stackyard.db.admin_settings import AdminSettings
from stackyard.identity.config import adopt_file as adopt_provider_file
from stackyard.registry.credentials import adopt_file as adopt_registry_file
from stackyard.settings import Settings


def database(settings: Settings) -> Database:
    """The central's database, its schema reconciled and its records brought up to date."""
    settings.prepare_dirs()
    db = Database(settings.effective_database_url)
    db.reconcile()
    migrate_legacy_roles(db)
    return db


def admin_settings(settings: Settings, db: Database) -> AdminSettings:
    """What admins set, in the database; what earlier versions kept in files of the data
    folder is moved in (once)."""
    stored = AdminSettings(db, settings.effective_secret_key)
    for adopt_file in (adopt_provider_file, adopt_registry_file):
        adopt_file(settings.data_dir, settings.effective_secret_key, stored)
    return stored
