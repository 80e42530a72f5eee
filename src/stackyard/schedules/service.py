"""Backup schedules: kept in the database, fired on their timetables, with a history.

Firing is a claim in the database, not a lock in this process: a due schedule is taken
by one conditional UPDATE that moves `next_run_at` on and sets a lease (`lease_until`),
so of two services sharing one PostgreSQL database exactly one fires it, and a run whose
lease is held is never started again. The lease is renewed while the run goes on and
released at its end; a service that dies mid-run lets it expire. A time missed while
the service was down runs once at start-up when it is at most the grace period old
(`STACKYARD_SCHEDULE_GRACE_MINUTES`), and is recorded as missed otherwise; a run that
outlasts its next time does not overlap it: the next time is computed from its end.

A run backs up each of its stacks in turn (as the stack's runs: followed like a deploy),
pushes the archive to the destination when there is one, then applies retention per
stack, per host and per place: the host's archives folder, and the destination. The
host is this one, or the schedule's agent (`schedules/hosts.py`): the steps are the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from stackyard.backups.capture import Selection
from stackyard.backups.names import host_label, parse_archive_name
from stackyard.db.engine import Database
from stackyard.db.models import Agent as AgentRow
from stackyard.db.models import Schedule as Row
from stackyard.db.models import ScheduleRun as RunRow
from stackyard.db.types import utcnow
from stackyard.errors import Conflict, Invalid, NotFound, StackyardError
from stackyard.schedules.hosts import BackupHost, LocalHost
from stackyard.schedules.model import ScheduleRunView, ScheduleSpec, ScheduleView
from stackyard.schedules.retention import to_prune
from stackyard.schedules.timetable import next_run

if TYPE_CHECKING:
    from stackyard.backups.service import BackupService
    from stackyard.destinations.service import Destinations
    from stackyard.destinations.transfers import Transfers

log = logging.getLogger(__name__)

LEASE = timedelta(minutes=2)
RENEW_EVERY = 30.0
#: The longest the loop sleeps: another service may have changed the schedules.
MAX_SLEEP = 30.0
HISTORY = 200


class Schedules:
    def __init__(
        self,
        db: Database,
        backups: BackupService,
        destinations: Destinations,
        transfers: Transfers,
        grace: timedelta,
        agent_host: Callable[[int], Awaitable[BackupHost]] | None = None,
    ) -> None:
        self.db = db
        self.backups = backups
        self.destinations = destinations
        self.transfers = transfers
        self.grace = grace
        self.local = LocalHost(backups, transfers)
        self.agent_host = agent_host
        self._wake = asyncio.Event()
        self._running: dict[int, asyncio.Task[list[ScheduleRunView]]] = {}

    # -- records ------------------------------------------------------------------------
    def _row(self, session: Session, schedule_id: int) -> Row:
        row = session.get(Row, schedule_id)
        if row is None:
            raise NotFound(f"No schedule {schedule_id}")
        return row

    def _view(self, row: Row) -> ScheduleView:
        now = utcnow()
        return ScheduleView(
            id=row.id,
            name=row.name,
            stacks=json.loads(row.stacks) if row.stacks else None,
            cron=row.cron,
            timezone=row.timezone or "UTC",
            destination_id=row.destination_id,
            capture=Selection.model_validate_json(row.capture or "{}"),
            keep_last=row.retention,
            keep_daily=row.keep_daily,
            keep_weekly=row.keep_weekly,
            keep_monthly=row.keep_monthly,
            enabled=row.enabled,
            agent_id=row.agent_id,
            next_run_at=row.next_run_at,
            last_run_at=row.last_run_at,
            last_status=row.last_status,
            running=row.lease_until is not None and row.lease_until > now,
        )

    def _fill(self, row: Row, spec: ScheduleSpec) -> None:
        if spec.destination_id is not None:
            self.destinations.get(spec.destination_id)  # NotFound
        if spec.agent_id is not None:
            with self.db.session() as session:
                if session.get(AgentRow, spec.agent_id) is None:
                    raise NotFound(f"No agent {spec.agent_id}")
        if "agent_id" in spec.model_fields_set or row.id is None:
            row.agent_id = spec.agent_id  # a body that leaves it out keeps the schedule's host
        row.name = spec.name.strip()
        row.stacks = json.dumps(spec.stacks) if spec.stacks is not None else None
        row.stack_id = "*" if spec.stacks is None else spec.stacks[0]
        row.cron, row.timezone = spec.cron, spec.timezone
        row.destination_id = spec.destination_id
        row.capture = spec.capture.model_dump_json()
        row.retention = spec.keep_last
        row.keep_daily, row.keep_weekly = spec.keep_daily, spec.keep_weekly
        row.keep_monthly = spec.keep_monthly
        row.enabled = spec.enabled
        row.next_run_at = next_run(spec.cron, spec.timezone, utcnow()) if spec.enabled else None

    def all(self) -> list[ScheduleView]:
        with self.db.session() as session:
            query = select(Row).order_by(Row.name, Row.id)
            return [self._view(r) for r in session.scalars(query)]

    def get(self, schedule_id: int) -> ScheduleView:
        with self.db.session() as session:
            return self._view(self._row(session, schedule_id))

    def create(self, spec: ScheduleSpec) -> ScheduleView:
        row = Row()
        self._fill(row, spec)
        with self.db.session() as session:
            session.add(row)
            session.flush()
            view = self._view(row)
        self._wake.set()
        return view

    def update(self, schedule_id: int, spec: ScheduleSpec) -> ScheduleView:
        with self.db.session() as session:
            row = self._row(session, schedule_id)
            self._fill(row, spec)
            view = self._view(row)
        self._wake.set()
        return view

    def delete(self, schedule_id: int) -> str:
        with self.db.session() as session:
            row = self._row(session, schedule_id)
            session.delete(row)
            name = row.name
        self._wake.set()
        return name

    def history(self, schedule_id: int, limit: int = 50) -> list[ScheduleRunView]:
        with self.db.session() as session:
            self._row(session, schedule_id)
            query = (
                select(RunRow)
                .where(RunRow.schedule_id == schedule_id)
                .order_by(RunRow.started_at.desc(), RunRow.id.desc())
                .limit(limit)
            )
            return [_run_view(r) for r in session.scalars(query)]

    # -- firing -------------------------------------------------------------------------
    async def serve(self) -> None:
        """Fire due schedules until cancelled."""
        while True:
            self._wake.clear()  # before looking: a change made meanwhile wakes the next wait
            try:
                wait = await self.fire_due()
            except Exception:  # the database away for a moment: try again
                log.exception("Checking the schedules failed")
                wait = MAX_SLEEP
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    async def fire_due(self) -> float:
        """Claim and start every due schedule; seconds until the next one is due."""
        now = utcnow()
        with self.db.session() as session:
            due = session.execute(
                select(Row.id, Row.next_run_at).where(
                    Row.enabled.is_(True),
                    Row.next_run_at.is_not(None),
                    Row.next_run_at <= now,
                    or_(Row.lease_until.is_(None), Row.lease_until < now),
                )
            ).all()
        for schedule_id, due_at in due:
            if due_at is not None and self._claim(schedule_id, due_at, now):
                missed = now - due_at > self.grace
                self._running[schedule_id] = asyncio.create_task(
                    self.fire(schedule_id, due_at, missed)
                )
        with self.db.session() as session:
            soonest = session.scalar(
                select(Row.next_run_at)
                .where(Row.enabled.is_(True), Row.next_run_at.is_not(None))
                .order_by(Row.next_run_at)
                .limit(1)
            )
        if soonest is None:
            return MAX_SLEEP
        return min(MAX_SLEEP, max(0.2, (soonest - utcnow()).total_seconds()))

    def _claim(self, schedule_id: int, due_at: datetime, now: datetime) -> bool:
        """Take the run due at `due_at`: true for exactly one claimant."""
        with self.db.session() as session:
            row = session.get(Row, schedule_id)
            if row is None:
                return False
            following = next_run(row.cron, row.timezone or "UTC", now)
            taken = session.execute(
                update(Row)
                .where(
                    Row.id == schedule_id,
                    Row.next_run_at == due_at,
                    or_(Row.lease_until.is_(None), Row.lease_until < now),
                )
                .values(next_run_at=following, lease_until=now + LEASE)
                .execution_options(synchronize_session=False)
            )
            return bool(getattr(taken, "rowcount", 0) == 1)

    def claim_now(self, schedule_id: int) -> datetime:
        """Take the schedule for a run now, out of its timetable (Conflict while it runs)."""
        now = utcnow()
        with self.db.session() as session:
            row = self._row(session, schedule_id)
            taken = session.execute(
                update(Row)
                .where(Row.id == schedule_id, or_(Row.lease_until.is_(None), Row.lease_until < now))
                .values(lease_until=now + LEASE)
                .execution_options(synchronize_session=False)
            )
            if getattr(taken, "rowcount", 0) != 1:
                raise Conflict(f"Schedule {row.name!r} is running")
        return now

    def run_now(self, schedule_id: int) -> None:
        """Start the schedule now (its runs show in its history)."""
        now = self.claim_now(schedule_id)
        self._running[schedule_id] = asyncio.create_task(self.fire(schedule_id, now, False))

    async def fire(self, schedule_id: int, due_at: datetime, missed: bool) -> list[ScheduleRunView]:
        """Run a claimed schedule to its end, then release it; what it recorded."""
        renew = asyncio.create_task(self._renew(schedule_id))
        status = "failed"
        recorded: list[int] = []
        try:
            view = self.get(schedule_id)
            if missed:
                error = _missed(due_at, self.grace)
                recorded.append(self._record(schedule_id, "*", due_at, "missed", error=error))
                status = "missed"
            else:
                host = await self._host(view)
                stacks = view.stacks if view.stacks is not None else await host.stacks()
                recorded = [await self._one(view, host, stack) for stack in stacks]
                outcomes = {r.outcome for r in self._runs_of(recorded)}
                status = "succeeded" if outcomes <= {"succeeded"} else "failed"
        except Exception:
            log.exception("Schedule %s failed", schedule_id)
        finally:
            renew.cancel()
            self._release(schedule_id, status)
            self._running.pop(schedule_id, None)
            self._wake.set()
        return self._runs_of(recorded)

    def _runs_of(self, ids: list[int]) -> list[ScheduleRunView]:
        with self.db.session() as session:
            rows = [session.get(RunRow, run_id) for run_id in ids]
            return [_run_view(r) for r in rows if r is not None]

    async def _renew(self, schedule_id: int) -> None:
        while True:
            await asyncio.sleep(RENEW_EVERY)
            with self.db.session() as session:
                session.execute(
                    update(Row).where(Row.id == schedule_id).values(lease_until=utcnow() + LEASE)
                )

    def _release(self, schedule_id: int, status: str) -> None:
        now = utcnow()
        with self.db.session() as session:
            row = session.get(Row, schedule_id)
            if row is None:
                return
            row.lease_until = None
            row.last_run_at, row.last_status = now, status
            if row.enabled and row.next_run_at is not None and row.next_run_at <= now:
                # The run outlasted its next time: the next one is the next after its end.
                row.next_run_at = next_run(row.cron, row.timezone or "UTC", now)

    async def _host(self, view: ScheduleView) -> BackupHost:
        if view.agent_id is None:
            return self.local
        if self.agent_host is None:
            raise Invalid("This service does not reach agents")
        return await self.agent_host(view.agent_id)

    async def _one(self, view: ScheduleView, host: BackupHost, stack: str) -> int:
        """Back up one stack of the schedule, push, prune; the id of its history entry."""
        started = utcnow()
        record = self._record(view.id, stack, started, "running")
        archive: str | None = None
        try:
            archive = await host.back_up(stack, view.capture)
            if view.destination_id is not None:
                await host.push(archive, view.destination_id)
            pruned = await self._prune(view, host, stack, archive)
            size = (await host.archives()).get(archive)
        except StackyardError as exc:
            self._update(record, "failed", archive, error=exc.detail)
            return record
        self._update(record, "succeeded", archive, size=size, pruned=pruned)
        return record

    async def _prune(self, view: ScheduleView, host: BackupHost, stack: str, made: str) -> int:
        """Retention for the stack on the host that made `made` (its name says which),
        in the host's archives and at the destination."""
        parsed = parse_archive_name(made)
        label = (
            parsed.host
            if parsed
            else host_label(await asyncio.to_thread(self.backups.host.host_name))
        )
        rule = view.retention
        local = to_prune(list(await host.archives()), stack, label, rule)
        for name in local:
            await host.delete(name)
        remote: list[str] = []
        if view.destination_id is not None:
            destination = await asyncio.to_thread(self.destinations.open, view.destination_id)
            names = [a.name for a in await destination.archives()]
            remote = to_prune(names, stack, label, rule)
            for name in remote:
                await destination.delete(name)
        return len(local) + len(remote)

    # -- history ------------------------------------------------------------------------
    def _record(
        self,
        schedule_id: int,
        stack: str,
        started: datetime,
        outcome: str,
        error: str | None = None,
    ) -> int:
        with self.db.session() as session:
            row = RunRow(
                schedule_id=schedule_id,
                stack_id=stack,
                started_at=started,
                outcome=outcome,
                error=error,
                finished_at=None if outcome == "running" else utcnow(),
            )
            session.add(row)
            session.flush()
            self._trim(session, schedule_id)
            return row.id

    def _update(
        self,
        run_id: int,
        outcome: str,
        archive: str | None,
        size: int | None = None,
        pruned: int = 0,
        error: str | None = None,
    ) -> None:
        with self.db.session() as session:
            row = session.get(RunRow, run_id)
            if row is not None:
                row.outcome, row.archive, row.size, row.pruned, row.error = (
                    outcome,
                    archive,
                    size,
                    pruned,
                    error,
                )
                row.finished_at = utcnow()

    @staticmethod
    def _trim(session: Session, schedule_id: int) -> None:
        """Keep the newest HISTORY runs of a schedule."""
        old = session.scalars(
            select(RunRow.id)
            .where(RunRow.schedule_id == schedule_id)
            .order_by(RunRow.started_at.desc(), RunRow.id.desc())
            .offset(HISTORY)
        ).all()
        for run_id in old:
            stale = session.get(RunRow, run_id)
            if stale is not None:
                session.delete(stale)

    async def aclose(self) -> None:
        for task in list(self._running.values()):
            task.cancel()
        for task in list(self._running.values()):
            with contextlib.suppress(BaseException):
                await task


def _missed(due_at: datetime, grace: timedelta) -> str:
    return (
        f"The run due at {due_at:%Y-%m-%d %H:%M} UTC was missed (the service was not running) "
        f"and is more than {int(grace.total_seconds() // 60)} minutes late"
    )


def _run_view(row: RunRow) -> ScheduleRunView:
    return ScheduleRunView(
        id=row.id,
        schedule_id=row.schedule_id,
        stack_id=row.stack_id,
        started_at=row.started_at,
        finished_at=row.finished_at,
        outcome=row.outcome,
        archive=row.archive,
        size=row.size,
        pruned=row.pruned,
        error=row.error,
    )
