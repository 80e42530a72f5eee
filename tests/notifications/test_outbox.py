"""From an event to a delivered message, through the real central (its database, its
dispatcher) to a real receiver: the default rules, once per change, digests, retries, a
channel that fails beside one that works, and the history."""

from __future__ import annotations

import math

from fastapi import FastAPI
from fastapi.testclient import TestClient

from stackyard.events import Event
from stackyard.notifications.dispatcher import DIGEST_SIZE
from tests.notifications.conftest import add_webhook, emit, events_of, only
from tests.support.receivers import HttpReceiver
from tests.support.waiting import wait_until


def unhealthy(ended: bool = False) -> Event:
    text = "web-1 is healthy again" if ended else "web-1 is unhealthy"
    return Event("container_unhealthy", "web-1", text, stack="blog", ended=ended)


def sent(receiver: HttpReceiver, subjects: set[str]) -> list:
    """The requests that carried events about `subjects` (the engine is shared: other
    tests' containers may be said too, by the default rules)."""
    return [r for r in receiver.requests if events_of([r], subjects)]


def history(admin: TestClient, channel: int) -> list[dict]:
    answer = admin.get(f"/api/notifications/channels/{channel}/deliveries")
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_a_failure_reaches_a_new_channel_by_the_default_rules(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    channel = add_webhook(admin, receiver.url)
    emit(
        notifying, Event("backup_failed", "blog", "Backup of blog failed: disk full", "r1", "blog")
    )
    (request, *_) = wait_until(lambda: sent(receiver, {"blog"}))
    body = request.json()
    # (Other tests' container failures on the shared engine may go in the same message.)
    (event,) = [e for e in body["events"] if e["subject"] == "blog"]
    assert (event["name"], event["severity"], event["stack"]) == (
        "backup_failed",
        "critical",
        "blog",
    )
    assert event["link"] == "/stacks/blog"
    assert event["host"]  # the central's host, by name
    assert body["type"] == "failure"
    assert "Backup of blog failed: disk full" in body["text"]
    # (Another test's container failure may have been sent to it apart: seen once in CI.)
    (entry,) = wait_until(
        lambda: [
            d
            for d in history(admin, channel["id"])
            if d["status"] == "sent" and d["event"] == "backup_failed"
        ]
    )
    assert (entry["event"], entry["attempts"], entry["error"]) == ("backup_failed", 1, None)
    assert admin.get(f"/api/notifications/channels/{channel['id']}").json()["last_success_at"]


def test_the_same_news_is_sent_once_and_its_end_once(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    only(admin, "container_unhealthy")  # (first: another test's container may exit meanwhile)
    add_webhook(admin, receiver.url)
    mine = {"web-1", "db-1"}

    def said(count: int) -> list:
        return wait_until(lambda: r if len(r := sent(receiver, mine)) >= count else None)

    emit(notifying, unhealthy())
    emit(notifying, unhealthy())  # the same: no news
    said(1)
    emit(notifying, unhealthy(ended=True))
    emit(notifying, unhealthy(ended=True))  # ended already
    emit(notifying, Event("container_unhealthy", "db-1", "db-1 is healthy again", ended=True))
    said(2)
    emit(notifying, unhealthy())  # unhealthy again: news
    requests = said(3)
    events = events_of(requests, mine)
    assert [(e["subject"], e["ended"]) for e in events] == [
        ("web-1", False),
        ("web-1", True),
        ("web-1", False),
    ]
    assert requests[1].json()["type"] == "success"  # an end is good news


def test_what_the_rules_leave_out_is_not_sent_and_a_rule_adds_it(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    channel = add_webhook(admin, receiver.url)
    blog = notifying.state.settings.stacks_dir / "blog"  # (a rule names stacks that exist)
    blog.mkdir()
    (blog / "compose.yaml").write_text("services:\n  web:\n    image: busybox\n")
    emit(notifying, Event("backup_succeeded", "blog", "Backup of blog finished", "r1", "blog"))
    emit(notifying, Event("backup_failed", "db", "Backup of db failed", "r2", "db"))
    (first,) = wait_until(lambda: sent(receiver, {"blog", "db"}))
    assert [e["name"] for e in events_of([first], {"blog", "db"})] == ["backup_failed"]
    rule = {
        "name": "Backups of blog",
        "events": ["backup_succeeded"],
        "stacks": ["blog"],
        "hosts": [0],
        "channels": [channel["id"]],
    }
    assert admin.post("/api/notifications/rules", json=rule).status_code == 201
    emit(notifying, Event("backup_succeeded", "db", "Backup of db finished", "r3", "db"))
    emit(notifying, Event("backup_succeeded", "blog", "Backup of blog finished", "r4", "blog"))
    requests = wait_until(lambda: r if len(r := sent(receiver, {"blog", "db"})) >= 2 else None)
    # db's success is left out still (the rule names blog), blog's is sent.
    assert [(e["name"], e["stack"]) for e in events_of(requests[1:], {"blog", "db"})] == [
        ("backup_succeeded", "blog")
    ]


def test_a_burst_goes_out_as_digests_with_none_lost(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    add_webhook(admin, receiver.url)
    count = 3 * DIGEST_SIZE + 7
    jobs = {f"job-{n}" for n in range(count)}
    for n in range(count):
        emit(
            notifying, Event("container_exited", f"job-{n}", f"job-{n} exited with code 1", str(n))
        )
    expected = math.ceil(count / DIGEST_SIZE)
    requests = wait_until(
        lambda: receiver.requests if len(events_of(receiver.requests, jobs)) >= count else None,
        what=f"{count} events delivered",
    )
    subjects = [e["subject"] for e in events_of(requests, jobs)]
    assert sorted(subjects) == sorted(f"job-{n}" for n in range(count))  # each once
    # Digests of at most DIGEST_SIZE; a first message may go before the rest came in.
    assert all(len(r.json()["events"]) <= DIGEST_SIZE for r in requests)
    assert len(requests) <= expected + 1
    assert requests[-1].json()["title"].startswith("Stackyard: ")


def test_a_failing_channel_is_tried_again_and_shows_why(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    only(admin, "update_failed")  # (first: another test's container may exit meanwhile)
    channel = add_webhook(admin, receiver.url)
    receiver.fail_next(2, 503, "receiver is down for maintenance")
    emit(
        notifying,
        Event("update_failed", "blog", "Update of blog failed: pull refused", "r9", "blog"),
    )
    requests = receiver.wait_for(3)
    assert [e["name"] for e in events_of(requests)] == ["update_failed"] * 3
    (entry,) = wait_until(
        lambda: [d for d in history(admin, channel["id"]) if d["status"] == "sent"]
    )
    assert entry["attempts"] == 3
    shown = admin.get(f"/api/notifications/channels/{channel['id']}").json()
    assert "receiver is down for maintenance" in shown["last_error"]
    assert shown["last_success_at"] > shown["last_error_at"]


def test_a_slow_or_failing_channel_does_not_hold_up_another(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    with HttpReceiver() as slow:
        slow.delay = 5
        only(admin, "backup_failed")
        add_webhook(admin, slow.url, "slow")
        add_webhook(admin, "http://127.0.0.1:1/closed", "closed")
        add_webhook(admin, receiver.url, "works")
        emit(notifying, Event("backup_failed", "blog", "Backup of blog failed", "r1", "blog"))
        (request,) = receiver.wait_for(1, timeout=3)  # before the slow one answered
        assert request.json()["events"][0]["name"] == "backup_failed"
        slow.wait_for(1)


def test_a_disabled_or_removed_channel_gets_nothing(
    notifying: FastAPI, admin: TestClient, receiver: HttpReceiver
):
    only(admin, "backup_failed")
    channel = add_webhook(admin, receiver.url)
    with HttpReceiver() as other:
        add_webhook(admin, other.url, "other")
        answer = admin.patch(
            f"/api/notifications/channels/{channel['id']}", json={"enabled": False}
        )
        assert answer.status_code == 200
        emit(notifying, Event("backup_failed", "blog", "Backup of blog failed", "r1", "blog"))
        other.wait_for(1)
    assert receiver.requests == []
