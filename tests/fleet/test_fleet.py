"""The fleet dashboard over the central's own host and real agents on their own engines,
with the faults users meet: an agent killed, one that accepts connections and never
answers, a bad token, a changed certificate, an older version."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from tests.agents.helpers import add_agent
from tests.fleet.conftest import AGENT_TIMEOUT
from tests.support.stacks import BUSYBOX, act, compose_text, service
from tests.support.waiting import wait_until

SLEEPER = service(BUSYBOX, command='["sleep", "3600"]')
CRASHER = service(BUSYBOX, command='["sh", "-c", "exit 3"]', restart="always")


@pytest.fixture
def silent_agent() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def _add_plain(admin_client, name: str, url: str, token: str = "t" * 40) -> dict:
    created = admin_client.post("/api/agents", json={"name": name, "url": url, "token": token})
    assert created.status_code == 201, created.text
    return created.json()


def _card(fleet: dict, name: str) -> dict:
    return next(card for card in fleet["hosts"] if card["name"] == name)


def test_the_fleet_merges_every_host_and_puts_what_needs_attention_first(
    docker_engines, agent_processes, admin_client, app
):
    (engine,) = docker_engines(1)
    busy = agent_processes(engine, name="busy")
    agent = add_agent(admin_client, busy, "busy")
    base = f"/api/agents/{agent['id']}"
    for name, compose in {
        "web": compose_text(app=SLEEPER),
        "half": compose_text(app=SLEEPER, extra=SLEEPER),
        "crashy": compose_text(app=CRASHER),
    }.items():
        assert (
            admin_client.post(f"{base}/stacks", json={"name": name, "compose": compose}).status_code
            == 201
        )
        act(admin_client, name, "start", base=base)
    engine.client.containers.list(filters={"label": "com.docker.compose.service=extra"})[0].stop()
    (busy.stacks_dir / "broken").mkdir()
    (busy.stacks_dir / "broken" / "compose.yaml").write_text("services:\n  web: [oops\n")
    with app.state.services.db.session() as session:  # as an agent known from before an upgrade
        session.execute(text("UPDATE agents SET capabilities = '[]'"))

    def restarting() -> dict | None:  # the crasher is restarting between its runs
        fleet = admin_client.get("/api/dashboard/fleet")
        assert fleet.status_code == 200, fleet.text
        kinds = {(a["kind"], a["stack"]) for a in fleet.json()["attention"]}
        wanted = {("container_restarting", "crashy"), ("stack_partial", "half")}
        return fleet.json() if wanted <= kinds else None

    # (The agent pushes its report when it changes: seen within its heartbeat.)
    body = wait_until(restarting, what="crashy restarting and half partial", interval=0.5)
    broken = next(a for a in body["attention"] if a["stack"] == "broken")
    assert broken["kind"] == "stack_invalid" and broken["severity"] == "warning"
    assert broken["message"].startswith("The compose file cannot be read: Invalid compose file")
    severities = [a["severity"] for a in body["attention"]]
    assert severities == sorted(severities, key=["critical", "warning", "info"].index)
    crashy = next(a for a in body["attention"] if a["stack"] == "crashy")
    assert crashy["host"] == "busy" and crashy["host_id"] == agent["id"]

    # What the agent serves is known again from its report.
    assert "fleet" in admin_client.get(base).json()["capabilities"]
    card = _card(body, "busy")
    assert card["status"] == "online" and card["kind"] == "agent"
    report = card["report"]
    assert report["stacks"]["running"] >= 1 and report["stacks"]["partial"] == 1
    assert report["resources"]["cpus"] >= 1 and report["resources"]["memory_total"] > 0
    assert report["resources"]["containers_running"] >= 2
    local = [c for c in body["hosts"] if c["kind"] == "local"]
    assert len(local) == 1 and local[0]["status"] == "online" and local[0]["id"] is None
    assert body["kpis"]["hosts"] == 2 and body["kpis"]["hosts_online"] == 2
    assert body["breakdown"]["partial"] == 1 and body["breakdown"]["invalid"] == 1
    assert body["kpis"]["stacks"] == sum(body["breakdown"].values())
    assert body["kpis"]["critical"] == severities.count("critical")


@pytest.mark.direct_only(
    "direct agents that fail as only a direct one can (refused, silent, a changed token); "
    "a tunnel agent down is tests/agents/test_tunnel.py's"
)
def test_failing_agents_are_offline_with_why_and_the_rest_is_shown(
    agent_processes, admin_client, silent_agent, tmp_path
):
    healthy = agent_processes(name="healthy")
    killed = agent_processes(name="killed", tls=False)
    refused = agent_processes(name="refused", tls=False)
    older = agent_processes(name="older", tls=False, APP_VERSION="0.0.9")
    add_agent(admin_client, healthy, "healthy")
    killed_id = _add_plain(admin_client, "killed", killed.url, killed.token)["id"]
    _add_plain(admin_client, "silent", silent_agent)
    _add_plain(admin_client, "refused", refused.url, refused.token)
    older_record = _add_plain(admin_client, "older", older.url, older.token)
    assert older_record["compatible"] is False and "0.0.9" in older_record["incompatibility"]
    killed.stop()
    refused.restart(new_token=True)
    # Answering at all once restarted (its fleet route built, its warm-up done) is not
    # what is tested here, and a loaded machine may take longer than the limit for it.
    wait_until(lambda: refused.get("/fleet/host").status_code == 200, what="the agent back")

    def healthy_online() -> dict | None:
        # On a loaded machine (a failed CI run) the healthy agent's report can take longer
        # than the short limit of these tests: it is asked again, as the page does.
        answer = admin_client.get("/api/dashboard/fleet")
        assert answer.status_code == 200, answer.text
        fleet = answer.json()
        return fleet if _card(fleet, "healthy")["status"] == "online" else None

    fleet = wait_until(healthy_online, what="the healthy agent online beside the failing ones")
    assert _card(fleet, "killed")["status"] == "offline"
    where = killed.url.split("://")[1].rstrip("/")
    assert _card(fleet, "killed")["detail"] == (
        f"Agent 'killed' is unreachable: connection refused at {where}: nothing listens there"
    )
    assert _card(fleet, "killed")["last_seen_at"] is not None  # seen when it was added
    assert _card(fleet, "silent")["status"] == "offline"
    assert f"no answer within {AGENT_TIMEOUT:g} s" in _card(fleet, "silent")["detail"]
    assert "refused the token" in _card(fleet, "refused")["detail"]
    assert _card(fleet, "older")["status"] == "incompatible"
    kinds = {(a["kind"], a["host"]) for a in fleet["attention"]}
    assert {
        ("agent_offline", "killed"),
        ("agent_offline", "silent"),
        ("agent_offline", "refused"),
    } <= kinds
    assert ("agent_incompatible", "older") in kinds
    assert fleet["kpis"]["hosts"] == 6 and fleet["kpis"]["hosts_online"] == 2

    # An agent of another line is refused, but still reached to update it.
    older_base = f"/api/agents/{older_record['id']}"
    refused_stacks = admin_client.get(f"{older_base}/stacks")
    assert refused_stacks.status_code == 502 and "0.0.9" in refused_stacks.json()["detail"]
    update = admin_client.get(f"{older_base}/system/update")
    assert update.status_code == 200 and update.json()["current_version"] == "0.0.9"

    # The agent's record keeps why it failed.
    assert "unreachable" in admin_client.get(f"/api/agents/{killed_id}").json()["last_error"]


@pytest.mark.direct_only("a direct agent's changed certificate and token, and a silent URL")
def test_downloads_from_a_failing_agent_are_an_error_before_any_body(
    agent_processes, admin_client, silent_agent, app, tmp_path
):
    agent = agent_processes(name="files")
    (agent.stacks_dir / "folder").mkdir()
    (agent.stacks_dir / "folder" / "a.txt").write_text("a")
    record = add_agent(admin_client, agent, "files")
    base = f"/api/agents/{record['id']}"
    fine = admin_client.get(f"{base}/files/download", params={"path": "folder"})
    assert fine.status_code == 200 and fine.headers["content-type"] == "application/zip"

    # A changed certificate: the agent is reinstalled and makes a new one.
    pinned = agent.fingerprint
    agent.restart(new_certificate=True)
    assert agent.fingerprint != pinned
    changed = admin_client.get(f"{base}/files/download", params={"path": "folder"})
    assert changed.status_code == 502
    assert "not the pinned one" in changed.json()["detail"]
    tested = admin_client.post(f"{base}/test").json()
    assert not tested["ok"] and "not the pinned one" in tested["detail"]
    assert tested["fingerprint"] == agent.fingerprint  # what it presents, not the pin

    # A token the agent no longer takes (it was given a new one).
    bad = add_agent(admin_client, agent, "bad")
    agent.restart(new_token=True)
    refused = admin_client.get(f"/api/agents/{bad['id']}/files/download", params={"path": "folder"})
    assert refused.status_code == 502 and "refused the token" in refused.json()["detail"]

    # Silent, then killed.
    silent = _add_plain(admin_client, "silent", silent_agent)
    quiet = admin_client.get(f"/api/agents/{silent['id']}/files/download", params={"path": "x"})
    assert quiet.status_code == 503 and "did not answer" in quiet.json()["detail"]
    agent.stop()
    gone = admin_client.get(f"/api/agents/{bad['id']}/files/download", params={"path": "folder"})
    assert gone.status_code == 503 and "unreachable" in gone.json()["detail"]


@pytest.mark.direct_only("a record damaged by hand: the kind of agent plays no part")
def test_a_failure_to_compute_the_fleet_is_a_500_that_says_what_and_where(
    admin_client, app, agent_processes
):
    agent = agent_processes(name="plain", tls=False)
    _add_plain(admin_client, "plain", agent.url, agent.token)
    with app.state.services.db.session() as session:  # a record damaged by hand
        session.execute(text("UPDATE agents SET capabilities = '{not json'"))
    answer = admin_client.get("/api/dashboard/fleet")
    assert answer.status_code == 500
    detail = answer.json()["detail"]
    assert "JSONDecodeError" in detail and "stackyard/agents/service.py:" in detail
