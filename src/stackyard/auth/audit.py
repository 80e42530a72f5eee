"""Audit log of admin-only actions: who, what, when, outcome.

Recorded where the actor is known, by the entry points (the API's routers, the CLI),
always through `audited`; capability code never audits."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import func, select

from stackyard.db import Database
from stackyard.db.models import AuditEntry
from stackyard.errors import StackyardError

log = logging.getLogger(__name__)


@dataclass
class AuditNote:
    """Lets the audited block add a detail to its entry (never a secret), or name its
    target once it is known (a created stack's id, say)."""

    detail: str | None = None
    target: str | None = None


#: The length of the audit log's target column.
TARGET_LENGTH = 255


def _column_safe(target: str | None) -> str | None:
    """A target as the audit log can keep it: no NUL, at most TARGET_LENGTH characters."""
    if target is None:
        return None
    text = target.replace("\x00", "\\0")
    return text if len(text) <= TARGET_LENGTH else f"{text[: TARGET_LENGTH - 1]}…"


def record(
    db: Database, actor: str, action: str, target: str | None, outcome: str, detail: str | None
) -> None:
    target = _column_safe(target)
    with db.session() as session:
        session.add(
            AuditEntry(actor=actor, action=action, target=target, outcome=outcome, detail=detail)
        )


@contextmanager
def audited(
    db: Database, actor: str, action: str, target: str | None = None
) -> Iterator[AuditNote]:
    """Record the block's outcome in its own transaction, so a failure is kept too."""
    note = AuditNote()
    try:
        yield note
    except StackyardError as exc:
        record(db, actor, action, note.target or target, "failure", exc.detail)
        raise
    except Exception as exc:
        detail = f"internal error ({type(exc).__name__})"
        record(db, actor, action, note.target or target, "failure", detail)
        raise
    record(db, actor, action, note.target or target, "success", note.detail)


def list_entries(db: Database, limit: int, offset: int) -> tuple[list[AuditEntry], int]:
    """Newest first."""
    with db.session() as session:
        total = session.scalar(select(func.count()).select_from(AuditEntry)) or 0
        query = (
            select(AuditEntry)
            .order_by(AuditEntry.at.desc(), AuditEntry.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return list(session.scalars(query)), total
