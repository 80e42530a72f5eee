"""Every host capability on two real agents, each on its own Docker engine, through the
central's proxy: stacks with their progress, files with folder zips, backups moved from
one host to the other, roles and the audit log."""

from __future__ import annotations

import io
import os
import uuid
import zipfile
from pathlib import Path

import pytest

from tests.agents.helpers import add_agent
from tests.support.stacks import BUSYBOX, act, compose_text, service, wait_run
from tests.support.waiting import wait_until

SLEEPER = compose_text(app=service(BUSYBOX, command='["sleep", "3600"]'))


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def two_hosts(shared_engines, shared_agents, admin_client):
    """Two agents, each on an engine of its own (shared by the module's tests: each test
    names its stacks and files uniquely), known to this test's central."""
    one, two = shared_engines(2)
    first, second = shared_agents(one, name="alpha"), shared_agents(two, name="beta")
    a = add_agent(admin_client, first, "alpha")
    b = add_agent(admin_client, second, "beta")
    return (one, first, f"/api/agents/{a['id']}"), (two, second, f"/api/agents/{b['id']}")


def test_an_agent_is_added_with_its_version_capabilities_and_pinned_identity(
    two_hosts, admin_client, agent_kind
):
    (_, first, base), _ = two_hosts
    agent = admin_client.get(base).json()
    assert agent["kind"] == agent_kind
    if agent_kind == "direct":
        assert agent["fingerprint"] == first.fingerprint  # its certificate, pinned
    else:
        assert agent["key_fingerprint"].startswith("SHA256:")  # its SSH key, pinned
    assert agent["version"] and agent["compatible"] and agent["last_error"] is None
    assert {"stacks", "files", "backups", "shell", "logs", "fleet"} <= set(agent["capabilities"])
    listed = admin_client.get("/api/agents").json()
    assert [a["name"] for a in listed] == ["alpha", "beta"]
    assert all("token" not in a for a in listed)  # write-only


@pytest.mark.direct_only("a direct agent's URL and token, which a tunnel agent has not")
def test_an_agent_that_refuses_the_token_is_not_saved_nor_changed(two_hosts, admin_client):
    """Adding an agent (or changing its token) reaches it first: one that answers 401 to
    the token given is refused with why, and nothing is saved."""
    (_, first, base), _ = two_hosts
    wrong = {"name": "wrong", "url": first.url, "token": "x" * 40, "fingerprint": first.fingerprint}
    added = admin_client.post("/api/agents", json=wrong)
    assert added.status_code == 400, added.text
    assert "refused the token" in added.json()["detail"]
    assert "nothing was saved" in added.json()["detail"]
    assert [a["name"] for a in admin_client.get("/api/agents").json()] == ["alpha", "beta"]

    changed = admin_client.put(base, json={"name": "alpha", "url": first.url, "token": "y" * 40})
    assert changed.status_code == 400 and "refused the token" in changed.json()["detail"]
    assert admin_client.get(f"{base}/stacks").status_code == 200  # the saved token still works
    audit = admin_client.get("/api/audit").json()["items"]
    created = [(e["target"], e["outcome"]) for e in audit if e["action"] == "agent.create"]
    assert created[0] == ("wrong", "failure")


def test_lifecycle_on_each_host_runs_on_that_hosts_engine(two_hosts, admin_client):
    (one, _, base_one), (two, _, base_two) = two_hosts
    web = unique("web")
    created = admin_client.post(f"{base_one}/stacks", json={"name": web, "compose": SLEEPER})
    assert created.status_code == 201, created.text
    run = act(admin_client, web, "start", base=base_one)
    assert run["status"] == "succeeded", run
    assert run["progress"]["percent"] == 100

    project = {"label": f"com.docker.compose.project={web}"}
    running = one.client.containers.list(filters=project)
    assert [c.status for c in running] == ["running"]
    assert two.client.containers.list(all=True, filters=project) == []  # not on the other host
    assert web not in [s["id"] for s in admin_client.get(f"{base_two}/stacks").json()]

    stack = admin_client.get(f"{base_one}/stacks/{web}").json()
    assert stack["state"] == "running"
    events = admin_client.get(f"{base_one}/stacks/{web}/run/events")
    assert events.status_code == 200 and "event: end" in events.text

    assert act(admin_client, web, "stop", base=base_one)["status"] == "succeeded"
    assert one.client.containers.list(filters=project) == []
    assert admin_client.get(f"{base_one}/stacks/{web}").json()["state"] == "stopped"


def test_files_and_folder_zips_through_the_proxy(two_hosts, admin_client):
    (_, first, base), _ = two_hosts
    notes = unique("notes")  # (the agent is the module's: each kind's test runs on it)
    payload = bytes(range(256)) * 8192  # 2 MiB: several chunks each way
    put = admin_client.put(
        f"{base}/files/upload", params={"path": f"{notes}/data/blob.bin"}, content=payload
    )
    assert put.status_code == 201, put.text
    assert (first.stacks_dir / notes / "data" / "blob.bin").read_bytes() == payload
    again = admin_client.put(
        f"{base}/files/upload", params={"path": f"{notes}/data/blob.bin"}, content=b"x"
    )
    assert again.status_code == 409 and "Already exists" in again.json()["detail"]

    listed = admin_client.get(f"{base}/files", params={"path": f"{notes}/data"}).json()
    assert [entry["name"] for entry in listed["entries"]] == ["blob.bin"]

    download = admin_client.get(f"{base}/files/download", params={"path": notes})
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/zip"
    assert f"{notes}.zip" in download.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(download.content)) as archive:
        assert archive.read(f"{notes}/data/blob.bin") == payload

    missing = admin_client.get(f"{base}/files/download", params={"path": "nope"})
    assert missing.status_code == 404 and missing.json()["detail"]


@pytest.mark.direct_only(
    "archives to and from agents through a tunnel: tests/agents/test_backups.py (push, pull)"
)
def test_a_backup_made_on_one_host_restores_on_the_other_under_a_new_name(two_hosts, admin_client):
    (one, _, base_one), (two, second, base_two) = two_hosts
    shop = unique("shop")
    copy = f"{shop}-copy"
    compose = (
        compose_text(app=service(BUSYBOX, command='["sleep", "3600"]', volumes="[data:/data]"))
        + "volumes:\n  data: {}\n"
    )
    assert (
        admin_client.post(f"{base_one}/stacks", json={"name": shop, "compose": compose}).status_code
        == 201
    )
    assert act(admin_client, shop, "start", base=base_one)["status"] == "succeeded"
    container = one.client.containers.list(filters={"label": f"com.docker.compose.project={shop}"})[
        0
    ]
    container.exec_run(["sh", "-c", "echo precious > /data/file.txt"])
    # What only GNU tar keeps, set where the agent's engine keeps the volume.
    source = Path(one.client.volumes.get(f"{shop}_data").attrs["Mountpoint"]) / "file.txt"
    os.setxattr(source, "user.origin", b"host one")
    os.utime(source, ns=(0, 1_600_000_000_123_456_789))

    started = admin_client.post(f"{base_one}/stacks/{shop}/backups", json={})
    assert started.status_code == 202, started.text
    assert wait_run(admin_client, shop, base=base_one)["status"] == "succeeded"
    [archive] = [a for a in admin_client.get(f"{base_one}/backups").json() if a["stack_id"] == shop]

    downloaded = admin_client.get(f"{base_one}/backups/{archive['name']}/download")
    assert downloaded.status_code == 200 and len(downloaded.content) == archive["size"]
    uploaded = admin_client.put(f"{base_two}/backups/upload", content=downloaded.content)
    assert uploaded.status_code == 201, uploaded.text

    restore = admin_client.post(
        f"{base_two}/backups/{uploaded.json()['name']}/restore", json={"stack": copy}
    )
    assert restore.status_code == 202, restore.text
    assert wait_run(admin_client, copy, base=base_two)["status"] == "succeeded"
    assert (second.stacks_dir / copy / "compose.yaml").exists()
    volumes = [v.name for v in two.client.volumes.list()]
    assert f"{copy}_data" in volumes
    check = two.client.containers.run(
        BUSYBOX,
        ["cat", "/data/file.txt"],
        volumes={f"{copy}_data": {"bind": "/data"}},
        remove=True,
    )
    assert check == b"precious\n"
    copied = Path(two.client.volumes.get(f"{copy}_data").attrs["Mountpoint"]) / "file.txt"
    assert os.getxattr(copied, "user.origin") == b"host one"
    assert copied.stat().st_mtime_ns == 1_600_000_000_123_456_789
    manifest = admin_client.get(f"{base_two}/backups/{uploaded.json()['name']}").json()
    assert {a["fidelity"]["tool"] for a in manifest["assets"]} == {"gnu-tar"}

    # Each admin action on an agent is in the central's audit log, with the user and host;
    # the restore's outcome once the central saw it end on the agent.
    def seen() -> set:
        entries = admin_client.get("/api/audit", params={"limit": 100}).json()["items"]
        return {(e["actor"], e["action"], e["target"], e["outcome"]) for e in entries}

    restored = ("admin", "backup.restore", f"beta: {uploaded.json()['name']}")
    wait_until(lambda: (*restored, "success") in seen(), 30, "the restore's outcome audited")
    assert (*restored, "started") in seen()
    assert ("admin", "backup.download", f"alpha: {archive['name']}", "success") in seen()
    assert ("admin", "stack.create", f"alpha: {shop}", "success") in seen()


@pytest.mark.direct_only("the role is the central's to apply: the same through a tunnel")
def test_the_users_role_applies_on_the_agent(two_hosts, app, admin_client):
    from tests.support.service import client_with_role

    (_, first, base), _ = two_hosts
    viewer = client_with_role(app, admin_client, "victor", "viewer")
    assert viewer.get(f"{base}/stacks").status_code == 200
    refused = viewer.post(f"{base}/stacks", json={"name": "x", "compose": SLEEPER})
    assert refused.status_code == 403 and "admin" in refused.json()["detail"]
    assert viewer.get(f"{base}/files", params={"path": ""}).status_code == 403
    assert not (first.stacks_dir / "x").exists()
    assert viewer.post("/api/agents/1/test").status_code == 403
    assert viewer.delete(base).status_code == 403


@pytest.mark.direct_only(
    "the role is the central's to name; logs through a tunnel: tests/agents/test_containers.py"
)
def test_the_logs_of_a_failed_update_on_an_agent_follow_the_users_role(
    two_hosts, app, admin_client
):
    """The agent applies the role the central names: a viewer gets a failed update's
    outcome without what the failing image printed (null), an operator with it."""
    from datetime import UTC, datetime

    from stackyard.stacks.prefs import PrefsStore, UpdateOutcome
    from tests.support.service import client_with_role

    (_, first, base), _ = two_hosts
    web = unique("web")
    said = ("starting", "DB_PASSWORD=hunter2 refused")

    def failed(prefs) -> None:  # as the agent keeps it after a rollback
        prefs.last_update = UpdateOutcome(
            datetime.now(UTC), "rolled_back", "rolled back: web is unhealthy", None, said
        )

    PrefsStore(first.folder / "data" / "stack-prefs.json").change(web, failed)
    created = admin_client.post(f"{base}/stacks", json={"name": web, "compose": SLEEPER})
    assert created.status_code == 201, created.text

    def last_update(client) -> dict:
        answer = client.get(f"{base}/stacks/updates")
        assert answer.status_code == 200, answer.text
        return next(s for s in answer.json()["stacks"] if s["stack"] == web)["last_update"]

    operator = client_with_role(app, admin_client, "olga", "operator")
    assert last_update(operator)["logs"] == list(said)
    viewer = client_with_role(app, admin_client, "vera", "viewer")
    hidden = last_update(viewer)
    assert hidden["outcome"] == "rolled_back" and hidden["logs"] is None
    assert viewer.get(f"{base}/stacks/{web}/logs").status_code == 403


@pytest.mark.direct_only("an update through a tunnel: tests/agents/test_containers.py")
def test_the_update_summary_of_an_agent_lists_that_hosts_stacks(two_hosts, admin_client):
    (_, _, base_one), (_, _, base_two) = two_hosts
    web = unique("web")
    assert (
        admin_client.post(f"{base_one}/stacks", json={"name": web, "compose": SLEEPER}).status_code
        == 201
    )
    one = admin_client.get(f"{base_one}/stacks/updates")
    assert one.status_code == 200
    [line] = [s for s in one.json()["stacks"] if s["stack"] == web]
    assert line["has_update"] is False
    two = admin_client.get(f"{base_two}/stacks/updates").json()["stacks"]
    assert web not in [s["stack"] for s in two]
    assert admin_client.get("/api/stacks/updates").json()["stacks"] == []  # the central's own
