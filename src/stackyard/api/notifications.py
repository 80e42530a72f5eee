"""Notification channels and rules (admin only; every change and test audited), what
can be sent and how each kind of channel is filled in, and each channel's history.
Secrets are write-only: an answer says which are set, never what they are."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, status
from pydantic import BaseModel, BeforeValidator, Field

from stackyard.api.deps import AdminDep, AuditDep, central_services, require_admin
from stackyard.api.models import MAX_ID, Body, DbId
from stackyard.events import KINDS, EventName, Severity
from stackyard.jsonmodel import JsonId, JsonInt, integral
from stackyard.notifications import trials
from stackyard.notifications.channel_store import ChannelView
from stackyard.notifications.channels import FORMS, ChannelKind, FieldSpec
from stackyard.notifications.history import DeliveryView, deliveries
from stackyard.notifications.rules import RuleSpec, RuleView
from stackyard.notifications.service import Notifications
from stackyard.notifications.trials import TestResult

router = APIRouter(tags=["notifications"], dependencies=[Depends(require_admin)])


def get_notifications(request: Request) -> Notifications:
    return central_services(request).notifications


NotificationsDep = Annotated[Notifications, Depends(get_notifications)]
Values = Annotated[
    dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=2000)]],
    Field(max_length=16),
]


class EventKindOut(BaseModel):
    name: EventName
    severity: Severity
    title: str
    condition: bool = Field(description="It holds for a while (its end is known)")
    announces_end: bool = Field(description="Its end is a message too")


class ChannelKindOut(BaseModel):
    kind: ChannelKind
    label: str
    fields: list[FieldSpec]


class CatalogueOut(BaseModel):
    events: list[EventKindOut]
    channels: list[ChannelKindOut]


class ChannelIn(Body):
    name: str = Field(min_length=1, max_length=100)
    kind: ChannelKind
    settings: Values = Field(default_factory=dict)
    secrets: Values = Field(default_factory=dict)
    enabled: bool = True


class ChannelPatch(Body):
    name: str | None = Field(None, min_length=1, max_length=100)
    settings: Values | None = Field(None, description="All of them (left out: kept)")
    secrets: Values | None = Field(
        None, description="Secrets left out are kept; an empty string removes one"
    )
    enabled: bool | None = None


class UnsavedChannelIn(Body):
    kind: ChannelKind
    name: str | None = Field(
        None, max_length=100, description="The name typed for it, said in the test message"
    )
    settings: Values = Field(default_factory=dict)
    secrets: Values = Field(default_factory=dict)
    channel_id: JsonInt | None = Field(
        None,
        ge=1,
        le=MAX_ID,
        description="A saved channel being edited: its secrets left out are used",
    )


class RuleIn(Body):
    name: str = Field(min_length=1, max_length=100)
    enabled: bool = True
    events: list[EventName] = Field(
        default_factory=list, max_length=64, description="Empty: every event"
    )
    min_severity: Severity = "info"
    hosts: list[Annotated[int, Field(ge=0, le=MAX_ID), BeforeValidator(integral)]] = Field(
        default_factory=list, max_length=256, description="Agent ids, 0 for this host; empty: all"
    )
    stacks: list[Annotated[str, Field(max_length=100)]] = Field(
        default_factory=list, max_length=256, description="Stack ids; empty: all"
    )
    channels: list[JsonId] = Field(
        default_factory=list, max_length=64, description="Channel ids; empty: every channel"
    )

    def spec(self) -> RuleSpec:
        return RuleSpec(
            self.name,
            self.enabled,
            tuple(self.events),
            self.min_severity,
            tuple(self.hosts),
            tuple(self.stacks),
            tuple(self.channels),
        )


@router.get("/notifications/catalogue", operation_id="notificationCatalogue")
def catalogue() -> CatalogueOut:
    """Every event that can be sent, and every kind of channel with its fields."""
    return CatalogueOut(
        events=[
            EventKindOut(
                name=name,
                severity=kind.severity,
                title=kind.title,
                condition=kind.condition,
                announces_end=kind.announces_end,
            )
            for name, kind in KINDS.items()
        ],
        channels=[
            ChannelKindOut(kind=spec.kind, label=spec.label, fields=list(spec.fields))
            for spec in FORMS.values()
        ],
    )


@router.get("/notifications/channels", operation_id="listNotificationChannels")
def list_channels(notifications: NotificationsDep) -> list[ChannelView]:
    return notifications.channels.all()


@router.post(
    "/notifications/channels",
    operation_id="createNotificationChannel",
    status_code=status.HTTP_201_CREATED,
)
def create_channel(
    body: ChannelIn, admin: AdminDep, audit: AuditDep, notifications: NotificationsDep
) -> ChannelView:
    with audit(admin, "notification.channel.create", body.name):
        return notifications.channels.create(
            body.name, body.kind, body.settings, body.secrets, body.enabled
        )


@router.post("/notifications/channels/test", operation_id="testUnsavedNotificationChannel")
async def test_unsaved_channel(
    body: UnsavedChannelIn, admin: AdminDep, audit: AuditDep, notifications: NotificationsDep
) -> TestResult:
    """Send a test message with settings not saved yet; what the service answered."""
    with audit(admin, "notification.channel.test", body.kind) as note:
        tested = await trials.test_unsaved(
            notifications.channels,
            body.kind,
            body.settings,
            body.secrets,
            body.channel_id,
            body.name,
        )
        note.failed_unless(tested.ok, tested.detail)
        return tested


@router.get("/notifications/channels/{channel_id}", operation_id="getNotificationChannel")
def get_channel(channel_id: DbId, notifications: NotificationsDep) -> ChannelView:
    return notifications.channels.get(channel_id)


@router.patch("/notifications/channels/{channel_id}", operation_id="updateNotificationChannel")
def update_channel(
    channel_id: DbId,
    body: ChannelPatch,
    admin: AdminDep,
    audit: AuditDep,
    notifications: NotificationsDep,
) -> ChannelView:
    with audit(admin, "notification.channel.update", str(channel_id)):
        return notifications.channels.update(
            channel_id, body.name, body.settings, body.secrets, body.enabled
        )


@router.delete(
    "/notifications/channels/{channel_id}",
    operation_id="deleteNotificationChannel",
    status_code=status.HTTP_204_NO_CONTENT,
)
def delete_channel(
    channel_id: DbId, admin: AdminDep, audit: AuditDep, notifications: NotificationsDep
) -> None:
    """Forget the channel, its queue and its history."""
    with audit(admin, "notification.channel.delete", str(channel_id)) as note:
        note.target = notifications.channels.delete(channel_id)


@router.post("/notifications/channels/{channel_id}/test", operation_id="testNotificationChannel")
async def test_channel(
    channel_id: DbId, admin: AdminDep, audit: AuditDep, notifications: NotificationsDep
) -> TestResult:
    """Send a test message; on failure, what the service answered."""
    with audit(admin, "notification.channel.test", str(channel_id)) as note:
        tested = await trials.test_saved(notifications.channels, channel_id)
        note.failed_unless(tested.ok, tested.detail)
        return tested


@router.get(
    "/notifications/channels/{channel_id}/deliveries",
    operation_id="listNotificationDeliveries",
)
def list_deliveries(
    channel_id: DbId,
    notifications: NotificationsDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[DeliveryView]:
    """The channel's last deliveries, newest first: each event, when, and how it went
    (`message`: the deliveries sent in one digest share it)."""
    return deliveries(notifications.db, channel_id, limit)


@router.get("/notifications/rules", operation_id="listNotificationRules")
def list_rules(notifications: NotificationsDep) -> list[RuleView]:
    return notifications.rules.all()


@router.post(
    "/notifications/rules",
    operation_id="createNotificationRule",
    status_code=status.HTTP_201_CREATED,
)
async def create_rule(
    body: RuleIn, admin: AdminDep, audit: AuditDep, notifications: NotificationsDep
) -> RuleView:
    """400 when a stack it names is on none of the hosts it covers."""
    with audit(admin, "notification.rule.create", body.name):
        return await notifications.save_rule(body.spec())


@router.put("/notifications/rules/{rule_id}", operation_id="updateNotificationRule")
async def update_rule(
    rule_id: DbId, body: RuleIn, admin: AdminDep, audit: AuditDep, notifications: NotificationsDep
) -> RuleView:
    """400 when a stack it names is on none of the hosts it covers."""
    with audit(admin, "notification.rule.update", str(rule_id)):
        return await notifications.save_rule(body.spec(), rule_id)


@router.delete(
    "/notifications/rules/{rule_id}",
    operation_id="deleteNotificationRule",
    status_code=status.HTTP_204_NO_CONTENT,
)
def delete_rule(
    rule_id: DbId, admin: AdminDep, audit: AuditDep, notifications: NotificationsDep
) -> None:
    with audit(admin, "notification.rule.delete", str(rule_id)) as note:
        note.target = notifications.rules.delete(rule_id)
