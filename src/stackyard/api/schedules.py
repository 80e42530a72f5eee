"""Backup schedules of this host: which stacks, when, where, what to keep. Admin only
(a schedule makes and deletes archives); every change and "run now" is audited."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, status
from pydantic import BaseModel

from stackyard.api.deps import (
    AdminDep,
    AuditDep,
    central_services,
    current_principal,
    require_admin,
)
from stackyard.api.models import DbId
from stackyard.clock import utcnow
from stackyard.schedules.model import ScheduleRunView, ScheduleSpec, ScheduleView
from stackyard.schedules.scheduler import Scheduler
from stackyard.schedules.store import ScheduleStore
from stackyard.timetable import check_fires, next_runs

router = APIRouter(tags=["schedules"], dependencies=[Depends(require_admin)])
#: What a timetable means is no secret: whoever edits one (an operator, an update policy's
#: maintenance window) sees its next times.
timetable = APIRouter(tags=["schedules"], dependencies=[Depends(current_principal)])


def get_schedules(request: Request) -> ScheduleStore:
    return central_services(request).schedules


def get_scheduler(request: Request) -> Scheduler:
    return central_services(request).scheduler


SchedulesDep = Annotated[ScheduleStore, Depends(get_schedules)]
SchedulerDep = Annotated[Scheduler, Depends(get_scheduler)]


class TimetableOut(BaseModel):
    cron: str
    next: list[datetime]


@router.get("/schedules", operation_id="listSchedules")
def list_schedules(schedules: SchedulesDep) -> list[ScheduleView]:
    return schedules.all()


@timetable.get("/timetable", operation_id="previewTimetable")
def preview_timetable(
    cron: Annotated[str, Query(max_length=100)],
    timezone: Annotated[str, Query(max_length=64)] = "UTC",
) -> TimetableOut:
    """What a timetable means: the expression (presets resolved) and its next five times;
    400 when it is no cron expression or names no time (`0 0 31 2 *`)."""
    spec = ScheduleSpec(name="preview", cron=cron, timezone=timezone)
    check_fires(spec.cron, spec.timezone)
    return TimetableOut(cron=spec.cron, next=next_runs(spec.cron, spec.timezone, utcnow(), 5))


@router.post("/schedules", operation_id="createSchedule", status_code=status.HTTP_201_CREATED)
def create_schedule(
    body: ScheduleSpec, admin: AdminDep, audit: AuditDep, schedules: SchedulesDep
) -> ScheduleView:
    with audit(admin, "schedule.create", body.name):
        return schedules.create(body)


@router.get("/schedules/{schedule_id}", operation_id="getSchedule")
def get_schedule(schedule_id: DbId, schedules: SchedulesDep) -> ScheduleView:
    return schedules.get(schedule_id)


@router.put("/schedules/{schedule_id}", operation_id="updateSchedule")
def update_schedule(
    schedule_id: DbId, body: ScheduleSpec, admin: AdminDep, audit: AuditDep, schedules: SchedulesDep
) -> ScheduleView:
    with audit(admin, "schedule.update", body.name):
        return schedules.update(schedule_id, body)


@router.delete("/schedules/{schedule_id}", operation_id="deleteSchedule", status_code=204)
def delete_schedule(
    schedule_id: DbId, admin: AdminDep, audit: AuditDep, schedules: SchedulesDep
) -> None:
    """Forget the schedule and its history; the archives it made stay."""
    with audit(admin, "schedule.delete", str(schedule_id)) as note:
        note.target = schedules.delete(schedule_id)


@router.post(
    "/schedules/{schedule_id}/run", operation_id="runSchedule", status_code=status.HTTP_202_ACCEPTED
)
async def run_schedule(
    schedule_id: DbId,
    admin: AdminDep,
    audit: AuditDep,
    schedules: SchedulesDep,
    scheduler: SchedulerDep,
) -> ScheduleView:
    """Run it now, out of its timetable; 409 while it runs."""
    with audit(admin, "schedule.run", str(schedule_id)):
        scheduler.run_now(schedule_id)
    return schedules.get(schedule_id)


@router.get("/schedules/{schedule_id}/runs", operation_id="listScheduleRuns")
def list_schedule_runs(
    schedule_id: DbId,
    schedules: SchedulesDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> list[ScheduleRunView]:
    """The schedule's runs, newest first: one entry per stack and run."""
    return schedules.history(schedule_id, limit)
