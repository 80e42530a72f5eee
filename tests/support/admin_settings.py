"""The admin settings on a real database (the embedded one or PostgreSQL, as the test's
`database_url` says), for the stores kept in them."""

from __future__ import annotations

from stackyard.db import Database
from stackyard.db.admin_settings import AdminSettings


def admin_settings_on(database_url: str, secret_key: str) -> AdminSettings:
    """The admin settings of the database at `database_url` (its schema made), sealed
    under `secret_key`: two of them on one database are one instance whose key changed."""
    db = Database(database_url)
    db.reconcile()
    return AdminSettings(db, secret_key)
