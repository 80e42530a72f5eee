"""Database: engine and sessions, mapped models, start-up schema reconciliation."""

from stackyard.db.engine import Database
from stackyard.db.models import Base

__all__ = ["Base", "Database"]
