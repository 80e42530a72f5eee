"""Events raised for real and delivered to a real receiver: containers on the real
engine (a failing healthcheck and its recovery, an unexpected exit beside a stop, an
OOM kill), a push to a destination that refuses, an agent process killed and back, an
agent's own container events forwarded, and what a hostile agent may not report."""

from __future__ import annotations

import json
import secrets
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from stackyard.fleet import dashboard
from tests.agents.helpers import add_agent
from tests.agents.hostile import Answer, HostileAgent, hostile_agent  # noqa: F401 (a fixture)
from tests.notifications.conftest import TIMING, add_webhook, events_of, watching
from tests.stacks.test_rollback import QUICK
from tests.support.receivers import HttpReceiver
from tests.support.service import ADMIN_PASSWORD, new_client, settings_in, sign_in, started
from tests.support.stacks import HELPER, act, compose_text, service, start_restore, wait_run
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker


#: Seconds the central gives an agent to answer (the default is 5 s): generous, for a
#: loaded machine's agents answer slowly, and the agents these tests stop are refused at
#: once, not waited for.
AGENT_TIMEOUT = 30


@pytest.fixture
def central(central_app: FastAPI, tmp_path: Path, stacks_dir: Path) -> Iterator[FastAPI]:
    """A central that looks at its fleet every second."""
    settings = settings_in(tmp_path, notify_check_seconds=1, agent_timeout=AGENT_TIMEOUT, **TIMING)
    with started(central_app, settings):
        yield central_app


@pytest.fixture
def admin(central: FastAPI) -> TestClient:
    client = new_client(central)
    sign_in(client, "admin", ADMIN_PASSWORD)
    return client


@pytest.fixture
def containers() -> Iterator[list[str]]:
    """Names of containers the test runs (removed at its end)."""
    names: list[str] = []
    yield names
    if names:
        subprocess.run(["docker", "rm", "-f", *names], capture_output=True, check=False)


def docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=True).stdout


def run(containers: list[str], *args: str) -> str:
    name = f"sy-note-{secrets.token_hex(4)}"
    containers.append(name)
    docker("run", "-d", "--name", name, *args)
    return name


def said(receiver: HttpReceiver, name: str, subject: str, count: int = 1) -> list[dict]:
    """The first `count` events of `name` about `subject` the receiver got."""

    def found() -> list[dict] | None:
        events = [
            e for e in events_of(receiver.requests) if (e["name"], e["subject"]) == (name, subject)
        ]
        return events if len(events) >= count else None

    return wait_until(found, timeout=60, what=f"{count} {name} of {subject}")


def test_an_unhealthy_container_is_said_once_and_its_recovery_once(
    admin: TestClient, receiver: HttpReceiver, containers: list[str]
):
    add_webhook(admin, receiver.url)
    name = run(
        containers,
        "--health-cmd", "test -f /ok", "--health-interval", "1s", "--health-retries", "1",
        HELPER, "sleep", "120",
    )  # fmt: skip
    (began,) = said(receiver, "container_unhealthy", name)
    assert (began["severity"], began["ended"]) == ("critical", False)
    assert began["text"] == f"{name} is unhealthy"
    assert began["link"] == "/containers"  # no stack's
    docker("exec", name, "touch", "/ok")
    ended = said(receiver, "container_unhealthy", name, 2)[1]
    assert ended["ended"] is True
    # Still unhealthy at every look of the fleet (each second) and every failed check of
    # the engine until then: said once all the same.
    assert len(said(receiver, "container_unhealthy", name, 2)) == 2


def test_an_unexpected_exit_is_said_and_a_stop_is_not(
    admin: TestClient, receiver: HttpReceiver, containers: list[str]
):
    add_webhook(admin, receiver.url)
    stopped = run(containers, HELPER, "sleep", "120")
    crashed = run(containers, HELPER, "sh", "-c", "sleep 2; exit 3")
    docker("stop", "-t", "1", stopped)
    (event,) = said(receiver, "container_exited", crashed)
    assert event["text"] == f"{crashed} exited unexpectedly with code 3"
    assert events_of(receiver.requests, {stopped}) == []


def test_a_container_that_keeps_exiting_is_said_once_as_restarting(
    admin: TestClient, receiver: HttpReceiver, containers: list[str]
):
    """A crash loop is one problem: said when first seen, when it is a loop and when it
    ends (three messages, where it was two exits, the loop and its end)."""
    add_webhook(admin, receiver.url)
    name = run(containers, "--restart", "always", HELPER, "sh", "-c", "sleep 0.5; exit 4")
    (looping,) = said(receiver, "container_restarting", name)
    assert looping["text"].startswith(f"{name} keeps exiting (3 times within 5 minutes")
    # More exits follow (the engine restarts it, the fleet sees it restarting each
    # second): none is news.
    wait_until(lambda: int(docker("inspect", "-f", "{{.RestartCount}}", name)) >= 5)
    events = events_of(receiver.requests, {name})
    assert [e["name"] for e in events] == ["container_exited", "container_restarting"]
    # The engine may refuse the change at the moment it restarts the container (seen
    # once under load): asked again until it takes it.
    update = ["docker", "update", "--restart", "no", name]
    wait_until(
        lambda: subprocess.run(update, capture_output=True).returncode == 0,
        what="the engine to take the new restart policy",
    )
    docker("stop", "-t", "1", name)  # the loop ends with it
    ended = said(receiver, "container_restarting", name, 2)[1]
    assert (ended["ended"], ended["text"]) == (True, f"{name} was stopped")
    assert len(events_of(receiver.requests, {name})) == 3


def test_a_container_killed_for_memory_at_each_start_is_one_problem(
    admin: TestClient, receiver: HttpReceiver, make_stack
):
    """`mem_limit: 8m`, `restart: always`: one message per kill (and some as an exit with
    code 137) was nine in 40 s. Now: when first seen, as a loop, and when it ends."""
    add_webhook(admin, receiver.url)
    hog = service(
        HELPER,
        command='["sh", "-c", "head -c 200m /dev/zero | tail"]',
        mem_limit="8m",
        memswap_limit="8m",
        restart="always",
    )
    stack = make_stack("note-oom", compose_text(hog=hog))
    assert act(admin, stack, "start")["status"] == "succeeded"
    name = f"{stack}-hog-1"
    wait_until(
        lambda: int(docker("inspect", "-f", "{{.RestartCount}}", name)) >= 6,
        what="six kills and restarts",
    )
    (looping,) = said(receiver, "container_restarting", name)
    assert looping["text"] == (
        f"{name} keeps being killed for want of memory (3 times within 5 minutes)"
    )
    assert act(admin, stack, "stop")["status"] == "succeeded"
    ended = said(receiver, "container_restarting", name, 2)[1]
    assert ended["ended"] is True
    told = [(e["name"], e["text"]) for e in events_of(receiver.requests, {name})]
    assert len(told) == 3, told
    assert told[0] in (
        ("container_oom", f"{name} was killed: out of memory"),
        ("container_exited", f"{name} exited unexpectedly with code 137"),  # (told first)
    )
    assert told[1] == ("container_restarting", looping["text"])
    assert told[2] == ("container_restarting", ended["text"])


def test_an_oom_kill_is_said(admin: TestClient, receiver: HttpReceiver, containers: list[str]):
    add_webhook(admin, receiver.url)
    name = run(
        containers, "--memory", "16m", "--memory-swap", "16m",
        HELPER, "sh", "-c", "head -c 200m /dev/zero | tail",
    )  # fmt: skip
    (event,) = said(receiver, "container_oom", name)
    assert event["text"] == f"{name} was killed: out of memory"
    assert [e["name"] for e in events_of(receiver.requests, {name})] == ["container_oom"]


def test_a_push_the_destination_refuses_is_a_failed_backup(
    admin: TestClient, receiver: HttpReceiver, make_stack
):
    add_webhook(admin, receiver.url)
    stack = make_stack("note-push", compose_text(app=service()))
    assert admin.post(f"/api/stacks/{stack}/backups", json={}).status_code == 202
    assert wait_run(admin, stack)["status"] == "succeeded"
    (archive,) = admin.get("/api/backups").json()
    body = {
        "name": "closed box",
        "settings": {"type": "sftp", "host": "127.0.0.1", "port": 1, "username": "x"},
        "secrets": {"password": "x"},
    }
    destination = admin.post("/api/destinations", json=body).json()
    pushed = admin.post(
        f"/api/backups/{archive['name']}/push", json={"destination_id": destination["id"]}
    )
    assert pushed.status_code == 202, pushed.text
    assert wait_run(admin, stack)["status"] == "failed"
    (event,) = said(receiver, "backup_failed", stack)
    assert event["text"].startswith(f"Push of {stack} failed: ")
    assert "cannot be reached" in event["text"]
    assert event["link"] == f"/stacks/{stack}"
    # A restore is news only to whom a rule sends it (info, as successes are).
    assert (
        admin.post(
            "/api/notifications/rules", json={"name": "r", "events": ["restore_finished"]}
        ).status_code
        == 201
    )
    clone = f"{stack}-clone"
    assert start_restore(admin, archive["name"], stack=clone).status_code == 202
    assert wait_run(admin, clone)["status"] == "succeeded"
    (restored,) = said(receiver, "restore_finished", clone)
    assert restored["text"].startswith(f"Restore of {clone} finished")
    assert restored["severity"] == "info"


def test_a_restore_drill_that_fails_is_said(admin: TestClient, receiver: HttpReceiver, make_stack):
    """A stack whose service exits at once: its backup restores, but the drill's clone
    fails, and that is news (critical, by the default rules)."""
    add_webhook(admin, receiver.url)
    stack = make_stack("note-drill", compose_text(app=service(command='["sh", "-c", "exit 3"]')))
    assert admin.post(f"/api/stacks/{stack}/backups", json={}).status_code == 202
    archive = wait_run(admin, stack)["artifact"]
    assert admin.post(f"/api/backups/{archive}/drill", json={}).status_code == 202
    assert wait_run(admin, stack)["status"] == "failed"
    (event,) = said(receiver, "drill_failed", stack)
    assert event["text"] == f"Restore drill of {stack} failed: The clone failed: app exited (3)"
    assert event["severity"] == "critical"


def test_an_update_that_fails_is_said(admin: TestClient, receiver: HttpReceiver, make_stack):
    add_webhook(admin, receiver.url)
    stack = make_stack("note-upd", compose_text(app=service("127.0.0.1:1/nowhere/app:1")))
    assert act(admin, stack, "update")["status"] == "failed"
    (event,) = said(receiver, "update_failed", stack)
    assert event["text"].startswith(f"Update of {stack} failed: ")
    assert event["severity"] == "critical"


def test_an_update_that_rolls_back_is_said_with_why(
    admin: TestClient, receiver: HttpReceiver, make_stack, registry, docker_client, images
):
    """The health gate failed: the news is the rollback (not a plain failure), with the
    service and why."""
    name = f"note/{secrets.token_hex(4)}"
    registry.push(images.ref("good"), name, "1")
    repo = f"{registry.host}/{name}"
    stack = make_stack("note-roll", compose_text(app=service(f"{repo}:1")))
    assert admin.put(f"/api/stacks/{stack}/update-policy", json=QUICK).status_code == 204
    assert act(admin, stack, "start")["status"] == "succeeded"
    registry.push(images.ref("crashing"), name, "1")
    docker_client.api.tag(images["good"], repo, "1")  # this host still runs the old one
    add_webhook(admin, receiver.url)
    assert admin.post("/api/stacks/updates/check").status_code == 200

    run = act(admin, stack, "update")
    assert run["rollback"] == "done", run["progress"]["errors"]

    (event,) = said(receiver, "update_rolled_back", stack)
    assert event["text"] == f"Update of {stack}: rolled back: app exited with code 3"
    assert event["severity"] == "critical"
    assert not [
        e
        for e in events_of(receiver.requests)
        if e["name"] == "update_failed" and e["subject"] == stack
    ]


def test_an_update_that_fails_its_health_gate_is_said_once_by_its_outcome(
    admin: TestClient,
    receiver: HttpReceiver,
    make_stack,
    registry,
    docker_client,
    images,
    containers: list[str],
):
    """The new release is unhealthy and rolled back: one message, the update's, where
    there were three (unhealthy, "resolved: removed", rolled back)."""
    name = f"note/{secrets.token_hex(4)}"
    registry.push(images.ref("good"), name, "1")
    repo = f"{registry.host}/{name}"
    stack = make_stack("note-gate", compose_text(app=service(f"{repo}:1")))
    assert admin.put(f"/api/stacks/{stack}/update-policy", json=QUICK).status_code == 204
    assert act(admin, stack, "start")["status"] == "succeeded"
    registry.push(images.ref("sick"), name, "1")
    docker_client.api.tag(images["good"], repo, "1")  # this host still runs the old one
    add_webhook(admin, receiver.url)
    assert admin.post("/api/stacks/updates/check").status_code == 200

    run_ = act(admin, stack, "update")
    assert run_["rollback"] == "done", run_["progress"]["errors"]

    (event,) = said(receiver, "update_rolled_back", stack)
    assert event["text"] == f"Update of {stack}: rolled back: app is unhealthy"
    # A container that exits after the update: once its news is in, what the engine said
    # of the stack's containers before it has been judged too.
    marker = run(containers, HELPER, "sh", "-c", "exit 5")
    said(receiver, "container_exited", marker)
    about_stack = [
        (e["name"], e["text"])
        for e in events_of(receiver.requests)
        if (e["subject"].startswith(f"{stack}-") or e["subject"] == stack)
        and e["name"] != "stack_update"  # (the check's: newer images are there)
    ]
    assert about_stack == [("update_rolled_back", event["text"])]


def test_an_agent_killed_is_said_offline_and_back(
    admin: TestClient, receiver: HttpReceiver, agent_processes, agent_kind, monkeypatch
):
    if agent_kind == "tunnel":  # (reconnecting for a minute first, then offline)
        monkeypatch.setattr(dashboard, "RECONNECT_GRACE", timedelta(seconds=1))
    agent = agent_processes(name="note-agent", tls=False)
    add_agent(admin, agent, "note-agent")
    add_webhook(admin, receiver.url)
    agent.stop()
    (offline,) = said(receiver, "agent_offline", "agent")
    assert (offline["host"], offline["ended"]) == ("note-agent", False)
    assert "offline" in offline["text"]
    agent.restart()
    back = said(receiver, "agent_offline", "agent", 2)[1]
    assert (back["host"], back["ended"]) == ("note-agent", True)


def test_an_agents_container_events_are_forwarded_as_its_own(
    admin: TestClient, receiver: HttpReceiver, agent_processes, containers: list[str]
):
    agent = agent_processes(name="note-fwd", tls=False)
    record = add_agent(admin, agent, "note-fwd")
    add_webhook(admin, receiver.url)
    watching(receiver, record["id"])
    crashed = run(containers, HELPER, "sh", "-c", "sleep 2; exit 7")
    # The agent shares this machine's engine: the central's own watcher says it too, as
    # its own host's; the agent's word comes as the agent's.
    events = said(receiver, "container_exited", crashed, 2)
    hosts = sorted((e["host_id"] or 0) for e in events)
    assert hosts == [0, record["id"]]
    forwarded = next(e for e in events if e["host_id"] == record["id"])
    assert forwarded["host"] == "note-fwd"
    assert forwarded["link"] == f"/containers?host={record['id']}"


def test_a_hostile_agent_reports_only_its_own_containers(
    admin: TestClient,
    receiver: HttpReceiver,
    hostile_agent: HostileAgent,  # noqa: F811
):
    def line(seq: int, event: dict | None, **extra) -> bytes:
        return json.dumps({"boot": "b1", "seq": seq, "event": event, **extra}).encode() + b"\n"

    lines = [
        line(0, None),
        # Not an agent's to report: a central's sign-ins, its own update.
        line(1, {"name": "signin_failures", "subject": "account admin", "text": "forged"}),
        line(2, {"name": "self_update_failed", "subject": "stackyard", "text": "forged"}),
        # Unknown, malformed, oversized: dropped.
        line(3, {"name": "root_granted", "subject": "x", "text": "forged"}),
        b"{not json\n",
        line(4, {"name": "container_exited", "subject": "x", "text": "y" * 5000}),
        # Its own container, claiming another host: the host is the central's say.
        line(5, {"name": "container_exited", "subject": "evil-1", "text": "evil-1 exited"},
             host="central", host_id=0),
    ]  # fmt: skip
    hostile_agent.answers["notifications/events"] = Answer(
        content_type="application/x-ndjson", body=b"".join(lines)
    )
    body = {"name": "hostile", "url": hostile_agent.url, "token": hostile_agent.token}
    assert admin.post("/api/agents", json=body).status_code == 201
    add_webhook(admin, receiver.url)
    (event,) = said(receiver, "container_exited", "evil-1")
    assert (event["host"], event["text"]) == ("hostile", "evil-1 exited")
    assert event["host_id"] not in (None, 0)
    names = {e["name"] for e in events_of(receiver.requests)}
    assert not names & {"signin_failures", "self_update_failed", "root_granted"}
    assert "y" * 600 not in json.dumps(events_of(receiver.requests))
