"""On an agent, through the central: image update detection against the loopback
registry, the shell's WebSocket (and its end when its user's sign-in is revoked), logs and
resource use; and an agent trusted by a CA."""

from __future__ import annotations

import datetime
import ipaddress
import json
import uuid

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.agents.helpers import add_agent
from tests.containers.test_shell import (
    ORIGIN,
    REVOKED,
    audit_entry,
    closed_by_the_service,
    keep_printing,
    read_until,
)
from tests.stacks.test_rollback import QUICK
from tests.stacks.test_updates import publish_newer
from tests.support.processes import free_port
from tests.support.service import client_with_role
from tests.support.stacks import BUSYBOX, act, compose_text, service
from tests.support.waiting import wait_until

SLEEPER = compose_text(box=service(BUSYBOX, command='["sleep", "3600"]'))


@pytest.fixture
def remote(shared_engines, shared_agents, admin_client):
    """An agent on an engine of its own (shared by the module's tests), known to this
    test's central."""
    (engine,) = shared_engines(1)
    agent = shared_agents(engine, name="remote")
    record = add_agent(admin_client, agent, "remote")
    return engine, agent, f"/api/agents/{record['id']}"


def _summary(client, url: str, stack: str) -> dict:
    """The stack's line of an update summary (the host has other tests' stacks too)."""
    return next(s for s in client.get(url).json()["stacks"] if s["stack"] == stack)


@pytest.mark.direct_only(
    "an update through a tunnel: test_a_failing_update_on_an_agent_is_rolled_back_..."
)
def test_update_detection_on_an_agent_against_the_loopback_registry(
    remote, admin_client, registry, docker_client
):
    engine, _, base = remote
    token = uuid.uuid4().hex[:8]
    name, fresh = f"upd/{token}", f"fresh-{token}"
    registry.push(BUSYBOX, name, "1")
    repo = f"{registry.host}/{name}"
    compose = compose_text(app=service(f"{repo}:1", command='["sleep", "3600"]'))
    assert (
        admin_client.post(f"{base}/stacks", json={"name": fresh, "compose": compose}).status_code
        == 201
    )
    assert act(admin_client, fresh, "start", base=base)["status"] == "succeeded"  # pulled there

    checked = admin_client.post(f"{base}/stacks/updates/check")
    assert checked.status_code == 200, checked.text
    stack = next(s for s in checked.json()["stacks"] if s["stack"] == fresh)
    assert stack["has_update"] is False

    publish_newer(registry, docker_client, repo)
    checked = admin_client.post(f"{base}/stacks/updates/check").json()
    assert next(s for s in checked["stacks"] if s["stack"] == fresh)["has_update"] is True
    assert _summary(admin_client, f"{base}/stacks/updates", fresh)["has_update"] is True
    assert admin_client.get("/api/stacks/updates").json()["stacks"] == []  # not the central's

    assert act(admin_client, fresh, "update", base=base)["status"] == "succeeded"
    assert _summary(admin_client, f"{base}/stacks/updates", fresh)["has_update"] is False
    [container] = engine.client.containers.list(
        filters={"label": f"com.docker.compose.project={fresh}"}
    )
    assert container.image.id == engine.client.images.get(f"{repo}:1").id


def test_shell_logs_and_usage_of_an_agents_container(remote, admin_client):
    _, _, base = remote
    box = f"box-{uuid.uuid4().hex[:6]}"
    assert (
        admin_client.post(f"{base}/stacks", json={"name": box, "compose": SLEEPER}).status_code
        == 201
    )
    assert act(admin_client, box, "start", base=base)["status"] == "succeeded"
    csrf = admin_client.headers["X-CSRF-Token"]
    url = f"{base}/stacks/{box}/containers/{box}-box-1/shell?csrf={csrf}&cols=100&rows=30"
    with admin_client.websocket_connect(url, headers=ORIGIN) as ws:
        ws.send_bytes(b"echo remote-$((6*7)) && hostname\n")
        assert b"remote-42" in read_until(ws, b"remote-42")
        ws.send_text(json.dumps({"type": "resize", "cols": 120, "rows": 40}))
        ws.send_bytes(b"stty size\n")
        assert b"40 120" in read_until(ws, b"40 120")
    opened = audit_entry(admin_client, "container.shell")
    assert opened["target"] == f"remote: {box}/{box}-box-1" and opened["outcome"] == "success"

    logs = admin_client.get(f"{base}/stacks/{box}/logs", params={"follow": "false"})
    assert (logs.status_code == 200 and "event" in logs.text) or "data" in logs.text
    usage = admin_client.get(f"{base}/usage")
    assert usage.status_code == 200
    assert box in json.dumps(usage.json())


@pytest.mark.parametrize("revoke", REVOKED, ids=lambda revoke: revoke.__name__)
@pytest.mark.direct_only(
    "the central ends the shell; a shell through a tunnel: test_shell_logs_and_usage_..."
)
def test_an_agents_shell_ends_when_its_users_sign_in_is_revoked(app, remote, admin_client, revoke):
    """An admin's shell on an agent's container, through the central: when the admin signs
    out, or another admin makes them a viewer, the central closes it (4401) within seconds,
    and the agent ends what it started."""
    engine, _, base = remote
    box = f"box-{uuid.uuid4().hex[:6]}"
    created = admin_client.post(f"{base}/stacks", json={"name": box, "compose": SLEEPER})
    assert created.status_code == 201, created.text
    assert act(admin_client, box, "start", base=base)["status"] == "succeeded"
    container = engine.client.containers.get(f"{box}-box-1")

    def sleeping() -> bool:
        listed = container.exec_run(["ps", "-o", "args"]).output.decode()
        return any("sleep 600" in line for line in listed.splitlines())

    carol = client_with_role(app, admin_client, "carol", "admin")
    csrf = carol.headers["X-CSRF-Token"]
    url = f"{base}/stacks/{box}/containers/{box}-box-1/shell?csrf={csrf}"
    with carol.websocket_connect(url, headers=ORIGIN) as ws:
        keep_printing(ws)
        wait_until(sleeping, what="the sleep started on the agent")
        revoke(admin_client, carol, "carol")
        closed = closed_by_the_service(ws)
    assert closed["code"] == 4401, closed
    assert "sign-in has ended" in closed["reason"]
    wait_until(lambda: not sleeping(), what="the sleep ended on the agent")
    ended = audit_entry(admin_client, "container.shell.end")
    assert ended["actor"] == "carol" and ended["target"] == f"remote: {box}/{box}-box-1"
    assert "sign-in has ended" in ended["detail"]


def test_a_shell_on_an_agent_that_does_not_answer_says_so(admin_client):
    """The agent's socket cannot be opened: the browser is told why (an error message, then
    close code 4502, as a 502 would say), and the failure is audited."""
    port = free_port()
    body = {"name": "gone", "url": f"http://127.0.0.1:{port}", "token": "t" * 32}
    created = admin_client.post("/api/agents", json=body)  # saved offline
    assert created.status_code == 201, created.text
    csrf = admin_client.headers["X-CSRF-Token"]
    url = f"/api/agents/{created.json()['id']}/stacks/s/containers/c/shell?csrf={csrf}"
    with admin_client.websocket_connect(url, headers=ORIGIN) as ws:
        error = json.loads(ws.receive_text())
        closed = ws.receive()
    assert error["type"] == "error" and error["detail"].startswith("Agent 'gone': ")
    assert closed["code"] == 4502 and closed["reason"].startswith("Agent 'gone': ")
    failed = audit_entry(admin_client, "container.shell")
    assert (failed["target"], failed["outcome"]) == ("gone: s/c", "failure")


def _ca_and_leaf(folder):
    """A CA and a certificate it signed for 127.0.0.1."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agent")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    folder.mkdir(parents=True)
    (folder / "agent.crt").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (folder / "agent.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca.public_bytes(serialization.Encoding.PEM).decode()


@pytest.mark.direct_only("a direct agent's TLS certificate, signed by a CA the central trusts")
def test_an_agent_with_a_certificate_of_a_given_ca(agent_processes, admin_client, tmp_path):
    ca = _ca_and_leaf(tmp_path / "pki")
    agent = agent_processes(
        name="signed",
        STACKYARD_AGENT_TLS_CERT=str(tmp_path / "pki" / "agent.crt"),
        STACKYARD_AGENT_TLS_KEY=str(tmp_path / "pki" / "agent.key"),
    )
    body = {"name": "signed", "url": agent.url, "token": agent.token, "ca_certificate": ca}
    probe = admin_client.post("/api/agents/test", json=body).json()
    assert probe["ok"] and probe["fingerprint"] is None, probe
    created = admin_client.post("/api/agents", json=body)
    assert created.status_code == 201, created.text
    assert created.json()["trusts_ca"] and created.json()["fingerprint"] is None
    assert admin_client.get(f"/api/agents/{created.json()['id']}/stacks").json() == []

    # Another CA, which did not sign the agent's certificate, is refused when it is
    # given, and nothing changes.
    other = _ca_and_leaf(tmp_path / "other")
    wrong = admin_client.put(
        f"/api/agents/{created.json()['id']}", json={**body, "token": None, "ca_certificate": other}
    )
    assert wrong.status_code == 400 and "not the pinned one" in wrong.json()["detail"]
    assert "nothing was saved" in wrong.json()["detail"]
    assert admin_client.get(f"/api/agents/{created.json()['id']}/stacks").json() == []


def test_containers_outside_the_stacks_of_an_agent(remote, admin_client):
    """Listed from the agent's own engine (not the central's), stopped through the proxy,
    audited in the central's log with the host's name."""
    engine, _, base = remote
    loose = f"loose-{uuid.uuid4().hex[:6]}"
    engine.docker("run", "-d", "--init", "--name", loose, BUSYBOX, "sleep", "3600")

    listed = admin_client.get(f"{base}/containers")
    assert listed.status_code == 200, listed.text
    assert {"name": loose, "state": "running", "project": None}.items() <= next(
        c for c in listed.json() if c["name"] == loose
    ).items()
    assert loose not in {c["name"] for c in admin_client.get("/api/containers").json()}

    stopped = admin_client.post(f"{base}/containers/{loose}/actions/stop")
    assert stopped.status_code == 200 and stopped.json()["state"] == "exited", stopped.text
    shown = engine.docker("inspect", "-f", "{{.State.Status}}", loose).stdout.strip()
    assert shown == "exited"
    entries = admin_client.get("/api/audit", params={"limit": 50}).json()["items"]
    assert ("container.stop", f"remote: {loose}", "success") in {
        (e["action"], e["target"], e["outcome"]) for e in entries
    }
    engine.docker("rm", "-f", loose)


def test_a_failing_update_on_an_agent_is_rolled_back_there_through_the_central(
    remote, admin_client, registry, docker_client, images
):
    engine, _, base = remote
    token = uuid.uuid4().hex[:8]
    name, stack = f"roll/{token}", f"roll-{token}"
    registry.push(images.ref("good"), name, "1")
    repo = f"{registry.host}/{name}"
    compose = compose_text(app=service(f"{repo}:1"))
    assert (
        admin_client.post(f"{base}/stacks", json={"name": stack, "compose": compose}).status_code
        == 201
    )
    assert admin_client.put(f"{base}/stacks/{stack}/update-policy", json=QUICK).status_code == 204
    assert act(admin_client, stack, "start", base=base)["status"] == "succeeded"
    registry.push(images.ref("sick"), name, "1")
    assert admin_client.post(f"{base}/stacks/updates/check").status_code == 200

    run = act(admin_client, stack, "update", base=base)

    assert run["rollback"] == "done" and run["status"] == "failed", run["progress"]
    assert run["progress"]["errors"][-1].startswith("rolled back: app is unhealthy")
    [container] = engine.client.containers.list(
        filters={"label": f"com.docker.compose.project={stack}"}
    )
    assert container.image.id == images["good"]  # the previous image, on the agent's engine
    line = _summary(admin_client, f"{base}/stacks/updates", stack)
    assert line["last_update"]["outcome"] == "rolled_back"
    assert line["images"][0]["rolled_back"] is True

    def said_in_the_fleet() -> bool:  # (the agent's next report, pushed within seconds)
        attention = admin_client.get("/api/dashboard/fleet").json()["attention"]
        return any(
            a["kind"] == "update_rolled_back" and a["stack"] == stack and a["host"] == "remote"
            for a in attention
        )

    wait_until(said_in_the_fleet, timeout=15, what="the rollback in the fleet's attention list")

    def audited() -> dict | None:
        audit = admin_client.get("/api/audit", params={"action": "stack.update"}).json()["items"]
        ended = [
            e
            for e in audit
            if e["target"] == f"remote: {stack}"
            and e["action"] == "stack.update"
            and e["outcome"] != "started"
        ]
        return ended[0] if ended else None

    entry = wait_until(audited, what="the update's outcome in the central's audit log")
    assert entry["outcome"] == "failure" and "rolled back: app is unhealthy" in entry["detail"]


@pytest.mark.direct_only(
    "an agent's own events through a tunnel: tests/notifications/test_sources.py"
)
def test_an_agents_own_auto_update_that_rolls_back_is_in_the_centrals_audit_log(
    shared_engines, agent_processes, admin_client, registry, images
):
    """An agent keeps no audit log: its auto-update pass (every 3 s here) reports the
    rollback with its events, and the central audits it as the auto-update's."""
    (engine,) = shared_engines(1)
    agent = agent_processes(engine, name="auto", STACKYARD_UPDATE_CHECK_INTERVAL="3")
    base = f"/api/agents/{add_agent(admin_client, agent, 'auto')['id']}"
    token = uuid.uuid4().hex[:8]
    name, stack = f"auto/{token}", f"auto-{token}"
    registry.push(images.ref("good"), name, "1")
    compose = compose_text(app=service(f"{registry.host}/{name}:1"))
    assert (
        admin_client.post(f"{base}/stacks", json={"name": stack, "compose": compose}).status_code
        == 201
    )
    policy = QUICK | {"mode": "auto"}
    assert admin_client.put(f"{base}/stacks/{stack}/update-policy", json=policy).status_code == 204
    assert act(admin_client, stack, "start", base=base)["status"] == "succeeded"

    registry.push(images.ref("sick"), name, "1")

    def audited() -> dict | None:
        audit = admin_client.get("/api/audit", params={"action": "stack.update"}).json()["items"]
        mine = [
            e for e in audit if e["target"] == f"auto: {stack}" and e["action"] == "stack.update"
        ]
        return mine[0] if mine else None

    entry = wait_until(audited, 120, "the agent's auto-update in the central's audit log")
    assert (entry["actor"], entry["outcome"]) == ("auto-update", "failure")
    assert "rolled back: app is unhealthy" in entry["detail"]
    assert entry["detail"].endswith("reported by agent auto")
    line = _summary(admin_client, f"{base}/stacks/updates", stack)
    assert line["last_auto_update"]["outcome"] == "rolled_back"
