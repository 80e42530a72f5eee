"""The fleet's conditions as notifications: what the dashboard shows of a host begins a
condition, what it no longer shows ends it, but only as far as the host's report
reaches (an offline agent's containers have not recovered: they are not seen). Fleet
payloads are made here as the dashboard makes them (`merge` of host cards), and judged
by the real service into a real receiver."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import FastAPI
from fastapi.testclient import TestClient

from stackyard.fleet.dashboard import HostCard, HostStatus, merge
from stackyard.fleet.report import ContainerTrouble, HostReport, Resources
from stackyard.notifications.conditions import STREAM_OWNED
from tests.notifications.conftest import add_webhook, events_of
from tests.support.receivers import HttpReceiver
from tests.support.waiting import wait_until

GIB = 2**30


def report(
    troubles: list[ContainerTrouble] | None = None,
    disk_free: int = 50 * GIB,
    updates: dict[str, str] | None = None,
) -> HostReport:
    return HostReport(
        name="host",
        version="0.1.0",
        stacks={"running": 1, "partial": 0, "stopped": 0, "invalid": 0},
        partial=[],
        troubles=troubles or [],
        updates=list(updates or {}),
        failed_backups=[],
        resources=Resources(
            cpus=2,
            load=(0.1, 0.1, 0.1),
            memory_total=8 * GIB,
            memory_available=6 * GIB,
            disk_path="/var/lib/docker",
            disk_total=100 * GIB,
            disk_free=disk_free,
            containers_running=3,
            containers_total=3,
            stacks=1,
        ),
        engine_error=None,
        update_digests=updates or {},
    )


def card(
    host_id: int | None, status: HostStatus = "online", host_report: HostReport | None = None
) -> HostCard:
    name = "nas" if host_id is None else f"agent-{host_id}"
    shown = host_report if status == "online" else None
    detail = None if status == "online" else "unreachable"
    return HostCard(host_id, name, "local" if host_id is None else "agent", status, detail,
                    "0.1.0", datetime.now(UTC), 1.0, shown)  # fmt: skip


#: What these tests speak of (the engine is shared: other tests' containers are said too).
SUBJECTS = {"host", "agent", "blog-web-1", "blog-db-1", "blog"}


def seen(receiver: HttpReceiver) -> list[tuple[str, str, str, bool]]:
    events = events_of(receiver.requests, SUBJECTS)
    return [(e["host"], e["name"], e["subject"], e["ended"]) for e in events]


def judge(app: FastAPI, *cards: HostCard) -> None:
    app.state.services.notifications.observe(merge(list(cards)))


def settle(receiver: HttpReceiver, count: int) -> list[tuple[str, str, str, bool]]:
    def enough() -> list[tuple[str, str, str, bool]] | None:
        said = seen(receiver)
        return said if len(said) >= count else None

    return wait_until(enough, what=f"{count} events")


def test_a_condition_is_said_when_it_begins_and_when_it_ends(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    add_webhook(admin, receiver.url)
    full = report(disk_free=10 * GIB)  # 90 % used: past the first threshold
    judge(notifying, card(None, "online", full))
    judge(notifying, card(None, "online", full))  # still: no news
    assert settle(receiver, 1) == [("nas", "disk_full", "host", False)]
    (first,) = events_of(receiver.requests, SUBJECTS)
    assert (first["severity"], first["text"]) == ("warning", "Disk of /var/lib/docker is 90 % full")
    judge(notifying, card(None, "online", report()))
    assert settle(receiver, 2)[1] == ("nas", "disk_full", "host", True)


def test_an_offline_agents_containers_do_not_recover_by_being_unseen(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    add_webhook(admin, receiver.url)
    sick = report([ContainerTrouble("blog", "blog-web-1", "unhealthy")])
    judge(notifying, card(None, "online", report()), card(7, "online", sick))
    assert settle(receiver, 1) == [("agent-7", "container_unhealthy", "blog-web-1", False)]
    judge(notifying, card(None, "online", report()), card(7, "offline"))
    judge(notifying, card(None, "online", report()), card(7, "disabled"))
    assert settle(receiver, 2)[1] == ("agent-7", "agent_offline", "agent", False)
    judge(notifying, card(None, "online", report()), card(7, "online", report()))
    said = settle(receiver, 4)
    assert sorted(said[2:]) == [
        ("agent-7", "agent_offline", "agent", True),
        ("agent-7", "container_unhealthy", "blog-web-1", True),
    ]
    assert len(seen(receiver)) == 4


def test_newer_images_are_said_once_per_new_digest(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    add_webhook(admin, receiver.url)
    judge(notifying, card(None, "online", report(updates={"blog": "digest-a"})))
    judge(notifying, card(None, "online", report(updates={"blog": "digest-a"})))
    assert settle(receiver, 1) == [("nas", "stack_update", "blog", False)]
    judge(notifying, card(None, "online", report(updates={"blog": "digest-b"})))
    assert settle(receiver, 2)[1] == ("nas", "stack_update", "blog", False)
    # Updated: no message of its own (the update says so), and a later digest is news.
    judge(notifying, card(None, "online", report()))
    judge(notifying, card(None, "online", report(updates={"blog": "digest-b"})))
    assert settle(receiver, 3)[2] == ("nas", "stack_update", "blog", False)
    assert len(seen(receiver)) == 3


def test_the_dashboard_and_the_notifications_name_the_same_conditions(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    add_webhook(admin, receiver.url)
    troubles = [
        ContainerTrouble("blog", "blog-web-1", "unhealthy"),
        ContainerTrouble("blog", "blog-db-1", "restarting"),
    ]
    fleet = merge([card(None, "online", report(troubles, disk_free=3 * GIB)), card(3, "offline")])
    notifying.state.services.notifications.observe(fleet)
    shown = sorted((a.host, a.kind, a.subject) for a in fleet.attention)
    # One kind aside: a restart loop is the engine's events' to say (the fleet sees a
    # looping container now restarting, now running).
    expected = [item for item in shown if item[1] not in STREAM_OWNED]
    assert len(expected) == len(shown) - 1 == 3
    said = settle(receiver, len(expected))
    assert sorted((h, n, s) for h, n, s, _ in said) == expected
