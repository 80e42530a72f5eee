"""How a stack is updated: whether updates are looked for, told or applied on their own;
what counts as one (a newer digest of the same tag, or a newer version tag within a
range); the health gate after an update; and when the auto-update may apply one (a
minimum age, a maintenance window)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field, field_validator, model_validator

from stackyard.errors import Invalid
from stackyard.jsonmodel import JsonInt, StrictModel
from stackyard.timetable import check_fires, cron_of, last_run, zone_of

#: off: not looked for; notify: shown and told; auto: also applied by the auto-update pass.
UpdateMode = Literal["off", "notify", "auto"]
#: digest: a newer image under the same tag; patch, minor, major: a newer version tag of
#: the same repository within that range (`1.4.2` -> `1.4.3`, `1.5.0`, `2.0.0`).
UpdateTrack = Literal["digest", "patch", "minor", "major"]


class UpdatePolicy(StrictModel):
    mode: UpdateMode = Field(
        "notify",
        description="off: updates are not looked for; notify: shown and told; auto: also "
        "applied by the auto-update pass",
    )
    track: UpdateTrack = Field(
        "digest",
        description="digest: a newer image under the same tag; patch, minor, major: a "
        "newer semantic-version tag within that range (the compose file is edited to it)",
    )
    prereleases: bool = Field(False, description="Version tags with a pre-release part count")
    health_timeout: JsonInt = Field(
        120,
        ge=5,
        le=3600,
        description="Seconds an updated service has to become healthy (or to settle) "
        "before the update is rolled back",
    )
    settle: JsonInt = Field(
        30,
        ge=0,
        le=600,
        description="Seconds a service without a healthcheck must run without a restart "
        "to count as up",
    )
    cooldown_hours: JsonInt = Field(
        0,
        ge=0,
        le=24 * 90,
        description="The auto-update applies a new image only once this host has known it "
        "this many hours (a defence against a bad or compromised release)",
    )
    window: str | None = Field(
        None,
        max_length=100,
        description="The auto-update applies updates only inside this window: a five-field "
        "cron expression (or hourly, daily, weekly, monthly) for its start; null: any time",
    )
    window_minutes: JsonInt = Field(120, ge=5, le=24 * 60, description="How long each window lasts")
    timezone: str = Field("UTC", max_length=64, description="The zone the window is in")

    @field_validator("window")
    @classmethod
    def _window(cls, value: str | None) -> str | None:
        return cron_of(value) if value else None

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        zone_of(value)
        return value

    @model_validator(mode="after")
    def _settles_in_time(self) -> UpdatePolicy:
        if self.settle >= self.health_timeout:  # (a rule across fields: no schema says it)
            raise Invalid(
                f"settle ({self.settle} s) must be shorter than health_timeout "
                f"({self.health_timeout} s)"
            )
        return self

    def checked(self) -> UpdatePolicy:
        """The policy, once its window is known to come (`timetable.check_fires`): what a
        policy must pass where it is accepted. (Not a validator: a policy stored before
        the check is still read, and the auto-update pass says of it that it never comes.)"""
        if self.window:
            check_fires(self.window, self.timezone)
        return self

    def in_window(self, now: datetime) -> bool:
        """Whether `now` is inside a maintenance window (always, with none set; Invalid
        when the window names no time)."""
        if not self.window:
            return True
        began = last_run(self.window, self.timezone, now)
        return now - began < timedelta(minutes=self.window_minutes)

    def old_enough(self, first_seen: datetime | None, now: datetime) -> bool:
        """Whether an image this host first saw at `first_seen` has cooled down."""
        if not self.cooldown_hours:
            return True
        return first_seen is not None and now - first_seen >= timedelta(hours=self.cooldown_hours)
