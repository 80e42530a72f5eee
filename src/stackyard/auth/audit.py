"""Audit log of admin-only actions: who, what, when, outcome.

Recorded where the actor is known, by the entry points (the API's routers, the CLI),
always through `audited_by`; capability code never audits. An agent has no database:
it relays what it would record to its central, which records it (`relay`)."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import func, select
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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
    #: What the block did when it ended without an error: "failure" for work that
    #: answers how it went (a test that did not reach its peer), not with an error.
    outcome: Literal["success", "failure"] = "success"

    def failed_unless(self, ok: bool, detail: str) -> None:
        """For work that answers how it went rather than raising (a test): recorded as a
        failure, with why, when it did not go well."""
        if not ok:
            self.outcome, self.detail = "failure", detail

    #: For work that goes on after the request (a run): called with the function that
    #: records the work's outcome and detail, it calls that when the work ends. The
    #: request itself is then recorded as "started".
    ends: Callable[[Callable[[str, str | None], None]], None] | None = None


#: Every action the audit log records (an agent's relayed entry of another is dropped).
AuditAction = Literal[
    "agent.create", "agent.delete", "agent.enrol", "agent.test", "agent.update",
    "auth.sign_in", "auth.sign_out", "auth.role_change", "auth.provider",
    "auth.two_factor.enrol", "auth.two_factor.off", "auth.two_factor.reset",
    "backup.create", "backup.delete", "backup.download", "backup.drill", "backup.pull",
    "backup.push", "backup.restore", "backup.upload",
    "container.restart", "container.start", "container.stop",
    "destination.archive.delete",
    "disk.image.pull", "disk.image.remove", "disk.network.remove", "disk.prune",
    "disk.volume.remove", "destination.create", "destination.delete",
    "destination.test", "destination.update",
    "file.delete", "file.mkdir", "file.move", "file.save", "file.upload",
    "git.repository.create", "git.repository.delete", "git.repository.update",
    "git.repository.key", "git.repository.webhook", "git.sync", "git.apply",
    "git.stack.create", "git.stack.adopt", "git.stack.update", "git.stack.detach",
    "notification.channel.create", "notification.channel.delete",
    "notification.channel.test", "notification.channel.update",
    "notification.rule.create", "notification.rule.delete", "notification.rule.update",
    "registry.delete", "registry.set",
    "schedule.create", "schedule.delete", "schedule.run", "schedule.update",
    "stack.compose", "stack.create", "stack.delete", "stack.env", "stack.secrets",
    "stack.update", "stack.update_policy",
    "system.update",
    "token.revoke",
    "user.create", "user.delete", "user.set_password", "user.update",
]  # fmt: skip
ACTIONS: frozenset[str] = frozenset(get_args(AuditAction))
#: What a host's routes (and so an agent's) audit: an agent's relayed entry of another
#: action (a user's, an agent's, a destination's) is dropped.
HOST_ACTIONS = frozenset(
    a
    for a in ACTIONS
    if a.startswith(("stack.", "container.", "file.", "backup.", "system.", "git."))
)
#: The outcomes an entry records.
OUTCOMES = frozenset({"success", "failure", "started"})

#: The lengths of the audit log's actor and target columns.
ACTOR_LENGTH = 64
TARGET_LENGTH = 255


def _column_safe(text: str, length: int) -> str:
    """A value as a column of the audit log can keep it: no NUL, at most `length`
    characters (an actor can be a name an identity provider sent)."""
    text = text.replace("\x00", "\\0")
    return text if len(text) <= length else f"{text[: length - 1]}…"


def record(
    db: Database, actor: str, action: str, target: str | None, outcome: str, detail: str | None
) -> None:
    actor = _column_safe(actor, ACTOR_LENGTH)
    target = None if target is None else _column_safe(target, TARGET_LENGTH)
    with db.session() as session:
        session.add(
            AuditEntry(actor=actor, action=action, target=target, outcome=outcome, detail=detail)
        )


#: Writes one entry: (actor, action, target, outcome, detail).
Recorder = Callable[[str, str, str | None, str, str | None], None]


@contextmanager
def audited_by(
    recorder: Recorder, actor: str, action: AuditAction, target: str | None = None
) -> Iterator[AuditNote]:
    """Record the block's outcome (by `recorder`, in a transaction of its own for the
    database, so a failure is kept too); for work that goes on (`AuditNote.ends`), that
    it started, and its outcome when it ends."""
    note = AuditNote()
    try:
        yield note
    except StackyardError as exc:
        recorder(actor, action, note.target or target, "failure", exc.detail)
        raise
    except Exception as exc:
        detail = f"internal error ({type(exc).__name__})"
        recorder(actor, action, note.target or target, "failure", detail)
        raise
    target = note.target or target
    if note.ends is None:
        recorder(actor, action, target, note.outcome, note.detail)
        return
    recorder(actor, action, target, "started", note.detail)

    def ended(outcome: str, detail: str | None) -> None:
        said = "; ".join(part for part in (note.detail, detail) if part) or None
        recorder(actor, action, target, outcome, said)

    note.ends(ended)


def audited(
    db: Database, actor: str, action: AuditAction, target: str | None = None
) -> AbstractContextManager[AuditNote]:
    """The block's outcome in the database's audit log."""
    return audited_by(functools.partial(record, db), actor, action, target)


# -- on an agent ----------------------------------------------------------------------------
#: The response header in which an agent hands what it would audit to its central.
RELAY_HEADER = "x-stackyard-audit"
_RELAY_KEY = "audit_relay"


@dataclass(frozen=True)
class Relayed:
    actor: str
    action: str
    target: str | None
    outcome: str
    detail: str | None


def relay(
    scope: MutableMapping[str, Any],
    actor: str,
    action: str,
    target: str | None,
    outcome: str,
    detail: str | None,
) -> None:
    """An agent keeps no audit log: it logs the entry and hands it to the caller (the
    central, which records it with its user and the agent's name) with the response."""
    log.info(
        "audit: %s %s %s %s%s", actor, action, target, outcome, f" ({detail})" if detail else ""
    )
    entries = scope.get("state", {}).get(_RELAY_KEY)
    if entries is not None:
        target = None if target is None else _column_safe(target, TARGET_LENGTH)
        entries.append(Relayed(actor, action, target, outcome, detail))


class AuditRelay:
    """ASGI middleware of an agent: entries audited while a request ran go back in its
    response's `x-stackyard-audit` header (JSON, ASCII)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        entries: list[Relayed] = []
        scope.setdefault("state", {})[_RELAY_KEY] = entries

        async def relaying(message: Message) -> None:
            if message["type"] == "http.response.start" and entries:
                text = json.dumps([asdict(entry) for entry in entries])
                message = {
                    **message,
                    "headers": [
                        *message.get("headers", []),
                        (RELAY_HEADER.encode(), text.encode()),
                    ],
                }
            await send(message)

        await self.app(scope, receive, relaying)


_RELAYED = TypeAdapter(list[Relayed])


def relayed_entries(header: str | None) -> list[Relayed]:
    """The entries an agent's response carried (none when the header is absent or bad)."""
    if not header:
        return []
    try:
        return _RELAYED.validate_json(header, strict=True)
    except ValidationError:
        log.warning("An agent's audit header could not be read; ignored")
        return []


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
