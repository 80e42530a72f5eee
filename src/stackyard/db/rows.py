"""Looking up one record by its id."""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy.orm import Session

from stackyard.db.models import Base
from stackyard.errors import NotFound

T = TypeVar("T", bound=Base)


def row_of(session: Session, model: type[T], key: int, what: str) -> T:
    """The record `key` of `model`; NotFound ("No <what> <key>") when there is none."""
    row = session.get(model, key)
    if row is None:
        raise NotFound(f"No {what} {key}")
    return row
