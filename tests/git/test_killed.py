"""A deploy from git the service is killed in (SIGKILL, in the health gate, the new
commit's files written): the next start puts the previous commit's files and containers
back, and the stack still says the commit it runs."""

from __future__ import annotations

import hashlib
import hmac
import json

import httpx
import pytest

from tests.git.conftest import app_compose
from tests.git.test_sync import running
from tests.support.service import ADMIN_PASSWORD, service_env, sign_in, start_server
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker


def test_a_deploy_killed_in_its_gate_is_undone_at_the_next_start(
    tmp_path, work, daemon, docker_client, docker_cleanup
):
    work.write("app/compose.yaml", app_compose("1"))
    first = work.commit("app 1")
    work.push()
    stack = "killed-git"
    docker_cleanup.compose_project(stack)
    folder = tmp_path / "stacks" / stack
    env = service_env(tmp_path)
    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            # A long gate: a service without a healthcheck must run 120 s to count as up.
            policy = {"settle": 120, "health_timeout": 300}
            client.put("/api/stacks/update-policy", json=policy).raise_for_status()
            repo = client.post(
                "/api/git/repositories",
                json={"name": "r", "url": daemon.url_for("stacks.git"), "poll_seconds": 0},
            ).json()
            created = client.post(
                "/api/git/stacks", json={"name": stack, "repository": repo["id"], "path": "app"}
            )
            assert created.json()["deployed"]["sha"] == first, created.text
            secret = client.post(f"/api/git/repositories/{repo['id']}/webhook").json()["secret"]

            work.write("app/compose.yaml", app_compose("2", health={"disable": True}))
            work.write("app/app.conf", "new\n")
            work.commit("app 2")
            work.push()
            body = json.dumps({"ref": "refs/heads/main"}).encode()
            mac = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
            hook = client.post(
                f"/api/git/hooks/{repo['id']}",
                content=body,
                headers={"X-Hub-Signature-256": f"sha256={mac}"},
            )
            assert hook.json() == {"sync": True}

            def gating() -> bool:  # (the run of "app 2", not the first deploy's)
                lines = client.get(f"/api/stacks/{stack}/run").json()["progress"]["lines"]
                texts = [line["text"] for line in lines]
                return "(app 2)" in texts[0] and any(t.startswith("Waiting for web") for t in texts)

            wait_until(gating, 120, "the deploy's health gate")
        server.process.kill()
        server.process.wait()
    finally:
        server.stop()
    assert (folder / "app.conf").exists(), list(folder.iterdir())
    assert running(docker_client, stack)[1] == "2"

    again = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=again.url, timeout=60) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)

            def undone() -> dict | None:
                run = client.get(f"/api/stacks/{stack}/run").json()
                said = any("going back" in line["text"] for line in run["progress"]["lines"])
                return run if said and run["status"] == "interrupted" else None

            wait_until(undone, 120, "the interrupted deploy undone")
            view = client.get(f"/api/git/stacks/{stack}").json()
    finally:
        again.stop()
    assert not (folder / "app.conf").exists()
    assert json.loads((folder / "compose.yaml").read_text())["services"]["web"]["environment"] == {
        "VERSION": "1"
    }
    assert running(docker_client, stack)[1] == "1"
    assert view["deployed"]["sha"] == first and not view["diverged"]
    journal = tmp_path / "data" / "journal.json"
    assert not journal.exists() or journal.read_text().strip() in ("{}", "")
    assert not list((tmp_path / "data" / "git").glob("scratch/*"))
