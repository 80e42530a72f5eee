"""Around the data: a running stack is stopped for the copy and started again, a stopped
one stays stopped; hooks run before and after; and every failure (a hook, a helper
killed mid-capture, a full disk) leaves the stack as it was and no file behind."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import uuid
from pathlib import Path
from typing import ClassVar

import docker
import httpx
import pytest

from stackyard.docker.helper import Helpers
from stackyard.stacks.runs import OUTPUT_HIDDEN
from tests.backups.trees import helper, snapshot
from tests.support.interrupted import attention
from tests.support.service import (
    ADMIN_PASSWORD,
    STACKYARD_BIN,
    service_env,
    sign_in,
    start_server,
)
from tests.support.stacks import compose, start_restore, wait_run
from tests.support.waiting import PATIENCE, wait_until

pytestmark = pytest.mark.docker

DUMP = "echo dumped-$$(date +%s) > /var/lib/db/dump.sql"
COMPOSE = """services:
  db:
    image: stackyard-test/busybox:1
    restart: always
    labels:
      stackyard.test: stack
      stackyard.backup.pre: "{pre}"
      stackyard.backup.post: "echo post-ran > /var/lib/db/post.txt"
    volumes:
      - db:/var/lib/db
  web:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
volumes:
  db:
"""


def make(stacks_dir: Path, docker_cleanup, pre: str = DUMP, up: bool = True) -> str:
    stack_id = f"around-{uuid.uuid4().hex[:6]}"
    (stacks_dir / stack_id).mkdir()
    (stacks_dir / stack_id / "compose.yaml").write_text(COMPOSE.format(pre=pre))
    docker_cleanup.compose_project(stack_id)
    compose(stacks_dir, stack_id, "up" if up else "create", *(["-d"] if up else []))
    return stack_id


def states(client: docker.DockerClient, stack_id: str) -> dict[str, tuple[str, str]]:
    """Per container: its state and when it last started."""
    found = client.containers.list(
        all=True, filters={"label": f"com.docker.compose.project={stack_id}"}
    )
    return {c.name: (c.status, c.attrs["State"]["StartedAt"]) for c in found}


def leftovers(app) -> list[str]:
    folder = Path(app.state.settings.data_dir) / "backups"
    if not folder.exists():
        return []
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def use_helpers(app, monkeypatch, kind: type[Helpers]) -> None:
    """The service's helpers made of `kind` (the real ones, with a twist) for the test."""
    machine = app.state.services.backups.machine
    real = machine.helpers()
    monkeypatch.setattr(machine, "helpers", lambda: kind(real.client, real.image, real.owner))


def back_up(client, stack_id: str) -> dict:
    assert client.post(f"/api/stacks/{stack_id}/backups", json={}).status_code == 202
    return wait_run(client, stack_id)


class WatchingHelpers(Helpers):
    """The real helpers, noting the states of the stack's containers while they copy."""

    project: ClassVar[str] = ""
    seen: ClassVar[set[str]] = set()

    def stream_output(self, mounts, command, what):
        label = f"com.docker.compose.project={self.project}"
        for chunk in super().stream_output(mounts, command, what):
            found = self.client.containers.list(all=True, filters={"label": label})
            WatchingHelpers.seen |= {c.status for c in found}
            yield chunk


def test_a_running_stack_is_stopped_for_the_copy_and_started_again(
    admin_client, app, stacks_dir, docker_cleanup, docker_client, monkeypatch
):
    stack_id = make(stacks_dir, docker_cleanup)
    before = states(docker_client, stack_id)
    monkeypatch.setattr(WatchingHelpers, "project", stack_id)
    monkeypatch.setattr(WatchingHelpers, "seen", set())
    use_helpers(app, monkeypatch, WatchingHelpers)
    run = back_up(admin_client, stack_id)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    # Stopped all the while, the one with `restart: always` too.
    assert WatchingHelpers.seen == {"exited"}
    after = states(docker_client, stack_id)
    assert {n: s for n, (s, _) in after.items()} == {n: "running" for n in before}
    assert all(after[n][1] != before[n][1] for n in before)  # stopped, then started again
    lines = [ln["text"] for ln in run["progress"]["lines"]]
    assert "Stopping the stack for a consistent copy" in lines
    # The pre hook ran before the copy (its dump is in the archive), the post hook after.
    assert helper("volume", f"{stack_id}_db", "cat /data/post.txt") == "post-ran\n"
    name = admin_client.get("/api/backups").json()[0]["name"]
    restored = start_restore(admin_client, name, stack=f"{stack_id}-c")
    assert restored.status_code == 202
    docker_cleanup.compose_project(f"{stack_id}-c")
    assert wait_run(admin_client, f"{stack_id}-c")["status"] == "succeeded"
    assert helper("volume", f"{stack_id}-c_db", "cat /data/dump.sql").startswith("dumped-")
    assert leftovers(app) == []


def test_a_stopped_stack_stays_stopped(admin_client, stacks_dir, docker_cleanup, docker_client):
    stack_id = make(stacks_dir, docker_cleanup, up=False)
    run = back_up(admin_client, stack_id)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert {s for s, _ in states(docker_client, stack_id).values()} == {"created"}
    lines = [ln["text"] for ln in run["progress"]["lines"]]
    assert "The stack is not running: it stays stopped" in lines
    assert any("Hook stackyard.backup.pre of db: not run" in text for text in lines)


def test_a_failing_hook_fails_the_backup_cleanly(
    admin_client, app, stacks_dir, docker_cleanup, docker_client
):
    stack_id = make(stacks_dir, docker_cleanup, pre="echo no space for the dump >&2; exit 3")
    before = states(docker_client, stack_id)
    run = back_up(admin_client, stack_id)
    assert run["status"] == "failed"
    assert any(
        "Hook stackyard.backup.pre of db failed (exit status 3)" in e
        for e in run["progress"]["errors"]
    )
    assert states(docker_client, stack_id) == before  # never stopped: untouched
    assert [a for a in admin_client.get("/api/backups").json() if a["stack_id"] == stack_id] == []
    assert leftovers(app) == []


def test_a_runs_output_is_only_for_those_who_may_read_logs(
    admin_client, viewer_client, stacks_dir, docker_cleanup
):
    """A hook's output may hold secrets (here what `env` would print): viewers, who may
    not read logs, get the run's state and stages without it, polled or followed."""
    stack_id = make(stacks_dir, docker_cleanup, pre="echo DB_PASSWORD=hunter2-in-env; exit 3")
    run = back_up(admin_client, stack_id)
    assert run["status"] == "failed" and "hunter2-in-env" in json.dumps(run)
    seen = viewer_client.get(f"/api/stacks/{stack_id}/run").json()
    assert (seen["id"], seen["action"], seen["status"]) == (run["id"], "backup", "failed")
    assert seen["progress"]["lines"] == [] and seen["progress"]["errors"] == [OUTPUT_HIDDEN]
    # Said as left out, not as a run without output ("No output." in the console).
    assert seen["output_hidden"] is True and run["output_hidden"] is False
    assert "hunter2" not in json.dumps(seen)
    with viewer_client.stream("GET", f"/api/stacks/{stack_id}/run/events") as events:
        followed = events.read().decode()
    assert "event: state" in followed and "event: end" in followed
    assert "hunter2" not in followed


class KillingHelpers(Helpers):
    """The real helpers, one of which is killed by the engine (`docker kill`) once a few
    megabytes of a volume came through: a helper that dies mid-capture."""

    def stream_output(self, mounts, command, what):
        sent, killed = 0, False
        for chunk in super().stream_output(mounts, command, what):
            yield chunk
            sent += len(chunk)
            if sent > 4_000_000 and not killed:
                killed = True
                # From elsewhere, as the reader goes on: the engine ends a killed
                # container only once its output is read.
                for container in self.client.containers.list(
                    filters={"label": f"stackyard.helper={self.owner}"}
                ):
                    threading.Thread(target=container.kill).start()


class VanishingHelpers(Helpers):
    """The real helpers, while something outside the stack removes the files of a
    volume the helper's tar is reading (after it has listed them)."""

    def stream_output(self, mounts, command, what):
        sent, removed = 0, False
        for chunk in super().stream_output(mounts, command, what):
            yield chunk
            sent += len(chunk)
            if sent > 2_000_000 and not removed:
                removed = True
                helper("volume", mounts[0].source, "rm /data/many/*")


def test_files_going_away_while_read_do_not_fail_the_backup(
    admin_client, app, stacks_dir, docker_cleanup, monkeypatch
):
    stack_id = make(stacks_dir, docker_cleanup)
    helper(
        "volume",
        f"{stack_id}_db",
        "mkdir /data/many && for i in $(seq 100); do head -c 300000 /dev/urandom "
        "> /data/many/f$i; done",
    )
    use_helpers(app, monkeypatch, VanishingHelpers)
    run = back_up(admin_client, stack_id)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    name = admin_client.get("/api/backups").json()[0]["name"]
    (db,) = [
        a for a in admin_client.get(f"/api/backups/{name}").json()["assets"] if "_db" in a["key"]
    ]
    assert db["vanished"] and all(v.startswith("many/f") for v in db["vanished"])
    lines = [ln["text"] for ln in run["progress"]["lines"]]
    assert any(f"{len(db['vanished'])} files went away while they were read" in t for t in lines)
    # What was read came whole: the archive checks, and each file in it is all there.
    assert admin_client.post(f"/api/backups/{name}/verify").json()["ok"] is True
    clone = f"{stack_id}-c"
    docker_cleanup.compose_project(clone)
    restoring = start_restore(admin_client, name, stack=clone)
    assert restoring.status_code == 202
    assert wait_run(admin_client, clone)["status"] == "succeeded"
    sizes = helper("volume", f"{clone}_db", "wc -c /data/many/* | grep -v total").split("\n")
    kept = [line.split() for line in sizes if line.strip()]
    assert len(kept) == 100 - len(db["vanished"]) and kept
    assert {size for size, _ in kept} == {"300000"}


def test_a_capture_broken_midway_fails_cleanly_and_the_stack_runs_again(
    admin_client, app, stacks_dir, docker_cleanup, docker_client, monkeypatch
):
    stack_id = make(stacks_dir, docker_cleanup)
    helper("volume", f"{stack_id}_db", "head -c 20000000 /dev/urandom > /data/big.bin")
    use_helpers(app, monkeypatch, KillingHelpers)
    run = back_up(admin_client, stack_id)
    assert run["status"] == "failed"
    assert "status 137" in run["progress"]["errors"][0], run["progress"]  # SIGKILL
    assert {s for s, _ in states(docker_client, stack_id).values()} == {"running"}
    assert [a for a in admin_client.get("/api/backups").json() if a["stack_id"] == stack_id] == []
    assert leftovers(app) == []
    owner = app.state.services.backups.machine.helpers().owner
    helpers = docker_client.containers.list(
        all=True, filters={"label": f"stackyard.helper={owner}"}
    )
    assert helpers == []  # no helper left either


def test_a_full_archive_folder_fails_cleanly(
    admin_client, app, stacks_dir, docker_cleanup, docker_client
):
    stack_id = make(stacks_dir, docker_cleanup)
    helper("volume", f"{stack_id}_db", "head -c 8000000 /dev/urandom > /data/random.bin")
    folder = Path(app.state.settings.data_dir) / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)], check=True)
    try:
        run = back_up(admin_client, stack_id)
        assert run["status"] == "failed"
        assert any("space" in e.lower() for e in run["progress"]["errors"]), run["progress"][
            "errors"
        ]
        assert list(folder.iterdir()) == []  # nothing half-written is left
        assert {s for s, _ in states(docker_client, stack_id).values()} == {"running"}
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_restore_that_fails_midway_leaves_everything_as_it_was(
    admin_client, app, stacks_dir, tmp_path, docker_cleanup, docker_client
):
    """The disk of a bind folder fills while the archive's copy is written beside the old
    contents: the restore fails, and the volume, the bind folder and the stack files are
    as they were before it, with nothing of it left; the stack runs again."""
    stack_id = f"around-{uuid.uuid4().hex[:6]}"
    folder = stacks_dir / stack_id
    folder.mkdir()
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=5m", "tmpfs", str(disk)], check=True)
    try:
        (folder / "compose.yaml").write_text(
            COMPOSE.format(pre="true").replace(
                "      - db:/var/lib/db\n", f"      - db:/var/lib/db\n      - {disk}:/disk\n"
            )
        )
        docker_cleanup.compose_project(stack_id)
        compose(stacks_dir, stack_id, "up", "-d")
        helper("volume", f"{stack_id}_db", "echo before > /data/db.txt")
        (disk / "blob").write_bytes(os.urandom(3_000_000))
        # A whole disk is captured only when chosen.
        chosen = admin_client.post(f"/api/stacks/{stack_id}/backups", json={"binds": [str(disk)]})
        assert chosen.status_code == 202
        run = wait_run(admin_client, stack_id)
        assert run["status"] == "succeeded", run["progress"]["errors"]
        name = admin_client.get("/api/backups").json()[0]["name"]

        helper("volume", f"{stack_id}_db", "echo after > /data/db.txt; echo x > /data/new")
        (disk / "new").write_text("made after the backup")
        edited = (folder / "compose.yaml").read_text() + "# edited after the backup\n"
        (folder / "compose.yaml").write_text(edited)
        listing = "stat -c '%a %u %g %Y' /data; ls -lA --full-time /data; cat /data/*"
        volume_before = helper("volume", f"{stack_id}_db", listing)
        disk_before = sorted(os.listdir(disk)), (disk / "blob").read_bytes()
        started = states(docker_client, stack_id)

        restoring = start_restore(admin_client, name, overwrite=True)
        assert restoring.status_code == 202
        run = wait_run(admin_client, stack_id)
        assert run["status"] == "failed"
        assert any("space" in e.lower() for e in run["progress"]["errors"]), run["progress"][
            "errors"
        ]
        assert helper("volume", f"{stack_id}_db", listing) == volume_before
        assert (sorted(os.listdir(disk)), (disk / "blob").read_bytes()) == disk_before
        assert (folder / "compose.yaml").read_text() == edited
        assert [p.name for p in stacks_dir.iterdir() if p.name.startswith(".")] == []
        after = states(docker_client, stack_id)
        assert {s for s, _ in after.values()} == {"running"}
        assert all(after[n][1] != started[n][1] for n in started)  # stopped, started again
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def recovered(client, stack_id: str, cut: str) -> dict:
    """The run that tells, after a restart, what became of the run `cut` short (until
    it begins, the stack's run is that one, interrupted), once it has ended."""

    def ended() -> dict | None:
        run = client.get(f"/api/stacks/{stack_id}/run").json()
        return run if run["id"] != cut and run["status"] != "running" else None

    return wait_until(ended, PATIENCE, "the interrupted work to be resolved")


def test_a_service_killed_while_a_stack_is_stopped_for_its_backup_starts_it_again(
    tmp_path, docker_cleanup, docker_client, holding_helper
):
    """SIGKILL of the service while the capture runs (held by the helper) with the stack
    stopped: at the next start the stack runs again, as a run that says why, and nothing
    of the backup is left."""
    stacks_dir = tmp_path / "stacks"
    stacks_dir.mkdir()
    stack_id = make(stacks_dir, docker_cleanup, pre="true")
    helper("volume", f"{stack_id}_db", "touch /data/.hold")
    env = service_env(tmp_path, BACKUP_HELPER_IMAGE=holding_helper)
    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            started = client.post(f"/api/stacks/{stack_id}/backups", json={})
            assert started.status_code == 202
            wait_until(
                lambda: {s for s, _ in states(docker_client, stack_id).values()} == {"exited"},
                PATIENCE,
                "the stack to stop for the copy",
            )
        server.process.kill()
        server.process.wait()
        assert {s for s, _ in states(docker_client, stack_id).values()} == {"exited"}

        server = start_server(tmp_path, env=env)
        with httpx.Client(base_url=server.url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            run = recovered(client, stack_id, started.json()["id"])
            assert (run["action"], run["status"]) == ("backup", "interrupted"), run
            assert any("stopped during a backup" in ln["text"] for ln in run["progress"]["lines"])
        assert {s for s, _ in states(docker_client, stack_id).values()} == {"running"}
        backups = tmp_path / "data" / "backups"
        assert not backups.exists() or list(backups.iterdir()) == []
        assert json.loads((tmp_path / "data" / "journal.json").read_text()) == {}
    finally:
        server.stop()


def test_a_backup_cut_short_by_a_killed_service_says_interrupted(
    tmp_path, docker_cleanup, docker_client, holding_helper
):
    """SIGKILL while the capture of a stopped stack runs: after the restart its run says
    interrupted (not running for ever, not a success), the stack stays stopped, and
    nothing of the backup is left."""
    stacks_dir = tmp_path / "stacks"
    stacks_dir.mkdir()
    stack_id = make(stacks_dir, docker_cleanup, pre="true", up=False)
    helper("volume", f"{stack_id}_db", "touch /data/.hold")
    env = service_env(tmp_path, BACKUP_HELPER_IMAGE=holding_helper)
    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            assert client.post(f"/api/stacks/{stack_id}/backups", json={}).status_code == 202
            wait_until(
                lambda: docker_client.containers.list(filters={"ancestor": holding_helper}),
                PATIENCE,
                "the capture to wait in its helper",
            )
        server.process.kill()
        server.process.wait()

        server = start_server(tmp_path, env=env)
        with httpx.Client(base_url=server.url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            run = client.get(f"/api/stacks/{stack_id}/run").json()
            assert run["action"] == "backup" and run["status"] == "interrupted", run
            assert "killed or restarted" in run["progress"]["errors"][-1]
            assert attention(client, stack_id) == [
                "The backup was interrupted (the service stopped while it ran): The service "
                "stopped while this ran (killed or restarted): it did not finish"
            ]
        listed = subprocess.run(
            [STACKYARD_BIN, "stack", "list"], env=env, capture_output=True, text=True, check=True
        )
        (line,) = [ln for ln in listed.stdout.splitlines() if ln.startswith(f"{stack_id}\t")]
        assert line.endswith("\tlast run: backup interrupted"), line
        assert {s for s, _ in states(docker_client, stack_id).values()} == {"created"}
        backups = tmp_path / "data" / "backups"
        assert not backups.exists() or list(backups.iterdir()) == []
    finally:
        server.stop()


RESTORED = """services:
  db:
    image: stackyard-test/busybox:1
    command: ["sleep", "3600"]
    stop_signal: SIGKILL
    labels: [stackyard.test=stack]
    volumes: [db:/var/lib/db, "{outside}:/outside"]
volumes:
  db:
"""


def holding(client: docker.DockerClient, image: str, folder: Path) -> bool:
    """Whether a helper of `image` with `folder` mounted runs (and so waits on it)."""
    running = client.api.containers(filters={"ancestor": image})
    return any(m.get("Source") == str(folder) for c in running for m in c.get("Mounts") or [])


def undone_at_start(server, stack_id: str, cut: str) -> None:
    """The restarted service says the restore `cut` short was undone: its stack's run,
    and the fleet's attention list."""
    with httpx.Client(base_url=server.url, timeout=30) as client:
        sign_in(client, "admin", ADMIN_PASSWORD)
        run = recovered(client, stack_id, cut)
        assert (run["action"], run["status"]) == ("restore", "interrupted"), run
        lines = [line["text"] for line in run["progress"]["lines"]]
        assert any("was interrupted: undone" in line for line in lines), lines
        (said,) = attention(client, stack_id)
        assert said.startswith("The restore was interrupted") and "undone" in said


def test_a_restore_cut_short_by_a_killed_service_is_undone_at_the_next_start(
    tmp_path, docker_cleanup, docker_client, holding_helper
):
    """SIGKILL while a restore over a running stack has written the volume beside its
    contents and waits before its bind folder: at the next start the staged writes are
    gone (nothing in the volume where the app sees it, nothing beside the stack
    folder), the data is as it was before the restore, and the stack runs again."""
    stacks_dir = tmp_path / "stacks"
    stack_id = f"around-{uuid.uuid4().hex[:6]}"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("outside, before")
    (stacks_dir / stack_id).mkdir(parents=True)
    (stacks_dir / stack_id / "compose.yaml").write_text(RESTORED.format(outside=outside))
    docker_cleanup.compose_project(stack_id)
    compose(stacks_dir, stack_id, "up", "-d")
    volume = f"{stack_id}_db"
    helper("volume", volume, "echo before > /data/file")
    env = service_env(tmp_path, BACKUP_HELPER_IMAGE=holding_helper)
    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            made = back_up(client, stack_id)
            assert made["status"] == "succeeded", made["progress"]["errors"]
            helper("volume", volume, "echo after > /data/file")
            (outside / ".hold").write_text("")
            started = start_restore(client, made["artifact"], overwrite=True)
            assert started.status_code == 202, started.text
            wait_until(
                lambda: ".stackyard-restoring-" in helper("volume", volume, "ls -a /data"),
                PATIENCE,
                "the volume's contents to be staged",
            )
            wait_until(
                lambda: holding(docker_client, holding_helper, outside),
                PATIENCE,
                "the restore to wait before the bind folder",
            )
        server.process.kill()
        server.process.wait()
        (outside / ".hold").unlink()

        server = start_server(tmp_path, env=env)
        undone_at_start(server, stack_id, started.json()["id"])
        assert helper("volume", volume, "ls -A /data; cat /data/file") == "file\nafter\n"
        assert sorted(p.name for p in outside.iterdir()) == ["kept"]
        assert sorted(p.name for p in stacks_dir.iterdir()) == [stack_id]
        assert {s for s, _ in states(docker_client, stack_id).values()} == {"running"}
        assert json.loads((tmp_path / "data" / "journal.json").read_text()) == {}
    finally:
        server.stop()


def test_a_restore_killed_while_it_merges_the_stack_folder_is_undone(tmp_path, docker_cleanup):
    """SIGKILL while the restored stack folder is merged into the live one (every entry
    of a folder of 10,000 files moved aside and in, each step written to a log first):
    at the next start the merge is taken back from its log and the rest of the restore
    undone; the stack folder is as it was before the restore, nothing of it is left."""
    stacks_dir = tmp_path / "stacks"
    stacks_dir.mkdir()
    stack_id = make(stacks_dir, docker_cleanup, up=False)
    folder = stacks_dir / stack_id
    (folder / "many").mkdir()
    for n in range(10_000):
        (folder / "many" / f"f{n:05d}").write_text(f"{n}\n")
    env = service_env(tmp_path)
    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            made = back_up(client, stack_id)
            assert made["status"] == "succeeded", made["progress"]["errors"]
            (folder / "many" / "f00000").write_text("changed after the backup\n")
            (folder / "made-later").write_text("stays")
            before = snapshot("bind", str(folder))
            started = start_restore(client, made["artifact"], overwrite=True)
            assert started.status_code == 202, started.text
            wait_until(
                lambda: any(".merging-" in p.name for p in stacks_dir.iterdir()),
                PATIENCE,
                "the merge of the stack folder",
                interval=0.002,
            )
        server.process.kill()
        server.process.wait()
        log = next(p for p in stacks_dir.iterdir() if ".merging-" in p.name)
        assert log.read_bytes().count(b"\n") < 20_000  # killed halfway through

        server = start_server(tmp_path, env=env)
        undone_at_start(server, stack_id, started.json()["id"])
        assert snapshot("bind", str(folder)) == before
        assert sorted(p.name for p in stacks_dir.iterdir()) == [stack_id]
    finally:
        server.stop()
