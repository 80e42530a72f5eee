"""Backup schedules and their runs, as the database keeps them: create, read, update and
delete a schedule, its history of runs (the newest HISTORY of each), and the views the API
serves. Every change sets `changed`, so that the scheduler (`schedules/scheduler.py`)
looks at the timetables again at once rather than at its next wake-up."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import TYPE_CHECKING, get_args

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackyard.backups.capture import Selection
from stackyard.clock import utcnow
from stackyard.db.engine import Database
from stackyard.db.models import Agent as AgentRow
from stackyard.db.models import Schedule as Row
from stackyard.db.models import ScheduleRun as RunRow
from stackyard.db.rows import row_of
from stackyard.disk.model import PruneOptions
from stackyard.errors import NotFound
from stackyard.schedules.model import ScheduleKind, ScheduleRunView, ScheduleSpec, ScheduleView
from stackyard.timetable import check_fires, next_run

if TYPE_CHECKING:
    from stackyard.destinations.service import Destinations

#: The runs kept of each schedule, newest first.
HISTORY = 200


def schedule_row(session: Session, schedule_id: int) -> Row:
    """The schedule's record; NotFound when there is none."""
    return row_of(session, Row, schedule_id, "schedule")


class ScheduleStore:
    def __init__(self, db: Database, destinations: Destinations) -> None:
        self.db = db
        self.destinations = destinations
        #: Set when a schedule changed: the scheduler looks at the timetables again.
        self.changed = asyncio.Event()

    # -- schedules ----------------------------------------------------------------------
    def all(self) -> list[ScheduleView]:
        with self.db.session() as session:
            query = select(Row).order_by(Row.name, Row.id)
            return [_view(r) for r in session.scalars(query)]

    def get(self, schedule_id: int) -> ScheduleView:
        with self.db.session() as session:
            return _view(schedule_row(session, schedule_id))

    def create(self, spec: ScheduleSpec) -> ScheduleView:
        row = Row()
        self._fill(row, spec)
        with self.db.session() as session:
            session.add(row)
            session.flush()
            view = _view(row)
        self.changed.set()
        return view

    def update(self, schedule_id: int, spec: ScheduleSpec) -> ScheduleView:
        with self.db.session() as session:
            row = schedule_row(session, schedule_id)
            self._fill(row, spec)
            view = _view(row)
        self.changed.set()
        return view

    def delete(self, schedule_id: int) -> str:
        with self.db.session() as session:
            row = schedule_row(session, schedule_id)
            session.delete(row)
            name = row.name
        self.changed.set()
        return name

    def _fill(self, row: Row, spec: ScheduleSpec) -> None:
        check_fires(spec.cron, spec.timezone)  # Invalid: a timetable that never comes
        if spec.destination_id is not None:
            self.destinations.get(spec.destination_id)  # NotFound
        if spec.agent_id is not None:
            with self.db.session() as session:
                if session.get(AgentRow, spec.agent_id) is None:
                    raise NotFound(f"No agent {spec.agent_id}")
        if "agent_id" in spec.model_fields_set or row.id is None:
            row.agent_id = spec.agent_id  # a body that leaves it out keeps the schedule's host
        row.name = spec.name.strip()
        row.kind, row.settle_seconds = spec.kind, spec.settle_seconds
        row.prune_options = spec.prune.model_dump_json()
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

    # -- runs ---------------------------------------------------------------------------
    def history(self, schedule_id: int, limit: int = 50) -> list[ScheduleRunView]:
        with self.db.session() as session:
            schedule_row(session, schedule_id)
            query = (
                select(RunRow)
                .where(RunRow.schedule_id == schedule_id)
                .order_by(RunRow.started_at.desc(), RunRow.id.desc())
                .limit(limit)
            )
            return [_run_view(r) for r in session.scalars(query)]

    def runs(self, ids: list[int]) -> list[ScheduleRunView]:
        """The runs of these ids that are still kept, in their order."""
        with self.db.session() as session:
            rows = [session.get(RunRow, run_id) for run_id in ids]
            return [_run_view(r) for r in rows if r is not None]

    def record_run(
        self,
        schedule_id: int,
        stack: str,
        started: datetime,
        outcome: str,
        error: str | None = None,
    ) -> int:
        """A new entry in the schedule's history (finished unless it is "running"); its id."""
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
            _trim(session, schedule_id)
            return row.id

    def finish_run(
        self,
        run_id: int,
        outcome: str,
        archive: str | None,
        size: int | None = None,
        pruned: int = 0,
        error: str | None = None,
    ) -> None:
        """The end of a run `record_run` began as "running"."""
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

    def interrupt(self, session: Session, schedule_id: int) -> int:
        """The schedule's runs still "running" when nobody holds it any more (the service
        that ran them stopped): recorded as interrupted. How many."""
        now = utcnow()
        runs = session.scalars(
            select(RunRow).where(RunRow.schedule_id == schedule_id, RunRow.outcome == "running")
        ).all()
        for run in runs:
            run.outcome, run.finished_at, run.error = "interrupted", now, INTERRUPTED
        return len(runs)


#: What an interrupted run's history says.
INTERRUPTED = (
    "The service stopped while this run went on (killed or restarted): the run did not "
    "finish, and kept no archive"
)


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


def _view(row: Row) -> ScheduleView:
    now = utcnow()
    return ScheduleView(
        id=row.id,
        name=row.name,
        kind=next((k for k in get_args(ScheduleKind) if k == row.kind), "backup"),
        prune=PruneOptions.model_validate_json(row.prune_options or "{}"),
        settle_seconds=row.settle_seconds,
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
