"""Who may do what with backups, what is audited, and bad choices refused up front."""

from __future__ import annotations

import re
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.backups.crafted import entry, v2_archive
from tests.support.service import STACKYARD_BIN, service_env
from tests.support.stacks import compose_text, service, start_restore, wait_run

pytestmark = pytest.mark.docker

COMPOSE = compose_text(app=service(volumes="['db:/db']")) + "volumes:\n  db:\n"


@pytest.fixture
def stack(make_stack) -> str:
    return make_stack("api", COMPOSE)


def test_roles_and_audit(admin_client, user_client, viewer_client, stack):
    assert viewer_client.get(f"/api/stacks/{stack}/backup/inventory").status_code == 403
    assert viewer_client.post(f"/api/stacks/{stack}/backups", json={}).status_code == 403
    assert viewer_client.get("/api/backups").status_code == 403

    assert user_client.get(f"/api/stacks/{stack}/backup/inventory").status_code == 200
    assert user_client.post(f"/api/stacks/{stack}/backups", json={}).status_code == 202
    assert wait_run(user_client, stack)["status"] == "succeeded"
    (archive,) = user_client.get("/api/backups").json()
    name = archive["name"]
    assert user_client.post(f"/api/backups/{name}/verify").json()["ok"] is True
    for method, path in [
        ("GET", f"/api/backups/{name}/download"),
        ("POST", f"/api/backups/{name}/restore"),
        ("DELETE", f"/api/backups/{name}"),
        ("PUT", "/api/backups/upload"),
    ]:
        refused = user_client.request(method, path, json={} if method == "POST" else None)
        assert refused.status_code == 403, (method, path, refused.text)

    download = admin_client.get(f"/api/backups/{name}/download")
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/x-tar"
    assert len(download.content) == archive["size"]
    assert admin_client.delete(f"/api/backups/{name}").status_code == 204
    assert admin_client.get("/api/backups").json() == []

    audit = [
        (e["actor"], e["action"], e["target"], e["outcome"])
        for e in admin_client.get("/api/audit").json()["items"]
    ]
    # The backup: that it started (when it was accepted), and its outcome (when it ended).
    assert [e for e in audit if e[1] == "backup.create"] == [
        ("alice", "backup.create", stack, "success"),
        ("alice", "backup.create", stack, "started"),
    ]
    assert ("admin", "backup.download", name, "success") in audit
    assert ("admin", "backup.delete", name, "success") in audit


def test_a_choice_of_unknown_assets_is_refused_before_anything_runs(admin_client, stack):
    refused = admin_client.post(f"/api/stacks/{stack}/backups", json={"volumes": ["nope"]})
    assert refused.status_code == 400 and "nope" in refused.json()["detail"]
    assert admin_client.get(f"/api/stacks/{stack}/run").json() is None  # nothing ran
    assert admin_client.get("/api/backups").json() == []
    missing = admin_client.post("/api/backups/no-such.tar/restore", json={})
    assert missing.status_code == 404
    bad_name = admin_client.get("/api/backups/..%2Fsecret_key/download")
    assert bad_name.status_code in (400, 404)


def test_archives_of_the_same_stack_never_overwrite_each_other(admin_client, stack, tmp_path):
    """Two hosts with a stack of the same name, and the same archive uploaded twice:
    the second time is asked about (409, nothing kept) and, asked to keep both, kept
    under a name of its own."""
    assert admin_client.post(f"/api/stacks/{stack}/backups", json={}).status_code == 202
    assert wait_run(admin_client, stack)["status"] == "succeeded"
    elsewhere = v2_archive(tmp_path / "other.tar", stack, [entry("data/f", data=b"1")])

    def upload(**params: bool):
        return admin_client.put(
            "/api/backups/upload",
            params=params,
            content=elsewhere.read_bytes(),
            headers={"Content-Type": "application/x-tar"},
        )

    first = upload()
    assert first.status_code == 201, first.text
    again = upload()
    assert again.status_code == 409 and "already on this host" in again.json()["detail"]
    assert len(admin_client.get("/api/backups").json()) == 2  # nothing more kept
    kept = Path(admin_client.app.state.settings.data_dir) / "backups"
    assert not [p for p in kept.iterdir() if p.name.startswith(".")]  # no temporary left
    both = upload(keep_both=True)
    assert both.status_code == 201, both.text
    names = [first.json()["name"], both.json()["name"]]
    listed = {a["name"]: a["host"] for a in admin_client.get("/api/backups").json()}
    assert len(listed) == 3 and set(names) <= set(listed)
    hosts = list(listed.values())
    assert hosts.count("crafted") == 2 and len(set(hosts)) == 2  # and this host's own
    assert names[0].startswith(f"{stack}--crafted--") and names[1] == names[0].replace(
        ".tar", "-2.tar"
    )


def cli(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STACKYARD_BIN), "backup", *args],
        env=service_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_backups_from_the_command_line(tmp_path, stack, stacks_dir, docker_cleanup):
    made = cli(tmp_path, "create", stack)
    assert made.returncode == 0, made.stderr
    assert "backup" in made.stderr and "━" in made.stderr  # drawn with the progress bar
    listed = cli(tmp_path, "list")
    (line,) = listed.stdout.splitlines()
    name = line.split("\t")[0]
    assert f"\t{stack}\t" in line and "\tv2\t" in line
    checked = cli(tmp_path, "verify", name)
    assert checked.returncode == 0 and checked.stdout.strip().endswith(f"{name}: ok")
    again = cli(tmp_path, "restore", name)
    assert again.returncode == 1 and "needs overwrite" in again.stderr
    clone = f"{stack}-cli-{uuid.uuid4().hex[:4]}"
    docker_cleanup.compose_project(clone)
    restored = cli(tmp_path, "restore", name, "--as", clone)
    assert restored.returncode == 0, restored.stderr
    assert (stacks_dir / clone / "compose.yaml").read_text() == COMPOSE


BINDS = (
    compose_text(app=service(volumes="['db:/db', './data:/data', './conf:/conf']"))
    + "volumes:\n  db:\n"
)


def test_sizes_and_counters_say_what_they_count(admin_client, make_stack, stacks_dir, monkeypatch):
    """A backup's counter is the data read of the data to read, its last line the
    archive's (compressed) size beside it; a restore's counter counts the volumes and
    folders it writes, never the stack folder with them (it said "3 of 2")."""
    from stackyard.compose.progress import ProgressFold

    counted: list[tuple[int, int, str]] = []
    advance = ProgressFold.advance

    def recorded(self, bytes_done, bytes_total, items_done, items_total, stage=""):
        counted.append((items_done, items_total, stage))
        advance(self, bytes_done, bytes_total, items_done, items_total, stage)

    monkeypatch.setattr(ProgressFold, "advance", recorded)
    stack = make_stack("sizes", BINDS)
    for folder in ("data", "conf"):
        (stacks_dir / stack / folder).mkdir()
        (stacks_dir / stack / folder / "file").write_text(folder * 1000)

    assert admin_client.post(f"/api/stacks/{stack}/backups", json={}).status_code == 202
    run = wait_run(admin_client, stack)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert {stage for _, _, stage in counted} <= {"Reading the data", "Data read"}
    assert run["progress"]["stage"] == "Data read"
    last = run["progress"]["lines"][-1]["text"]
    assert re.fullmatch(
        r"Archive \S+: [\d.]+ (B|kB|MB) compressed, from [\d.]+ (B|kB|MB) of data, checked "
        r"\(\d+ volumes and binds captured\)",
        last,
    ), last

    counted.clear()
    (archive,) = [a for a in admin_client.get("/api/backups").json() if a["stack_id"] == stack]
    started = start_restore(admin_client, archive["name"], overwrite=True)
    assert started.status_code == 202, started.text
    run = wait_run(admin_client, stack)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert counted and all(done <= total for done, total, _ in counted), counted
    assert run["progress"]["layers_done"] == run["progress"]["layers_total"]
