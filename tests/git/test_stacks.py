"""A git stack's life besides its syncs: adopted from a running stack after its diff was
shown, synced by the poll, its news on the host's events, its files read-only everywhere
they can be edited, detached and deleted."""

from __future__ import annotations

import pytest

from tests.git.conftest import app_compose
from tests.git.test_sync import add_repository, add_stack, running, sync
from tests.support.stacks import act
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker


@pytest.fixture
def app_repository(admin_client, work, daemon) -> dict:
    """A repository whose folder `app` holds a one-service stack (version 1), pushed."""

    def made(**settings) -> dict:
        work.write("app/compose.yaml", app_compose("1"))
        work.commit("app")
        work.push()
        return add_repository(admin_client, daemon.url_for("stacks.git"), **settings)

    return made


def test_a_running_stack_is_adopted_after_its_diff_is_shown(
    app, admin_client, docker_client, make_stack, quick_gate, work, daemon, stacks_dir
):
    stack = make_stack("adopted", app_compose("here"), env="TOKEN=kept-here\n")
    (stacks_dir / stack / "local.conf").write_text("only here\n")
    assert act(admin_client, stack, "start")["status"] == "succeeded"
    work.write("svc/compose.yaml", app_compose("git"))
    work.write("svc/.env", "TOKEN=from-git\nEXTRA=1\n")
    pushed = work.commit("svc")
    work.push()
    repo = add_repository(admin_client, daemon.url_for("stacks.git"))
    body = {"repository": repo["id"], "path": "svc"}

    preview = admin_client.post(f"/api/git/stacks/{stack}/adoption", json=body).json()
    assert preview["commit"]["sha"] == pushed
    changes = {c["path"]: c for c in preview["changes"]}
    assert set(changes) == {"compose.yaml", ".env"}
    assert '+        "VERSION": "git"' in changes["compose.yaml"]["diff"]
    # Nothing changed by the preview.
    assert running(docker_client, stack)[1] == "here"
    assert admin_client.get(f"/api/git/stacks/{stack}").json() is None

    stale = admin_client.post(f"/api/git/stacks/{stack}/adopt", json={**body, "commit": "0" * 40})
    assert stale.status_code == 409
    adopted = admin_client.post(f"/api/git/stacks/{stack}/adopt", json={**body, "commit": pushed})
    assert adopted.status_code == 200, adopted.text
    assert adopted.json()["deployed"]["sha"] == pushed
    assert running(docker_client, stack)[1] == "git"
    # The host's values win over the repository's template; its own files stay.
    env = (stacks_dir / stack / ".env").read_text()
    assert "TOKEN=kept-here" in env and "EXTRA=1" in env and "TOKEN=from-git" not in env
    assert (stacks_dir / stack / "local.conf").read_text() == "only here\n"


def test_the_poll_deploys_a_push_and_the_news_is_raised_on_the_hosts_events(
    app, admin_client, docker_client, docker_cleanup, quick_gate, work, app_repository, unique
):
    heard = []
    app.state.services.machine.events.listen(heard.append)
    repo = app_repository(poll_seconds=10)
    view = add_stack(admin_client, docker_cleanup, repo["id"], f"app-{unique}", "app")
    work.write("app/compose.yaml", app_compose("2"))
    work.commit("app 2")
    work.push()
    # Within the interval and the poll's tick: no one asked.
    wait_until(lambda: running(docker_client, view["stack"])[1] == "2", timeout=60)
    wait_until(lambda: len([e for e in heard if e.name == "git_deployed"]) >= 2, timeout=30)
    deployed = [e for e in heard if e.name == "git_deployed"]
    assert all(e.stack == view["stack"] for e in deployed)
    assert "(app 2)" in deployed[-1].text
    last = admin_client.get(f"/api/git/stacks/{view['stack']}").json()["last_sync"]
    assert last["outcome"] == "deployed" and last["by"] == "poll"
    # A deploy no one asked for is in the audit log, by the poll.
    entries = admin_client.get("/api/audit").json()["items"]
    polled = [e for e in entries if e["action"] == "git.apply" and e["target"] == view["stack"]]
    assert polled and polled[0]["actor"] == "git (poll)" and polled[0]["outcome"] == "success"
    assert "(app 2)" in polled[0]["detail"]


def test_a_git_stacks_files_are_read_only_until_local_edits_are_allowed(
    admin_client, docker_cleanup, quick_gate, app_repository, unique, stacks_dir
):
    repo = app_repository()
    stack = add_stack(admin_client, docker_cleanup, repo["id"], f"app-{unique}", "app")["stack"]
    compose = app_compose("edited")
    by_page = admin_client.put(f"/api/stacks/{stack}/compose", json={"content": compose})
    by_browser = admin_client.put(
        "/api/files/content", json={"path": f"{stack}/compose.yaml", "content": compose}
    )
    assert by_page.status_code == 403, by_page.text
    assert by_browser.status_code == 403, by_browser.text
    assert "comes from git" in by_browser.json()["detail"]
    uploaded = admin_client.put(
        "/api/files/upload", params={"path": f"{stack}/extra.conf"}, content=b"x"
    )
    removed = admin_client.delete("/api/files", params={"path": f"{stack}/compose.yaml"})
    moved = admin_client.post(
        "/api/files/move", json={"source": stack, "destination": f"moved-{unique}"}
    )
    assert uploaded.status_code == removed.status_code == moved.status_code == 403
    assert sorted(p.name for p in (stacks_dir / stack).iterdir()) == ["compose.yaml"]
    assert admin_client.get(f"/api/git/stacks/{stack}").json()["ref"] == "main"
    # Its .env and .secrets are the host's own: always editable.
    secrets = admin_client.put(f"/api/stacks/{stack}/secrets", json={"content": "S=1\n"})
    assert secrets.status_code == 204, secrets.text
    env = admin_client.put(f"/api/stacks/{stack}/env", json={"content": "HOST=here\n"})
    assert env.status_code == 200, env.text
    assert admin_client.get(f"/api/git/stacks/{stack}").json()["edited"] == []

    allowed = admin_client.patch(f"/api/git/stacks/{stack}", json={"local_edits": True})
    assert allowed.status_code == 200 and allowed.json()["local_edits"] is True
    saved = admin_client.put(f"/api/stacks/{stack}/compose", json={"content": compose})
    assert saved.status_code == 200, saved.text
    assert admin_client.get(f"/api/git/stacks/{stack}").json()["edited"] == ["compose.yaml"]


def test_a_detached_or_deleted_stack_is_no_longer_from_git(
    admin_client, docker_cleanup, quick_gate, app_repository, unique, stacks_dir
):
    repo = app_repository()
    first = add_stack(admin_client, docker_cleanup, repo["id"], f"one-{unique}", "app")["stack"]
    second = add_stack(admin_client, docker_cleanup, repo["id"], f"two-{unique}", "app")["stack"]
    in_use = admin_client.delete(f"/api/git/repositories/{repo['id']}")
    assert in_use.status_code == 409 and first in in_use.json()["detail"]

    assert admin_client.delete(f"/api/git/stacks/{first}").status_code == 204
    assert admin_client.get(f"/api/git/stacks/{first}").json() is None
    assert (stacks_dir / first / "compose.yaml").exists()  # its files stay, editable
    saved = admin_client.put(f"/api/stacks/{first}/compose", json={"content": app_compose("x")})
    assert saved.status_code == 200

    deleted = admin_client.delete(f"/api/stacks/{second}", params={"confirm": second})
    assert deleted.status_code == 200, deleted.text
    assert [s["stack"] for s in admin_client.get("/api/git/stacks").json()] == []
    assert sync(admin_client, repo["id"])["stacks"] == {}
    assert admin_client.delete(f"/api/git/repositories/{repo['id']}").status_code == 204


def test_a_stack_whose_policy_is_off_is_never_synced(
    admin_client, docker_client, docker_cleanup, quick_gate, work, app_repository, unique
):
    repo = app_repository()
    stack = add_stack(admin_client, docker_cleanup, repo["id"], f"app-{unique}", "app")["stack"]
    off = admin_client.patch(f"/api/git/stacks/{stack}", json={"policy": "off"})
    assert off.status_code == 200 and off.json()["policy"] == "off"
    work.write("app/compose.yaml", app_compose("2"))
    work.commit("app 2")
    work.push()
    report = sync(admin_client, repo["id"])
    assert report["error"] is None and report["stacks"] == {}
    assert running(docker_client, stack)[1] == "1"
    view = admin_client.get(f"/api/git/stacks/{stack}").json()
    assert view["pending"] is None and view["deployed"]["subject"] == "app"
