"""Agents push their fleet report over the event stream the central follows: the
dashboard shows it without asking them, a change on an agent's host shows within its
heartbeat, and an agent that goes quiet is asked again, then shown offline."""

from __future__ import annotations

import dataclasses
import os
import signal

import pytest
from pydantic import TypeAdapter

from stackyard.fleet.pushed import HEARTBEAT, LIVE_FOR, same_state
from stackyard.fleet.report import HostReport
from tests.agents.helpers import add_agent
from tests.fleet.conftest import AGENT_TIMEOUT
from tests.support.stacks import BUSYBOX, act, compose_text, service
from tests.support.waiting import wait_until

SLEEPER = service(BUSYBOX, command='["sleep", "3600"]')


def _card(admin_client, name: str) -> dict:
    answer = admin_client.get("/api/dashboard/fleet")
    assert answer.status_code == 200, answer.text
    return next(card for card in answer.json()["hosts"] if card["name"] == name)


def _pushed(card: dict) -> bool:
    """Shown from the report the agent pushed (not asked: no answer time)."""
    return (
        card["status"] == "online" and card["answered_in_ms"] is None and bool(card["reported_at"])
    )


def test_an_agents_pushed_report_is_shown_and_a_change_on_its_host_within_its_heartbeat(
    docker_engines, agent_processes, admin_client
):
    (engine,) = docker_engines(1)
    host = agent_processes(engine, name="pushing")
    base = f"/api/agents/{add_agent(admin_client, host, 'pushing')['id']}"
    body = {"name": "pair", "compose": compose_text(app=SLEEPER, extra=SLEEPER)}
    assert admin_client.post(f"{base}/stacks", json=body).status_code == 201
    act(admin_client, "pair", "start", base=base)

    def running(card: dict) -> bool:
        return _pushed(card) and card["report"]["stacks"]["running"] == 1

    wait_until(lambda: running(_card(admin_client, "pushing")), what="the stack running, pushed")

    # A container stopped on the host itself, not through the central: the agent's next
    # look finds the stack partial and pushes it.
    engine.client.containers.list(filters={"label": "com.docker.compose.service=extra"})[0].stop()
    card = wait_until(
        lambda: (c := _card(admin_client, "pushing"))["report"]["stacks"]["partial"] == 1 and c,
        timeout=HEARTBEAT + 10,
        what="the stack partial in the pushed report",
    )
    assert _pushed(card)
    attention = admin_client.get("/api/dashboard/fleet").json()["attention"]
    assert {(a["kind"], a["stack"], a["host"]) for a in attention} >= {
        ("stack_partial", "pair", "pushing")
    }


@pytest.mark.direct_only("a tunnel's own keep-alives end a frozen one: test_tunnel.py's")
def test_an_agent_that_goes_quiet_is_asked_again_and_shown_offline(agent_processes, admin_client):
    host = agent_processes(name="frozen", tls=False)
    add_agent(admin_client, host, "frozen")
    wait_until(lambda: _pushed(_card(admin_client, "frozen")), what="the pushed report")

    # Frozen: its connections stay open and say nothing (a host that hangs, a cable cut
    # with no reset). Its last report is trusted for LIVE_FOR seconds at most.
    os.kill(host.server.process.pid, signal.SIGSTOP)
    try:
        card = wait_until(
            lambda: (c := _card(admin_client, "frozen"))["status"] == "offline" and c,
            timeout=LIVE_FOR + AGENT_TIMEOUT + 10,
            what="the frozen agent offline",
        )
        assert f"no answer within {AGENT_TIMEOUT:g} s" in card["detail"]
    finally:
        os.kill(host.server.process.pid, signal.SIGCONT)
    # Awake again: its stream sends again (or is followed anew), and its report is pushed.
    wait_until(
        lambda: _pushed(_card(admin_client, "frozen")),
        timeout=LIVE_FOR + 15,
        what="the agent's report pushed again",
    )


@pytest.mark.direct_only("a tunnel agent stopped is reconnecting: test_tunnel.py's")
def test_an_agent_stopped_is_offline_at_the_next_look_not_shown_from_its_last_push(
    agent_processes, admin_client
):
    host = agent_processes(name="stopping", tls=False)
    add_agent(admin_client, host, "stopping")
    wait_until(lambda: _pushed(_card(admin_client, "stopping")), what="the pushed report")
    host.stop()
    # Its stream ended with it: the next dashboard asks it, and it is not there.
    card = wait_until(
        lambda: (c := _card(admin_client, "stopping"))["status"] != "online" and c,
        timeout=5,
        what="the stopped agent not online",
    )
    assert card["status"] == "offline" and card["report"] is None
    assert "unreachable" in card["detail"]


def test_only_a_change_beyond_load_and_free_memory_is_pushed_at_once():
    report = TypeAdapter(HostReport).validate_python(
        {
            "name": "nas",
            "version": "0.1.0",
            "stacks": {"running": 3, "stopped": 1},
            "partial": [],
            "troubles": [],
            "updates": [],
            "failed_backups": [],
            "resources": {
                "cpus": 4,
                "load": [0.4, 0.6, 0.5],
                "memory_total": 16 * 1024**3,
                "memory_available": 9 * 1024**3,
                "disk_path": "/var/lib/docker",
                "disk_total": 500 * 1024**3,
                "disk_free": 210 * 1024**3,
                "containers_running": 4,
                "containers_total": 5,
                "stacks": 4,
            },
            "engine_error": None,
        }
    )
    busier = dataclasses.replace(
        report,
        resources=dataclasses.replace(report.resources, load=(3.0, 2.0, 1.0), memory_available=1),
    )
    assert same_state(busier, report)  # (sent with the next refresh, not at once)
    assert not same_state(report, None)  # the first report is always sent
    assert not same_state(dataclasses.replace(report, updates=["app01"]), report)
    fuller = dataclasses.replace(
        report, resources=dataclasses.replace(report.resources, disk_free=1)
    )
    assert not same_state(fuller, report)
