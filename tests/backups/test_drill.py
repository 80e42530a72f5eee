"""Restore drills against the real engine: a backup restored into a scratch clone,
compared with the archive, started without network or published ports, and removed; a
drill that fails says why; nothing of the original is touched, nothing of the drill is
left, also when the service is killed in the middle."""

from __future__ import annotations

import json
import tarfile
import threading
import uuid
from pathlib import Path

import docker
import httpx
import pytest

from tests.backups.trees import helper
from tests.support.service import ADMIN_PASSWORD, service_env, sign_in, start_server
from tests.support.stacks import compose, wait_run
from tests.support.waiting import PATIENCE, wait_until

pytestmark = pytest.mark.docker

COMPOSE = """services:
  db:
    image: stackyard-test/busybox:1
    container_name: {name}-db
    command: ["sh", "-c", "while true; do sleep 1; done"]
    healthcheck:
      test: ["CMD", "test", "-f", "/var/lib/db/ready"]
      interval: 1s
      retries: 3
      start_period: 2s
    ports: ["127.0.0.1::80"]
    labels: [stackyard.test=stack]
    volumes:
      - db:/var/lib/db
      - ./conf:/conf
      - {outside}:/media
      - /etc/hostname:/host-name:ro
volumes:
  db:
"""


def make(stacks_dir: Path, outside: Path, docker_cleanup) -> str:
    stack_id = f"drill-{uuid.uuid4().hex[:6]}"
    folder = stacks_dir / stack_id
    (folder / "conf").mkdir(parents=True)
    (folder / "conf" / "app.ini").write_text("[app]\nmode = production\n")
    outside.mkdir()
    (outside / "photo.jpg").write_bytes(b"\xff\xd8" + bytes(range(256)) * 64)
    (outside / "album").mkdir()
    (outside / "album" / "cover.txt").write_text("cover")
    (folder / "compose.yaml").write_text(COMPOSE.format(name=stack_id, outside=outside))
    docker_cleanup.compose_project(stack_id)
    helper(
        "volume",
        f"{stack_id}_db",
        "echo rows > /data/table && touch /data/ready "
        "&& mkdir /data/wal && echo 1 > /data/wal/0001 && chown -R 999:999 /data/wal",
    )
    compose(stacks_dir, stack_id, "up", "-d")
    return stack_id


def back_up(client, stack_id: str, **selection) -> str:
    assert client.post(f"/api/stacks/{stack_id}/backups", json=selection).status_code == 202
    run = wait_run(client, stack_id)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    return run["artifact"]


def drill(client, name: str, stack_id: str, settle: int = 2) -> dict:
    started = client.post(f"/api/backups/{name}/drill", json={"settle_seconds": settle})
    assert started.status_code == 202, started.text
    return wait_run(client, stack_id, timeout=300)


def drill_things(client: docker.DockerClient, clone: str) -> list[str]:
    """Everything of the drill's clone on the engine: containers, volumes, networks."""
    label = {"label": f"com.docker.compose.project={clone}"}
    found = [c.name for c in client.containers.list(all=True, filters=label)]
    found += [v.name for v in client.volumes.list(filters=label)]
    found += [n.name for n in client.networks.list(filters=label)]
    return sorted(found)


def volume_files(name: str) -> str:
    return helper("volume", name, "cd /data && find . -exec stat -c '%n %s %u %Y' {} + | sort")


class Watch(threading.Thread):
    """Notes how each drill container runs while the drill goes on."""

    def __init__(self, client: docker.DockerClient) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.seen: dict[str, dict] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            for c in self.client.containers.list(filters={"label": "stackyard.drill"}):
                self.seen[c.name] = c.attrs


def test_a_drill_restores_compares_starts_isolated_and_removes_everything(
    admin_client, app, stacks_dir, tmp_path, docker_cleanup, docker_client
):
    outside = tmp_path / f"media-{uuid.uuid4().hex[:6]}"
    stack_id = make(stacks_dir, outside, docker_cleanup)
    name = back_up(admin_client, stack_id)
    original = docker_client.containers.get(f"{stack_id}-db")
    started_at = original.attrs["State"]["StartedAt"]
    before = volume_files(f"{stack_id}_db")
    outside_before = sorted((p.name, p.stat().st_mtime_ns) for p in outside.rglob("*"))

    watch = Watch(docker_client)
    watch.start()
    try:
        run = drill(admin_client, name, stack_id)
    finally:
        watch.done.set()
        watch.join()
    assert (run["action"], run["status"]) == ("drill", "succeeded"), run["progress"]["errors"]
    assert run["summary"].startswith("restore verified: 3 volumes and folders")

    records = admin_client.get(f"/api/stacks/{stack_id}/drills").json()
    record = records[0]
    assert (record["id"], record["archive"], record["verified"]) == (run["id"], name, True)
    assert record["compared"] == 3  # the volume, ./conf, the media folder
    assert record["files"] == 6  # table, ready, wal/0001; app.ini; photo.jpg, album/cover.txt
    assert record["started"] and record["services"] == ["db: healthy"]
    assert any("/etc/hostname" in note for note in record["notes"])

    # The clone ran without network, ports or the original's name, on its own volume and
    # copies of the binds: nothing of the original mounted.
    (attrs,) = [
        a
        for a in watch.seen.values()
        if a["Config"]["Labels"]["stackyard.drill"] == record["clone"]
    ]
    assert attrs["HostConfig"]["NetworkMode"] == "none"
    assert not attrs["NetworkSettings"]["Ports"]
    assert attrs["Name"] != f"/{stack_id}-db"
    sources = {m["Destination"]: m.get("Name") or m["Source"] for m in attrs["Mounts"]}
    assert sources["/var/lib/db"].startswith("stackyard-drill-")
    assert "/.stackyard-drills/stackyard-drill-" in sources["/media"]
    assert "/.stackyard-drills/stackyard-drill-" in sources["/conf"]
    assert "/host-name" not in sources

    # The original: untouched, still running since before; nothing of the drill is left.
    assert docker_client.containers.get(f"{stack_id}-db").attrs["State"]["StartedAt"] == started_at
    assert volume_files(f"{stack_id}_db") == before
    assert sorted((p.name, p.stat().st_mtime_ns) for p in outside.rglob("*")) == outside_before
    assert drill_things(docker_client, record["clone"]) == []
    assert list((stacks_dir / ".stackyard-drills").iterdir()) == []
    assert json.loads((Path(app.state.settings.data_dir) / "journal.json").read_text()) == {}
    assert stack_id in [s["id"] for s in admin_client.get("/api/stacks").json()]
    assert ".stackyard-drills" not in [s["id"] for s in admin_client.get("/api/stacks").json()]


def test_a_drill_of_a_damaged_archive_fails_and_leaves_nothing(
    admin_client, app, stacks_dir, tmp_path, docker_cleanup, docker_client
):
    stack_id = make(stacks_dir, tmp_path / "media", docker_cleanup)
    name = back_up(admin_client, stack_id)
    path = Path(app.state.settings.data_dir) / "backups" / name
    with tarfile.open(path) as archive:  # a byte in the middle of the volume's data
        (member,) = [m for m in archive.getmembers() if m.name.startswith("volumes/")]
    data = bytearray(path.read_bytes())
    data[member.offset_data + member.size // 2] ^= 0xFF
    path.write_bytes(bytes(data))

    run = drill(admin_client, name, stack_id)
    assert (run["action"], run["status"]) == ("drill", "failed")
    record = admin_client.get(f"/api/stacks/{stack_id}/drills").json()[0]
    assert run["progress"]["errors"][-1] == record["error"]
    assert record["verified"] is False and record["started"] is False
    assert "damaged" in record["error"] or "checksum" in record["error"], record["error"]
    assert drill_things(docker_client, record["clone"]) == []
    assert list((stacks_dir / ".stackyard-drills").iterdir()) == []


def test_a_drill_whose_clone_never_gets_healthy_fails(
    admin_client, stacks_dir, tmp_path, docker_cleanup, docker_client
):
    """A backup that left out the volume the app needs: the data compares equal, but the
    clone never gets healthy, and the drill says so."""
    stack_id = make(stacks_dir, tmp_path / "media", docker_cleanup)
    name = back_up(admin_client, stack_id, volumes=[])
    run = drill(admin_client, name, stack_id)
    assert run["status"] == "failed"
    record = admin_client.get(f"/api/stacks/{stack_id}/drills").json()[0]
    assert record["started"] and not record["verified"]
    assert record["error"] == "The clone failed: db unhealthy", record
    assert drill_things(docker_client, record["clone"]) == []


def test_a_drill_cut_short_by_a_killed_service_is_removed_at_the_next_start(
    tmp_path, docker_cleanup, docker_client
):
    """SIGKILL of the service while the clone runs (a long settle time): at the next
    start its containers, volumes and folder are gone, and its run says interrupted."""
    stacks_dir = tmp_path / "stacks"
    stacks_dir.mkdir()
    stack_id = make(stacks_dir, tmp_path / "media", docker_cleanup)
    env = service_env(tmp_path)
    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            name = back_up(client, stack_id)
            started = client.post(f"/api/backups/{name}/drill", json={"settle_seconds": 3600})
            assert started.status_code == 202

            def running_clone() -> str | None:
                journal = json.loads((tmp_path / "data" / "journal.json").read_text())
                clones = [e["data"]["project"] for e in journal.values() if e["kind"] == "drill"]
                label = {"label": f"stackyard.drill={clones[0]}"} if clones else None
                return clones[0] if label and docker_client.containers.list(filters=label) else None

            clone = wait_until(running_clone, PATIENCE, "the drill's clone to run")
        docker_cleanup.compose_project(clone)
        server.process.kill()
        server.process.wait()
        assert drill_things(docker_client, clone) != []

        server = start_server(tmp_path, env=env)
        with httpx.Client(base_url=server.url, timeout=30) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            run = client.get(f"/api/stacks/{stack_id}/run").json()
            assert (run["action"], run["status"]) == ("drill", "interrupted"), run
        wait_until(
            lambda: drill_things(docker_client, clone) == [], PATIENCE, "the clone to be removed"
        )
        wait_until(
            lambda: json.loads((tmp_path / "data" / "journal.json").read_text()) == {},
            PATIENCE,
            "the drill's journal entry to go",
        )
        assert list((stacks_dir / ".stackyard-drills").iterdir()) == []
    finally:
        server.stop()
