"""A push deploys exactly the stacks it changed, through the update's health gate, and
never overwrites what a user edited: against a real `git daemon`, the real engine and
the service in-process."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from tests.git.conftest import SICK, app_compose
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker


def add_repository(client, url: str, **settings) -> dict:
    answer = client.post(
        "/api/git/repositories", json={"name": "stacks", "url": url, "poll_seconds": 0, **settings}
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def add_stack(client, docker_cleanup, repo_id: str, name: str, path: str, **settings) -> dict:
    docker_cleanup.compose_project(name)
    answer = client.post(
        "/api/git/stacks",
        json={"name": name, "repository": repo_id, "path": path, **settings},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def running(docker_client, stack_id: str) -> tuple[str, str]:
    """(the id, the VERSION) of the stack's one container ("", "" while it has none:
    between a container and the one that replaces it)."""
    found = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={stack_id}"}
    )
    if not found:
        return "", ""
    (container,) = found
    env = dict(e.split("=", 1) for e in container.attrs["Config"]["Env"])
    return container.id, env["VERSION"]


def sync(client, repo_id: str) -> dict:
    answer = client.post(f"/api/git/repositories/{repo_id}/sync")
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.fixture
def monorepo(work, daemon, unique):
    """Three stacks in one repository (`stacks/a`, `b`, `c`), pushed."""
    for name in "abc":
        work.write(f"stacks/{name}/compose.yaml", app_compose(f"{name}1"))
    work.commit("three stacks")
    work.push()
    return daemon.url_for("stacks.git")


def test_a_push_redeploys_only_the_stack_whose_folder_changed(
    admin_client, docker_client, docker_cleanup, quick_gate, work, monorepo, unique
):
    repo = add_repository(admin_client, monorepo)
    stacks = {
        n: add_stack(admin_client, docker_cleanup, repo["id"], f"{n}-{unique}", f"stacks/{n}")
        for n in "abc"
    }
    for name, view in stacks.items():
        assert view["last_sync"]["outcome"] == "deployed", view
        assert running(docker_client, view["stack"])[1] == f"{name}1"
    before = {n: running(docker_client, v["stack"])[0] for n, v in stacks.items()}

    work.write("stacks/b/compose.yaml", app_compose("b2"))
    work.write("README.md", "not a stack\n")
    pushed = work.commit("b to 2")
    work.push()
    report = sync(admin_client, repo["id"])

    assert report["commit"] == pushed and report["error"] is None
    outcomes = {s: o["outcome"] for s, o in report["stacks"].items()}
    assert outcomes == {
        stacks["a"]["stack"]: "unchanged",
        stacks["b"]["stack"]: "deployed",
        stacks["c"]["stack"]: "unchanged",
    }
    assert running(docker_client, stacks["b"]["stack"])[1] == "b2"
    # The others were not touched: the same containers run.
    assert running(docker_client, stacks["a"]["stack"])[0] == before["a"]
    assert running(docker_client, stacks["c"]["stack"])[0] == before["c"]
    # Every stack now says the new commit, the changed one with its subject.
    for view in admin_client.get("/api/git/stacks").json():
        assert view["deployed"]["sha"] == pushed
    b = admin_client.get(f"/api/git/stacks/{stacks['b']['stack']}").json()
    assert b["deployed"]["subject"] == "b to 2" and not b["diverged"]


def test_a_webhook_syncs_on_its_ref_only_and_refuses_a_bad_signature(
    admin_client, client, docker_client, docker_cleanup, quick_gate, work, monorepo, unique
):
    repo = add_repository(admin_client, monorepo)
    view = add_stack(admin_client, docker_cleanup, repo["id"], f"a-{unique}", "stacks/a")
    hook = admin_client.post(f"/api/git/repositories/{repo['id']}/webhook").json()
    assert hook["path"] == f"/git/hooks/{repo['id']}" and len(hook["secret"]) >= 32
    # The secret is shown once: never in the repository's answer.
    assert hook["secret"] not in admin_client.get("/api/git/repositories").text
    url = f"/api{hook['path']}"

    def deliver(payload: dict, secret: str = hook["secret"], header="x-hub-signature-256"):
        body = json.dumps(payload).encode()
        mac = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        value = f"sha256={mac}" if header == "x-hub-signature-256" else mac
        return client.post(url, content=body, headers={header: value})

    work.write("stacks/a/compose.yaml", app_compose("a2"))
    work.commit("a to 2")
    work.push()
    # Nobody signed in: a wrong secret, none, or a forged GitLab token are all 401, alike.
    wrong = deliver({"ref": "refs/heads/main"}, secret="guess")
    unsigned = client.post(url, content=b'{"ref": "refs/heads/main"}')
    gitlab = client.post(url, content=b"{}", headers={"x-gitlab-token": "guess"})
    assert wrong.status_code == unsigned.status_code == gitlab.status_code == 401
    assert wrong.json() == unsigned.json() == gitlab.json()
    assert running(docker_client, view["stack"])[1] == "a1"
    # Another branch, and a delivery that is no push: answered, ignored.
    assert deliver({"ref": "refs/heads/feature"}).json() == {"sync": False}
    assert deliver({"zen": "Keep it logically awesome."}).json() == {"sync": False}
    # A push of main (signed as Gitea signs) deploys it.
    accepted = deliver({"ref": "refs/heads/main"}, header="x-gitea-signature")
    assert accepted.status_code == 202 and accepted.json() == {"sync": True}
    wait_until(lambda: running(docker_client, view["stack"])[1] == "a2", timeout=60)


def test_a_commit_that_fails_its_health_gate_rolls_back_to_the_previous_commits_files(
    admin_client, docker_client, docker_cleanup, quick_gate, work, monorepo, unique, stacks_dir
):
    repo = add_repository(admin_client, monorepo)
    view = add_stack(admin_client, docker_cleanup, repo["id"], f"a-{unique}", "stacks/a")
    good = view["deployed"]["sha"]

    work.write("stacks/a/compose.yaml", app_compose("a2", health=SICK))
    work.write("stacks/a/app.conf", "new setting\n")
    bad = work.commit("a sick")
    work.push()
    outcome = sync(admin_client, repo["id"])["stacks"][view["stack"]]

    assert outcome["outcome"] == "rolled_back", outcome
    assert "unhealthy" in outcome["detail"]
    # The previous commit's files and container run again; the new file is gone.
    folder = stacks_dir / view["stack"]
    assert json.loads((folder / "compose.yaml").read_text())["services"]["web"]["environment"] == {
        "VERSION": "a1"
    }
    assert not (folder / "app.conf").exists()
    assert running(docker_client, view["stack"])[1] == "a1"
    now = admin_client.get(f"/api/git/stacks/{view['stack']}").json()
    assert now["deployed"]["sha"] == good and now["pending"]["sha"] == bad
    # The failed commit is not tried again on its own; a newer one is.
    assert sync(admin_client, repo["id"])["stacks"][view["stack"]]["outcome"] == "rolled_back"
    assert running(docker_client, view["stack"])[1] == "a1"
    work.write("stacks/a/compose.yaml", app_compose("a3"))
    work.commit("a fixed")
    work.push()
    assert sync(admin_client, repo["id"])["stacks"][view["stack"]]["outcome"] == "deployed"
    assert running(docker_client, view["stack"])[1] == "a3"


def test_files_edited_here_are_never_overwritten_without_confirmation(
    admin_client, docker_client, docker_cleanup, quick_gate, work, monorepo, unique, stacks_dir
):
    repo = add_repository(admin_client, monorepo)
    view = add_stack(admin_client, docker_cleanup, repo["id"], f"a-{unique}", "stacks/a")
    stack = view["stack"]
    # Read-only in the editor by default, with a reason.
    refused = admin_client.put(f"/api/stacks/{stack}/compose", json={"content": app_compose("x")})
    assert refused.status_code == 403 and "comes from git" in refused.json()["detail"]
    # Someone edits the file on the host all the same.
    edited = app_compose("edited-here")
    (stacks_dir / stack / "compose.yaml").write_text(edited)
    assert admin_client.get(f"/api/git/stacks/{stack}").json()["edited"] == ["compose.yaml"]

    work.write("stacks/a/compose.yaml", app_compose("a2"))
    pushed = work.commit("a to 2")
    work.push()
    outcome = sync(admin_client, repo["id"])["stacks"][stack]
    assert outcome["outcome"] == "diverged" and "compose.yaml" in outcome["detail"]
    assert (stacks_dir / stack / "compose.yaml").read_text() == edited

    preview = admin_client.get(f"/api/git/stacks/{stack}/preview").json()
    assert preview["commit"]["sha"] == pushed and preview["overwrites"] == ["compose.yaml"]
    (change,) = preview["changes"]
    assert change["path"] == "compose.yaml"
    assert '-        "VERSION": "edited-here"\n+        "VERSION": "a2"\n' in change["diff"]
    apply = {"commit": pushed}
    refused = admin_client.post(f"/api/git/stacks/{stack}/apply", json=apply)
    assert refused.status_code == 409 and "edited here" in refused.json()["detail"]
    assert (stacks_dir / stack / "compose.yaml").read_text() == edited

    done = admin_client.post(f"/api/git/stacks/{stack}/apply", json={**apply, "overwrite": True})
    assert done.status_code == 200 and done.json()["outcome"] == "deployed", done.text
    assert running(docker_client, stack)[1] == "a2"
    (kept,) = (stacks_dir / ".trash").glob(f"{stack}-edits-*/compose.yaml")
    assert kept.read_text() == edited


def test_a_notify_stack_waits_for_review_and_the_git_server_down_changes_nothing(
    admin_client, docker_client, docker_cleanup, quick_gate, work, monorepo, daemon, unique
):
    repo = add_repository(admin_client, monorepo)
    view = add_stack(
        admin_client, docker_cleanup, repo["id"], f"a-{unique}", "stacks/a", policy="notify"
    )
    stack = view["stack"]
    work.write("stacks/a/compose.yaml", app_compose("a2"))
    pushed = work.commit("a to 2")
    work.push()
    assert sync(admin_client, repo["id"])["stacks"][stack]["outcome"] == "pending"
    assert running(docker_client, stack)[1] == "a1"
    shown = admin_client.get(f"/api/git/stacks/{stack}").json()
    assert shown["pending"]["sha"] == pushed and shown["pending"]["subject"] == "a to 2"

    daemon.stop()
    report = sync(admin_client, repo["id"])
    assert report["commit"] is None and "cannot be reached" in report["error"]
    assert "keep running" in report["error"]
    assert running(docker_client, stack)[1] == "a1"
    failed = admin_client.get("/api/git/repositories").json()[0]["last_fetch"]
    assert failed["commit"] is None and failed["error"] == report["error"]

    # Applied from what was fetched before, with the server still down.
    done = admin_client.post(f"/api/git/stacks/{stack}/apply", json={"commit": pushed})
    assert done.status_code == 200 and done.json()["outcome"] == "deployed", done.text
    assert running(docker_client, stack)[1] == "a2"
    daemon.start()


def test_relative_binds_of_a_git_stack_resolve_in_its_folder_on_the_host(
    admin_client, docker_client, docker_cleanup, quick_gate, work, daemon, unique
):
    work.write(
        "app/compose.yaml",
        app_compose("1", volumes=["./config:/config:ro"]),
    )
    work.write("app/config/app.conf", "from git\n")
    work.write("app/.env", "GREETING=hello\nTOKEN=change-me\n")
    work.commit("app")
    work.push()
    repo = add_repository(admin_client, daemon.url_for("stacks.git"))
    view = add_stack(admin_client, docker_cleanup, repo["id"], f"app-{unique}", "app")
    (container,) = docker_client.containers.list(
        filters={"label": f"com.docker.compose.project={view['stack']}"}
    )
    code, out = container.exec_run(["cat", "/config/app.conf"])
    assert code == 0 and out == b"from git\n"
    # The host's .env keeps its own values over the repository's template.
    env = admin_client.get(f"/api/stacks/{view['stack']}").json()["env"]
    assert "GREETING=hello" in env and "TOKEN=change-me" in env
