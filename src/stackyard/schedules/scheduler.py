"""The scheduler: fires backup and drill schedules on their timetables (`schedules/store.py` keeps
them and their history).

Firing is a claim in the database, not a lock in this process: a due schedule is taken
by one conditional UPDATE that moves `next_run_at` on and sets a lease (`lease_until`),
so of two services sharing one PostgreSQL database exactly one fires it, and a run whose
lease is held is never started again. The lease is renewed while the run goes on and
released at its end; a service that dies mid-run lets it expire, and the runs it left
"running" are recorded as interrupted: by itself when it starts again (the lease names
its holder), or by whoever claims the schedule next. A time missed while
the service was down runs once at start-up when it is at most the grace period old
(`STACKYARD_SCHEDULE_GRACE_MINUTES`), and is recorded as missed otherwise; a run that
outlasts its next time does not overlap it: the next time is computed from its end.

A run backs up each of its stacks in turn (as the stack's runs: followed like a deploy),
pushes the archive to the destination when there is one, then applies retention per
stack, per host and per place: the host's archives folder, and the destination. A
schedule of drills runs a restore drill of each stack's latest backup instead
(`stackyard.backups.drill`; from the destination when there is one, fetched for the
drill and removed after it). The host is this one, or the schedule's agent
(`schedules/hosts.py`): the steps are the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import or_, select, update

from stackyard.backups.names import host_label, parse_archive_name
from stackyard.clock import utcnow
from stackyard.db.models import Schedule as Row
from stackyard.errors import Conflict, Invalid, StackyardError
from stackyard.events import Event, EventName, Sink
from stackyard.schedules.hosts import BackupHost, LocalHost
from stackyard.schedules.model import RunOutcome, ScheduleRunView, ScheduleView
from stackyard.schedules.retention import to_prune
from stackyard.schedules.store import ScheduleStore, schedule_row
from stackyard.stacks.runs import RUN_ORIGIN
from stackyard.timetable import next_run

if TYPE_CHECKING:
    from stackyard.backups.service import BackupService
    from stackyard.destinations.service import Destinations
    from stackyard.destinations.transfers import Transfers
    from stackyard.disk.service import DiskService

log = logging.getLogger(__name__)

LEASE = timedelta(minutes=2)
RENEW_EVERY = 30.0
#: The longest the loop sleeps: another service may have changed the schedules.
MAX_SLEEP = 30.0


class Scheduler:
    def __init__(
        self,
        store: ScheduleStore,
        backups: BackupService,
        destinations: Destinations,
        transfers: Transfers,
        disk: DiskService,
        grace: timedelta,
        agent_host: Callable[[int], Awaitable[BackupHost]] | None = None,
        holder: str = "",
        events: Sink | None = None,
    ) -> None:
        """`holder`: this service's name in the leases (`Settings.instance_id`);
        `events`: where a missed run and a retention that failed are said."""
        self.store = store
        self.events = events
        self.holder = holder
        self._started = utcnow()
        self.db = store.db
        self.backups = backups
        self.destinations = destinations
        self.grace = grace
        self.local = LocalHost(backups, transfers, disk)
        self.agent_host = agent_host
        self._running: dict[int, asyncio.Task[list[ScheduleRunView]]] = {}

    # -- when ---------------------------------------------------------------------------
    async def serve(self) -> None:
        """Fire due schedules until cancelled."""
        changed = self.store.changed
        try:
            await asyncio.to_thread(self.recover)
        except Exception:  # the database away for a moment: the next claims recover it
            log.exception("Recovering the schedules of a previous start failed")
        while True:
            changed.clear()  # before looking: a change made meanwhile wakes the next wait
            try:
                wait = await self.fire_due()
            except Exception:  # the database away for a moment: try again
                log.exception("Checking the schedules failed")
                wait = MAX_SLEEP
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), wait)

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

    def recover(self) -> None:
        """What this service held when it last stopped (killed in a run): the runs it
        left "running" recorded as interrupted, and its leases released at once rather
        than when they expire."""
        if not self.holder:
            return
        with self.db.session() as session:
            held = session.scalars(
                select(Row).where(
                    Row.lease_holder == self.holder,
                    Row.lease_until.is_not(None),
                    Row.lease_until <= self._started + LEASE,  # not a claim of this start
                )
            ).all()
            for row in held:
                if self.store.interrupt(session, row.id):
                    row.last_run_at, row.last_status = utcnow(), "interrupted"
                row.lease_until = row.lease_holder = None

    # -- claims -------------------------------------------------------------------------
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
                .values(next_run_at=following, lease_until=now + LEASE, lease_holder=self.holder)
                .execution_options(synchronize_session=False)
            )
            return bool(getattr(taken, "rowcount", 0) == 1)

    def claim_now(self, schedule_id: int) -> datetime:
        """Take the schedule for a run now, out of its timetable (Conflict while it runs)."""
        now = utcnow()
        with self.db.session() as session:
            row = schedule_row(session, schedule_id)
            taken = session.execute(
                update(Row)
                .where(Row.id == schedule_id, or_(Row.lease_until.is_(None), Row.lease_until < now))
                .values(lease_until=now + LEASE, lease_holder=self.holder)
                .execution_options(synchronize_session=False)
            )
            if getattr(taken, "rowcount", 0) != 1:
                raise Conflict(f"Schedule {row.name!r} is running")
        return now

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
            row.lease_until = row.lease_holder = None
            row.last_run_at, row.last_status = now, status
            if row.enabled and row.next_run_at is not None and row.next_run_at <= now:
                # The run outlasted its next time: the next one is the next after its end.
                row.next_run_at = next_run(row.cron, row.timezone or "UTC", now)

    # -- runs ---------------------------------------------------------------------------
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
            with self.db.session() as session:  # runs of a holder whose lease expired
                self.store.interrupt(session, schedule_id)
            view = self.store.get(schedule_id)
            if missed:
                error = _missed(due_at, self.grace)
                recorded.append(
                    self.store.record_run(schedule_id, "*", due_at, "missed", error=error)
                )
                status = "missed"
                self._say(view, "schedule_missed", f"Schedule {view.name!r}: {error}", due_at)
            else:
                host = await self._host(view)
                if view.kind == "prune":
                    recorded = [await self._prune_disk(view, host)]
                else:
                    stacks = view.stacks if view.stacks is not None else await host.stacks()
                    recorded = [await self._one(view, host, stack) for stack in stacks]
                outcomes = {r.outcome for r in self.store.runs(recorded)}
                status = "succeeded" if outcomes <= {"succeeded"} else "failed"
        except Exception:
            log.exception("Schedule %s failed", schedule_id)
        finally:
            renew.cancel()
            self._release(schedule_id, status)
            self._running.pop(schedule_id, None)
            self.store.changed.set()  # released: its next time is to be looked at
        return self.store.runs(recorded)

    async def _host(self, view: ScheduleView) -> BackupHost:
        if view.agent_id is None:
            return self.local
        if self.agent_host is None:
            raise Invalid("This service does not reach agents")
        return await self.agent_host(view.agent_id)

    async def _one(self, view: ScheduleView, host: BackupHost, stack: str) -> int:
        """Back up one stack of the schedule, push, prune (or drill its latest backup);
        the id of its history entry."""
        started = utcnow()
        record = self.store.record_run(view.id, stack, started, "running")
        archive: str | None = None
        origin = RUN_ORIGIN.set(f"schedule {view.name!r}")
        try:
            if view.kind == "drill":
                archive, error = await self._drill(view, host, stack)
                outcome: RunOutcome = "failed" if error else "succeeded"
                self.store.finish_run(record, outcome, archive, error=error)
                return record
            direct = view.destination_id is not None and await host.writes_into(view.destination_id)
            archive = await host.back_up(
                stack, view.capture, view.destination_id if direct else None
            )
            if view.destination_id is not None and not direct:
                try:
                    await host.push(archive, view.destination_id)
                except StackyardError as exc:
                    if view.agent_id is not None:  # (a push on this host is a run: said)
                        text = f"Schedule {view.name!r}: the push of {archive} failed: {exc.detail}"
                        self._say(view, "backup_failed", text, utcnow(), stack)
                    raise
            pruned, sizes = await self._prune(view, host, stack, archive)
            size = sizes.get(archive)
        except StackyardError as exc:
            self.store.finish_run(record, "failed", archive, error=exc.detail)
            return record
        finally:
            RUN_ORIGIN.reset(origin)
        self.store.finish_run(record, "succeeded", archive, size=size, pruned=pruned)
        return record

    async def _prune_disk(self, view: ScheduleView, host: BackupHost) -> int:
        """The host's disk pruned (a preview, then what it listed); its history entry,
        the bytes freed as its size and the objects removed as its pruned count."""
        record = self.store.record_run(view.id, "*", utcnow(), "running")
        try:
            report = await host.prune(view.prune, f"schedule {view.name!r}")
        except StackyardError as exc:
            self.store.finish_run(record, "failed", None, error=exc.detail)
            return record
        left = f"{len(report.left)} left: {report.left[0].reason}" if report.left else None
        self.store.finish_run(
            record, "succeeded", None, size=report.total, pruned=len(report.removed), error=left
        )
        return record

    async def _drill(
        self, view: ScheduleView, host: BackupHost, stack: str
    ) -> tuple[str, str | None]:
        """A restore drill of the stack's latest backup (at the destination when the
        schedule has one, fetched to the host for the drill and removed after it, else in
        the host's archives): the archive, and why the drill failed (None: verified)."""
        kept = await host.archives()
        if view.destination_id is None:
            names = list(kept)
        else:
            destination = await asyncio.to_thread(self.destinations.open, view.destination_id)
            names = [a.name for a in await destination.archives()]
        archive = _latest(names, stack)
        if archive is None:
            where = "at the destination" if view.destination_id is not None else "on the host"
            raise Invalid(f"{stack} has no backup {where} to drill")
        fetched = archive not in kept
        if fetched and view.destination_id is not None:
            await host.fetch(archive, view.destination_id)
        try:
            drilled = await host.drill(archive, view.settle_seconds)
        finally:
            if fetched:
                with contextlib.suppress(StackyardError):
                    await host.delete(archive)
        return archive, drilled.error

    async def _prune(
        self, view: ScheduleView, host: BackupHost, stack: str, made: str
    ) -> tuple[int, dict[str, int]]:
        """Retention for the stack on the host that made `made` (its name says which),
        in the host's archives and at the destination: how many archives went, and the
        sizes of those found (the host's, else the destination's)."""
        parsed = parse_archive_name(made)
        label = (
            parsed.host
            if parsed
            else host_label(await asyncio.to_thread(self.backups.machine.host_name))
        )
        rule = view.retention
        sizes = await host.archives()
        local = to_prune(list(sizes), stack, label, rule)
        for name in local:
            await host.delete(name)
        remote: list[str] = []
        if view.destination_id is not None:
            try:
                destination = await asyncio.to_thread(self.destinations.open, view.destination_id)
                found = await destination.archives()
                sizes = {a.name: a.size for a in found} | sizes
                remote = to_prune([a.name for a in found], stack, label, rule)
                await destination.delete_many(remote)
            except StackyardError as exc:
                text = (
                    f"Schedule {view.name!r}: old archives of {stack} at the destination were "
                    f"not pruned: {exc.detail}"
                )
                self._say(view, "retention_skipped", text, utcnow(), stack)
                raise
        return len(local) + len(remote), sizes

    def _say(
        self,
        view: ScheduleView,
        name: EventName,
        text: str,
        at: datetime,
        stack: str | None = None,
    ) -> None:
        if self.events is not None:
            subject = f"schedule {view.id}"
            self.events(Event(name, subject, text, at.isoformat(), stack, host_id=view.agent_id))

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


def _latest(names: list[str], stack: str) -> str | None:
    """The newest archive of the stack among `names` (by the time its name says)."""
    found = [p for p in map(parse_archive_name, names) if p is not None and p.stack == stack]
    newest = max(found, key=lambda p: (p.at, p.seq), default=None)
    return newest.name if newest else None
