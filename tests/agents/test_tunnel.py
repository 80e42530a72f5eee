"""Agents that dial the central: a real `stackyard agent --connect` in a network namespace
the central cannot reach (it reaches the central's address only), enrolled with a one-time
token, and every request of the central going through its tunnel; through an HTTP CONNECT
proxy; the central killed and started again; a key rotated during a download; an agent
revoked mid-stream, which cannot come back."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sqlite3
import subprocess
import threading
import time
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.connect_proxy import connect_proxy
from tests.support.netns import Namespace, unreachable_namespace
from tests.support.processes import free_port, stop_process
from tests.support.service import (
    ADMIN_PASSWORD,
    STACKYARD_BIN,
    ServerProcess,
    service_env,
    sign_in,
    start_server,
)
from tests.support.stacks import BUSYBOX, act, compose_text, service
from tests.support.waiting import PATIENCE, wait_until

pytestmark = pytest.mark.docker


@dataclass
class TunnelAgent:
    process: subprocess.Popen
    folder: Path
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        stop_process(self.process)


def dial(
    folder: Path, central: str, token: str, ns: Namespace | None = None, **extra: str
) -> TunnelAgent:
    """`stackyard agent --connect central --enrol token` (inside `ns` when given)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stacks").mkdir(exist_ok=True)
    env = service_env(folder, STACKYARD_HOST_NAME=folder.name, **extra)
    command = [str(STACKYARD_BIN), "agent", "--connect", central, "--enrol", token]
    command += ["--port", str(free_port())]
    log_path = folder / "agent.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            ns.command(*command) if ns else command,
            env=env,
            cwd=folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return TunnelAgent(process, folder, log_path)


def central_in(folder: Path, host: str = "127.0.0.1", **kwargs) -> ServerProcess:
    (folder / "stacks").mkdir(parents=True, exist_ok=True)
    return start_server(folder, host=host, **kwargs)


def admin_of(server: ServerProcess) -> httpx.Client:
    client = httpx.Client(base_url=server.url, timeout=60)
    sign_in(client, "admin", ADMIN_PASSWORD)
    return client


def connected(admin: httpx.Client, agent_id: int, since: str | None = None) -> dict:
    """The agent's record once its tunnel is up (a newer one than `since`)."""

    def up() -> dict | None:
        view = admin.get(f"/api/agents/{agent_id}").json()
        fresh = since is None or (view["tunnel_since"] or "") > since
        return view if view["tunnel"] == "connected" and fresh else None

    return wait_until(up, PATIENCE, "the agent's tunnel")


@pytest.fixture
def namespace() -> Iterator[Namespace]:
    with unreachable_namespace() as ns:
        yield ns


def test_an_agent_behind_nat_enrols_and_everything_goes_through_its_tunnel(
    tmp_path: Path, namespace: Namespace, docker_cleanup
):
    central = central_in(tmp_path / "central", namespace.host_ip)
    agent = None
    try:
        admin = admin_of(central)
        made = admin.post("/api/agents/tunnel", json={"name": "behind-nat"})
        assert made.status_code == 201, made.text
        new = made.json()
        agent_id, token = new["agent"]["id"], new["token"]
        assert new["command"] == f"stackyard agent --connect {central.url} --enrol {token}"
        assert new["agent"]["kind"] == "tunnel" and not new["agent"]["enrolled"]
        assert token not in admin.get("/api/agents").text

        began = time.monotonic()
        agent = dial(tmp_path / "agent", central.url, token, namespace)
        view = connected(admin, agent_id)
        print(f"tunnel up {time.monotonic() - began:.1f} s after the agent started")
        assert view["enrolled"] and view["key_fingerprint"].startswith("SHA256:")
        # The central cannot reach the agent: only the tunnel does.
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://{namespace.inside_ip}:8081/agent/health", timeout=2)
        # A used token is refused (also with another key).
        again = admin.post("/api/enrol", json={"token": token, "public_key": _a_key()})
        assert again.status_code == 401

        base = f"/api/agents/{agent_id}"
        stack = f"nat-{uuid.uuid4().hex[:6]}"
        docker_cleanup.compose_project(stack)
        compose = compose_text(
            app=service(BUSYBOX, command='["sh", "-c", "echo hello-tunnel; sleep 3600"]')
        )
        assert (
            admin.post(f"{base}/stacks", json={"name": stack, "compose": compose}).status_code
            == 201
        )
        assert act(admin, stack, "start", base=base)["status"] == "succeeded"
        logs = admin.get(f"{base}/stacks/{stack}/logs", params={"tail": 10, "follow": False})
        assert "hello-tunnel" in logs.text
        folder = agent.folder / "stacks" / stack / "big"
        folder.mkdir()
        (folder / "blob").write_bytes(os.urandom(8 * 1024 * 1024))
        zipped = admin.get(f"{base}/files/download", params={"path": f"{stack}/big"})
        assert zipped.status_code == 200
        with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
            assert archive.read("big/blob") == (folder / "blob").read_bytes()

        def running() -> dict | None:  # (the agent's report, pushed within seconds)
            fleet = admin.get("/api/dashboard/fleet").json()
            (card,) = [h for h in fleet["hosts"] if h["id"] == agent_id]
            return card if (card["report"] or {}).get("stacks", {}).get("running") else None

        card = wait_until(running, 15, "the stack running in the agent's fleet card")
        assert card["status"] == "online"

        # The central killed and started again: the agent is back on its own.
        stop_process(central.process)
        down = time.monotonic()
        port = int(central.url.rsplit(":", 1)[1])
        central = central_in(tmp_path / "central", namespace.host_ip, env=central.env, port=port)
        admin = admin_of(central)
        connected(admin, agent_id)
        print(f"back {time.monotonic() - down:.1f} s after the central was stopped")
        assert admin.get(f"{base}/stacks").status_code == 200
    finally:
        if agent is not None:
            agent.stop()
        central.stop()


def test_an_agent_revoked_mid_stream_is_cut_at_once_and_cannot_come_back(
    tmp_path: Path, namespace: Namespace, docker_cleanup
):
    central = central_in(tmp_path / "central", namespace.host_ip)
    agent = None
    try:
        admin = admin_of(central)
        new = admin.post("/api/agents/tunnel", json={"name": "revoked"}).json()
        agent_id = new["agent"]["id"]
        agent = dial(tmp_path / "agent", central.url, new["token"], namespace)
        connected(admin, agent_id)
        stack = f"rev-{uuid.uuid4().hex[:6]}"
        docker_cleanup.compose_project(stack)
        chatty = '["sh", "-c", "while true; do echo line; sleep 0.05; done"]'
        base = f"/api/agents/{agent_id}"
        body = {"name": stack, "compose": compose_text(app=service(BUSYBOX, command=chatty))}
        assert admin.post(f"{base}/stacks", json=body).status_code == 201
        assert act(admin, stack, "start", base=base)["status"] == "succeeded"

        ended = threading.Event()
        lines: list[str] = []

        def follow() -> None:
            with (
                contextlib.suppress(httpx.HTTPError),
                admin.stream(
                    "GET", f"{base}/stacks/{stack}/logs", params={"follow": "true"}, timeout=120
                ) as answer,
            ):
                for line in answer.iter_lines():
                    lines.append(line)
            ended.set()

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        wait_until(lambda: len(lines) > 5, PATIENCE, "log lines through the tunnel")
        revoking = time.monotonic()
        assert admin.delete(f"/api/agents/{agent_id}").status_code == 204
        count = len(lines)
        assert ended.wait(10), f"the stream went on: {len(lines) - count} lines after, {lines[-3:]}"
        print(f"stream cut {time.monotonic() - revoking:.2f} s after the revocation")
        # It dials again, and is refused: the log says so, and it is no agent any more.
        wait_until(lambda: agent.log().count("failed") >= 2, PATIENCE, "a refused dial")
        assert admin.get(f"/api/agents/{agent_id}").status_code == 404
        # The connections cut with it end quietly (asyncio logged each as an error).
        assert "Exception in callback" not in central.log(), central.log()
    finally:
        if agent is not None:
            agent.stop()
        central.stop()


def test_enrolment_tokens_are_single_use_expire_and_die_with_their_agent(tmp_path: Path):
    central = central_in(tmp_path / "central")
    try:
        admin = admin_of(central)
        key = _a_key()
        used = admin.post("/api/agents/tunnel", json={"name": "once"}).json()
        first = httpx.post(
            f"{central.url}/api/enrol", json={"token": used["token"], "public_key": key}
        )
        assert first.status_code == 200, first.text
        assert first.json()["central_key"].startswith("ssh-ed25519 ")
        second = httpx.post(
            f"{central.url}/api/enrol", json={"token": used["token"], "public_key": key}
        )
        assert second.status_code == 401

        late = admin.post("/api/agents/tunnel", json={"name": "late"}).json()
        with sqlite3.connect(tmp_path / "central" / "data" / "stackyard.db") as db:
            db.execute(
                "UPDATE agents SET enrol_expires_at = '2020-01-01 00:00:00' WHERE id = ?",
                (late["agent"]["id"],),
            )
        expired = httpx.post(
            f"{central.url}/api/enrol", json={"token": late["token"], "public_key": key}
        )
        assert expired.status_code == 401

        revoked = admin.post("/api/agents/tunnel", json={"name": "revoked"}).json()
        assert admin.delete(f"/api/agents/{revoked['agent']['id']}").status_code == 204
        gone = httpx.post(
            f"{central.url}/api/enrol", json={"token": revoked["token"], "public_key": key}
        )
        assert gone.status_code == 401
        details = {r.json()["detail"] for r in (second, expired, gone)}
        assert details == {"The enrolment token is unknown, used or expired"}
        audit = admin.get("/api/audit", params={"limit": 50}).json()["items"]
        assert [e["action"] for e in audit].count("agent.enrol") == 1
    finally:
        central.stop()


def test_an_agent_dials_through_an_http_connect_proxy_and_rotates_its_key_mid_download(
    tmp_path: Path, docker_cleanup
):
    central = central_in(tmp_path / "central")
    agent = None
    with connect_proxy() as proxy:
        try:
            admin = admin_of(central)
            new = admin.post("/api/agents/tunnel", json={"name": "proxied"}).json()
            agent_id = new["agent"]["id"]
            agent = dial(tmp_path / "agent", central.url, new["token"], HTTPS_PROXY=proxy.url)
            view = connected(admin, agent_id)
            assert proxy.targets and all(t == central.url.split("//")[1] for t in proxy.targets)

            base = f"/api/agents/{agent_id}"
            stack = f"rot-{uuid.uuid4().hex[:6]}"
            folder = agent.folder / "stacks" / stack
            folder.mkdir(parents=True)
            (folder / "compose.yaml").write_text(compose_text(app=service(BUSYBOX)))
            blob = os.urandom(48 * 1024 * 1024)
            (folder / "blob").write_bytes(blob)
            digest = hashlib.sha256()
            rotated: list[dict] = []
            with admin.stream(
                "GET", f"{base}/files/download", params={"path": f"{stack}/blob"}, timeout=120
            ) as answer:
                assert answer.status_code == 200
                for n, chunk in enumerate(answer.iter_bytes(256 * 1024)):
                    digest.update(chunk)
                    if n == 2:  # mid-download
                        rotated.append(admin.post(f"{base}/rotate-key").json())
            assert digest.hexdigest() == hashlib.sha256(blob).hexdigest()
            assert rotated[0]["rotating"]
            after = connected(admin, agent_id, view["tunnel_since"])
            wait_until(
                lambda: not admin.get(f"/api/agents/{agent_id}").json()["rotating"],
                PATIENCE,
                "the new key taken",
            )
            newer = admin.get(f"/api/agents/{agent_id}").json()
            assert newer["key_fingerprint"] != view["key_fingerprint"]
            assert after["tunnel"] == "connected"
            assert admin.get(f"{base}/stacks").status_code == 200
        finally:
            if agent is not None:
                agent.stop()
            central.stop()


def _a_key() -> str:
    from stackyard.sshkeys import new_key_pair

    return new_key_pair("test")[1]
