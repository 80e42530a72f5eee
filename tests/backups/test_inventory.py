"""The inventory of a stack's data against the real engine: binds from the compose file
and from the running containers, listed once with every use; volumes (external and NFS
ones marked); sizes measured through a helper; what is not selected, and why."""

from __future__ import annotations

import subprocess
import uuid

import pytest

from stackyard.backups.inventory import OVERSIZE_MIN, _deselect_oversized
from stackyard.backups.model import Asset
from stackyard.docker.own import PathMapping, to_local
from tests.support.stacks import compose

pytestmark = pytest.mark.docker

COMPOSE = """services:
  app:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    volumes:
      - ./data:/data
      - ./data:/again
      - {outside}:/outside:ro
      - /etc/localtime:/etc/localtime:ro
      - {disk}:/disk
      - db:/db
      - shared:/shared
      - remote:/remote
  worker:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    volumes:
      - type: bind
        source: ./data
        target: /work
        read_only: true
      - db:/db
  other:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    volumes:
      - ./config:/data
volumes:
  db:
  shared:
    external: true
    name: {shared}
  remote:
    external: true
    name: {remote}
"""


@pytest.fixture
def inventory_stack(stacks_dir, tmp_path, docker_cleanup, docker_client):
    stack_id = f"inv-{uuid.uuid4().hex[:6]}"
    folder = stacks_dir / stack_id
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "blob").write_bytes(b"x" * 3_000_000)
    (folder / "config").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.txt").write_text("a")
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], check=True)
    shared = docker_client.volumes.create(f"{stack_id}-shared", labels={"stackyard.test": "x"})
    remote = docker_client.volumes.create(
        f"{stack_id}-nfs",
        driver="local",
        driver_opts={"type": "nfs", "o": "addr=127.0.0.1,rw", "device": ":/export"},
    )
    (folder / "compose.yaml").write_text(
        COMPOSE.format(outside=outside, disk=disk, shared=shared.name, remote=remote.name)
    )
    docker_cleanup.compose_project(stack_id)
    compose(stacks_dir, stack_id, "create")
    try:
        yield stack_id, folder, outside, disk, shared.name, remote.name
    finally:
        subprocess.run(["umount", str(disk)], check=False)
        for volume in (shared, remote):
            subprocess.run(["docker", "volume", "rm", "-f", volume.name], capture_output=True)


def test_the_inventory_lists_every_asset_once_with_its_uses_and_choice(
    admin_client, inventory_stack
):
    stack_id, folder, outside, disk, shared, remote = inventory_stack
    answer = admin_client.get(f"/api/stacks/{stack_id}/backup/inventory")
    assert answer.status_code == 200, answer.text
    inventory = answer.json()
    assets = {a["key"]: a for a in inventory["assets"]}

    data = assets[f"bind:{folder / 'data'}"]  # one source, three uses, listed once
    assert {(u["service"], u["target"]) for u in data["uses"]} == {
        ("app", "/data"),
        ("app", "/again"),
        ("worker", "/work"),
    }
    assert data["inside_stack"] == "data" and data["selected"]
    assert data["size"] >= 3_000_000 and data["files"] == 1
    # The stack folder's own files, without the bind folders inside it (assets of their own).
    own = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and "data" not in p.parts)
    assert inventory["folder_size"] == own > 0

    # Two services with the same path in their containers: both sources are listed.
    config = assets[f"bind:{folder / 'config'}"]
    assert [(u["service"], u["target"]) for u in config["uses"]] == [("other", "/data")]

    assert assets[f"bind:{outside}"]["inside_stack"] is None
    assert assets[f"bind:{outside}"]["selected"]
    localtime = assets["bind:/etc/localtime"]
    assert not localtime["selected"] and "system path" in localtime["reason"]
    whole = assets[f"bind:{disk}"]
    assert not whole["selected"] and "whole file system" in whole["reason"]

    db = assets[f"volume:{stack_id}_db"]
    assert db["compose_key"] == "db" and db["selected"] and not db["external"]
    assert {u["service"] for u in db["uses"]} == {"app", "worker"}
    assert assets[f"volume:{shared}"]["external"] and assets[f"volume:{shared}"]["selected"]
    nfs = assets[f"volume:{remote}"]
    assert nfs["remote"] == "nfs" and not nfs["selected"] and "NFS" in nfs["reason"]

    paths = inventory["paths"]
    assert paths["mismatch"] is False and paths["stacks_dir"] == paths["stacks_host_dir"]


def test_binds_of_the_running_containers_are_listed_too(
    admin_client, stacks_dir, tmp_path, docker_cleanup
):
    """A compose file changed after the deploy: the old bind still holds data in use."""
    stack_id = f"inv-{uuid.uuid4().hex[:6]}"
    folder = stacks_dir / stack_id
    folder.mkdir()
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    service = "services:\n  app:\n    image: stackyard-test/busybox:1\n"
    (folder / "compose.yaml").write_text(service + f"    volumes: ['{old}:/state']\n")
    docker_cleanup.compose_project(stack_id)
    compose(stacks_dir, stack_id, "up", "-d")
    (folder / "compose.yaml").write_text(service + f"    volumes: ['{new}:/state']\n")
    keys = {
        a["key"]
        for a in admin_client.get(f"/api/stacks/{stack_id}/backup/inventory").json()["assets"]
    }
    assert {f"bind:{old}", f"bind:{new}"} <= keys


def _asset(name: str, size: int, selected: bool = True) -> Asset:
    return Asset(
        key=f"bind:{name}",
        kind="bind",
        name=name,
        compose_key=None,
        uses=[],
        size=size,
        files=1,
        inside_stack=None,
        local_path=name,
        external=False,
        driver=None,
        remote=None,
        exists=True,
        wide_ids=False,
        selected=selected,
        reason=None if selected else "x",
    )


def test_a_source_far_larger_than_the_rest_is_not_selected():
    media = _asset("/srv/media", 50 * OVERSIZE_MIN)
    config = _asset("/srv/config", 10_000)
    db = _asset("/srv/db", 2 * OVERSIZE_MIN)
    result = {a.name: a for a in _deselect_oversized([media, config, db])}
    assert not result["/srv/media"].selected and "GiB" in result["/srv/media"].reason
    assert result["/srv/db"].selected and result["/srv/config"].selected
    alone = _deselect_oversized([_asset("/srv/only", 50 * OVERSIZE_MIN)])
    assert alone[0].selected  # large and alone: the stack's data, taken


def test_host_paths_map_through_the_longest_mount():
    mappings = [
        PathMapping("/srv/stacks/app/data", "/mnt/appdata"),
        PathMapping("/srv/stacks", "/stacks"),
        PathMapping("/srv", "/host-srv"),
    ]
    assert to_local("/srv/stacks/app/data/x", mappings, True) == "/mnt/appdata/x"
    assert to_local("/srv/stacks/app/compose.yaml", mappings, True) == "/stacks/app/compose.yaml"
    assert to_local("/srv/other", mappings, True) == "/host-srv/other"
    assert to_local("/opt/elsewhere", mappings, True) is None
    assert to_local("/opt/elsewhere", [], False) == "/opt/elsewhere"


@pytest.fixture
def settings(settings, request):
    """The service's settings; a test may give another helper image (`indirect`)."""
    image = getattr(request, "param", None)
    return settings.model_copy(update={"backup_helper_image": image}) if image else settings


@pytest.mark.parametrize("settings", ["127.0.0.1:9/nothing:1"], indirect=True)
def test_without_a_helper_image_the_inventory_says_why_nothing_was_measured(
    admin_client, stacks_dir, docker_cleanup, caplog
):
    """A helper image the engine cannot pull: every bind is left out with that reason
    (the image and the engine's words), and the log says it too."""
    stack_id = f"inv-{uuid.uuid4().hex[:6]}"
    (stacks_dir / stack_id / "data").mkdir(parents=True)
    (stacks_dir / stack_id / "compose.yaml").write_text(
        "services:\n  app:\n    image: stackyard-test/busybox:1\n    volumes: ['./data:/data']\n"
    )
    docker_cleanup.compose_project(stack_id)
    answer = admin_client.get(f"/api/stacks/{stack_id}/backup/inventory")
    assert answer.status_code == 200, answer.text
    (data,) = answer.json()["assets"]
    assert not data["selected"]
    assert data["reason"].startswith(
        "the helper image 127.0.0.1:9/nothing:1 cannot be had: "
        "The helper image (BACKUP_HELPER_IMAGE) is not on this host: 127.0.0.1:9/nothing:1 "
        "cannot be pulled: "
    )
    assert any("measured nothing" in r.getMessage() for r in caplog.records)
