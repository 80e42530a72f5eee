"""Stacks from git on an agent: the agent fetches (its host reaches the git server, here
on loopback), deploys on its own engine and keeps its own repositories; the central only
configures and shows, through its proxy. A real `stackyard agent` process on a Docker
engine of its own, a real git server behind Basic auth (`git http-backend`)."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets

import pytest

from tests.agents.helpers import add_agent
from tests.git.conftest import app_compose
from tests.git.test_sync import running
from tests.support.git_servers import git_http
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker


def test_a_git_stack_on_an_agent_is_fetched_and_deployed_there_and_redeployed_only_when_changed(
    admin_client, client, docker_client, docker_engines, agent_processes, work, git_root, unique
):
    token = f"tok-{secrets.token_hex(16)}"
    work.write("stacks/a/compose.yaml", app_compose("a1"))
    work.write("stacks/b/compose.yaml", app_compose("b1"))
    work.commit("two stacks")
    work.push()
    (engine,) = docker_engines(1)
    agent = agent_processes(engine)
    base = f"/api/agents/{add_agent(admin_client, agent, 'remote')['id']}"
    answers: list[str] = []  # every answer that came through the proxy

    def call(method: str, path: str, expected: int, **kwargs) -> dict:
        answer = admin_client.request(method, f"{base}{path}", **kwargs)
        assert answer.status_code == expected, answer.text
        answers.append(answer.text)
        return answer.json() if answer.content else {}

    call("PUT", "/stacks/update-policy", 204, json={"health_timeout": 20, "settle": 2})
    with git_http(git_root, "deploy", token) as server:
        url = server.url_for("stacks.git")
        repo = call(
            "POST",
            "/git/repositories",
            201,
            json={
                "name": "stacks",
                "url": url,
                "poll_seconds": 0,
                "auth": "token",
                "username": "deploy",
                "token": token,
            },
        )
        assert repo["has_token"] is True
        view = call(
            "POST",
            "/git/stacks",
            201,
            json={"name": f"a-{unique}", "repository": repo["id"], "path": "stacks/a"},
        )
        stack = view["stack"]
        assert view["last_sync"]["outcome"] == "deployed", view
        # On the agent's engine with the commit's environment; nothing on the central's.
        first, version = running(engine.client, stack)
        assert version == "a1"
        assert running(docker_client, stack) == ("", "")
        # The agent fetched it (its requests signed in as the token's user).
        assert any(line.endswith(" deploy") for line in server.requests())

        # The central keeps none of the agent's: each host has its own repositories.
        assert admin_client.get("/api/git/repositories").json() == []
        assert admin_client.get("/api/git/stacks").json() == []
        assert [r["id"] for r in call("GET", "/git/repositories", 200)] == [repo["id"]]

        # A push that changes the other stack's folder only: this one is left alone.
        work.write("stacks/b/compose.yaml", app_compose("b2"))
        other = work.commit("b to 2")
        work.push()
        report = call("POST", f"/git/repositories/{repo['id']}/sync", 200)
        assert report["commit"] == other and report["error"] is None
        assert report["stacks"][stack]["outcome"] == "unchanged"
        assert running(engine.client, stack) == (first, "a1")

        # A push that changes its folder: deployed there.
        work.write("stacks/a/compose.yaml", app_compose("a2"))
        pushed = work.commit("a to 2")
        work.push()
        report = call("POST", f"/git/repositories/{repo['id']}/sync", 200)
        assert report["stacks"][stack]["outcome"] == "deployed", report
        now, version = running(engine.client, stack)
        assert version == "a2" and now != first
        assert running(docker_client, stack) == ("", "")
        shown = call("GET", f"/git/stacks/{stack}", 200)
        assert shown["deployed"]["sha"] == pushed and shown["deployed"]["subject"] == "a to 2"

        # A push webhook for the agent's repository reaches the central, which passes it on.
        hook = call("POST", f"/git/repositories/{repo['id']}/webhook", 200)
        agent_id = base.rsplit("/", 1)[1]
        assert hook["path"] == f"/git/hooks/agents/{{agent}}/{repo['id']}"
        url = "/api" + hook["path"].replace("{agent}", agent_id)
        body = json.dumps({"ref": "refs/heads/main"}).encode()
        mac = hmac.new(hook["secret"].encode(), body, hashlib.sha256).hexdigest()
        forged = client.post(url, content=body, headers={"X-Hub-Signature-256": "sha256=00"})
        assert forged.status_code == 401, forged.text
        work.write("stacks/a/compose.yaml", app_compose("a3"))
        work.commit("a to 3")
        work.push()
        delivered = client.post(url, content=body, headers={"X-Hub-Signature-256": f"sha256={mac}"})
        assert delivered.status_code == 202 and delivered.json() == {"sync": True}
        wait_until(lambda: running(engine.client, stack)[1] == "a3", timeout=60)
        requests = "\n".join(server.requests())

    call("GET", "/git/stacks", 200)
    answers.append(admin_client.get("/api/audit").text)
    assert token not in "".join(answers)
    assert token not in requests  # sent as Basic auth, never in a URL
    assert token not in agent.server.log()
