"""The time of day, in UTC: one definition for the whole service (the database's column
types live in `db/types.py`; a module that only needs the time does not import SQLAlchemy)."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)
