"""What a schedule is (typed once: the API's bodies and answers are these)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator

from stackyard.backups.capture import Selection
from stackyard.disk.model import PruneOptions
from stackyard.jsonmodel import JsonInt, StrictModel
from stackyard.schedules.retention import MAX_KEEP, Retention
from stackyard.slugs import check_slug
from stackyard.timetable import cron_of, zone_of

#: backup: back up each stack (push, prune); drill: a restore drill of each stack's latest
#: backup (at the destination when there is one, else on the host); prune: the host's
#: disk (its stacks and destination do not apply).
ScheduleKind = Literal["backup", "drill", "prune"]
#: "interrupted": the service stopped (killed, restarted) while the run went on.
RunOutcome = Literal["running", "succeeded", "failed", "missed", "interrupted"]


class ScheduleSpec(StrictModel):
    name: Annotated[str, Field(min_length=1, max_length=100)]
    kind: ScheduleKind = Field(
        "backup",
        description="backup: back up the stacks; drill: a restore drill of each stack's "
        "latest backup (taken from the destination when there is one, else from the host); "
        "prune: the host's disk, as `prune` says (a preview, then exactly what it listed)",
    )
    stacks: list[str] | None = Field(
        None, max_length=1000, description="The stacks to back up; null: every stack"
    )
    cron: str = Field(
        max_length=100,
        description="Five-field cron expression (minute hour day month weekday), or one of "
        "hourly, daily, weekly, monthly",
    )
    timezone: str = Field("UTC", max_length=64, description="The zone the timetable is in")
    destination_id: JsonInt | None = Field(
        None,
        ge=1,
        description="Push each archive there; null: keep archives on this host only (a drill: "
        "take the latest backup from there; null: from the host's archives)",
    )
    capture: Selection = Field(default_factory=Selection)
    keep_last: JsonInt = Field(7, ge=1, le=MAX_KEEP, description="Keep the newest N archives")
    keep_daily: JsonInt = Field(0, ge=0, le=MAX_KEEP, description="And the newest of D days")
    keep_weekly: JsonInt = Field(0, ge=0, le=MAX_KEEP, description="And the newest of W weeks")
    keep_monthly: JsonInt = Field(0, ge=0, le=MAX_KEEP, description="And the newest of M months")
    settle_seconds: JsonInt = Field(
        30,
        ge=0,
        le=3600,
        description="A drill: how long the clone's services without a health check must run",
    )
    prune: PruneOptions = Field(default_factory=PruneOptions, description="A prune: what it takes")
    enabled: bool = True
    agent_id: JsonInt | None = Field(
        None, ge=1, description="The agent whose stacks it backs up; null: this host"
    )

    @field_validator("stacks")
    @classmethod
    def _stacks(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("name at least one stack, or null for every stack")
        return sorted({check_slug(v) for v in value})

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        return cron_of(value)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        zone_of(value)
        return value

    @property
    def retention(self) -> Retention:
        return Retention(self.keep_last, self.keep_daily, self.keep_weekly, self.keep_monthly)


class ScheduleView(ScheduleSpec):
    id: int
    next_run_at: datetime | None
    last_run_at: datetime | None
    last_status: str | None
    running: bool


class ScheduleRunView(BaseModel):
    id: int
    schedule_id: int
    stack_id: str
    started_at: datetime
    finished_at: datetime | None
    outcome: RunOutcome
    archive: str | None
    size: int | None
    pruned: int
    error: str | None
