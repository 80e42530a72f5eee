"""The disk page and the prune against an engine of the test's own (never the shared
engine of the run): what uses what, a preview that lists exactly what the prune removes
and what it frees, and nothing of a stack's, protected or kept for a rollback removed.

The engine here is Docker 20.10 (API 1.41), whose own `volume prune` takes named volumes
too; no newer `dockerd` is installable on this machine (the issue's second engine)."""

from __future__ import annotations

import io
import os
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.schedules.test_schedules import wait_history
from tests.support.engines import Engine
from tests.support.service import (
    ADMIN_PASSWORD,
    client_with_role,
    new_client,
    settings_in,
    sign_in,
    started,
)
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker

BUSYBOX = "stackyard-test/busybox:1"


@pytest.fixture
def engine(docker_engines) -> Engine:
    (found,) = docker_engines(1)
    return found


@pytest.fixture
def admin(central_app: FastAPI, tmp_path: Path, engine: Engine) -> Iterator[TestClient]:
    settings = settings_in(tmp_path, docker_host=engine.docker_host, stacks_dir=engine.stacks_dir)
    engine.stacks_dir.mkdir(parents=True, exist_ok=True)
    with started(central_app, settings):
        client = new_client(central_app)
        sign_in(client, "admin", ADMIN_PASSWORD)
        yield client


def _tar(name: str, data: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def imported(engine: Engine, tmp_path: Path, tag: str, size: int, *changes: str) -> str:
    """An image of one layer of `size` random bytes, tagged `tag`: its id."""
    path = tmp_path / f"{uuid.uuid4().hex}.tar"
    path.write_bytes(_tar("blob", os.urandom(size)))
    args = [a for c in changes for a in ("--change", c)]
    engine.docker("import", *args, str(path), tag)
    return engine.docker("image", "inspect", "-f", "{{.Id}}", tag).stdout.strip()


def stack(engine: Engine, name: str, compose: str, *up: str) -> Path:
    folder = engine.stacks_dir / name
    folder.mkdir(parents=True)
    (folder / "compose.yaml").write_text(compose)
    if up:
        engine.compose(folder, *up)
    return folder


def world(engine: Engine, tmp_path: Path) -> dict[str, str]:
    """Everything the prune must tell apart, on the test's engine."""
    ids: dict[str, str] = {}
    volume = f"services:\n  app:\n    image: {BUSYBOX}\n    command: [sleep, '3600']\n"
    volume += "    volumes: [data:/data]\nvolumes:\n  data:\n"
    stack(engine, "running", volume, "up", "-d")
    stack(engine, "stopped", volume, "up", "-d")
    engine.compose(engine.stacks_dir / "stopped", "stop")
    downed = stack(engine, "downed", volume, "up", "-d")
    engine.compose(downed, "down")  # (no container; its volume stays)
    gone = stack(engine, "gone", volume, "up", "-d")
    engine.compose(gone, "down")  # (its volume stays)
    for path in sorted(gone.iterdir(), reverse=True):
        path.unlink()
    gone.rmdir()
    # An image only a stack names (stopped, no container): never pruned.
    ids["declared"] = imported(engine, tmp_path, "declared/app:1", 300_000)
    stack(engine, "declares", "services:\n  app:\n    image: declared/app:1\n")
    engine.docker("volume", "create", "--label", "stackyard.protect=true", "keepme")
    engine.docker("volume", "create", "loose")
    ids["anonymous"] = engine.docker("volume", "create").stdout.strip()
    ids["old"] = imported(engine, tmp_path, "junk:1", 200_000)
    ids["dangling"] = imported(engine, tmp_path, "junk:1", 400_000)  # (the first: untagged)
    ids["dangling"], ids["junk"] = ids["old"], ids["dangling"]
    ids["protected"] = imported(
        engine, tmp_path, "precious:1", 100_000, "LABEL stackyard.protect=true"
    )
    ids["rollback"] = imported(engine, tmp_path, "stackyard/rollback:running.app", 150_000)
    ids["other"] = imported(engine, tmp_path, "other:1", 250_000)
    engine.docker("create", "--name", "leftover", "other:1", "x")  # stopped, no stack
    # Two built images on the shared busybox layers, the second on the first (parent and
    # child): their own layers freed, busybox's kept (the stacks use it).
    built = tmp_path / "built"
    built.mkdir()
    (built / "Dockerfile").write_text(f"FROM {BUSYBOX}\nRUN head -c 300000 /dev/urandom > /a\n")
    engine.docker("build", "-q", "-t", "layered-a:1", str(built))
    (built / "Dockerfile").write_text("FROM layered-a:1\nRUN head -c 200000 /dev/urandom > /b\n")
    engine.docker("build", "-q", "-t", "layered-b:1", str(built))
    engine.docker("network", "create", "loose-net")
    engine.docker("network", "create", "--label", "stackyard.protect=true", "kept-net")
    return ids


def _items(preview: dict) -> set[tuple[str, str]]:
    return {(i["kind"], i["name"]) for i in preview["items"]}


def test_the_disk_page_says_what_uses_what(admin: TestClient, engine: Engine, tmp_path: Path):
    ids = world(engine, tmp_path)
    report = admin.get("/api/disk").json()
    volumes = {v["name"]: v for v in report["volumes"]}
    assert volumes["running_data"]["stack"] == "running"
    assert volumes["running_data"]["used_by"][0]["stack"] == "running"
    assert volumes["stopped_data"]["protected"] == "a volume of the stack stopped"
    assert volumes["stopped_data"]["used_by"][0]["stack"] == "stopped"  # (its stopped container)
    assert volumes["gone_data"]["protected"] == "a volume of the stack gone (its folder is gone)"
    assert volumes["keepme"]["protected"] == "labelled stackyard.protect=true"
    assert volumes[ids["anonymous"]]["anonymous"] and not volumes["loose"]["anonymous"]
    images = {i["id"]: i for i in report["images"]}
    assert images[ids["declared"]]["protected"] == "an image of declares/app"
    assert images[ids["declared"]]["used_by"] == [
        {"stack": "declares", "service": "app", "container": None}
    ]
    assert images[ids["rollback"]]["protected"] == "kept by an update for its rollback"
    assert images[ids["dangling"]]["dangling"] and not images[ids["junk"]]["dangling"]
    assert images[ids["other"]]["used_by"] == [
        {"stack": None, "service": None, "container": "leftover"}
    ]
    busybox = next(i for i in report["images"] if BUSYBOX in i["tags"])
    assert {u["stack"] for u in busybox["used_by"]} == {"running", "stopped", "downed"}
    assert [c["name"] for c in report["containers"]] == ["leftover"]
    summary = report["summary"]
    assert summary["volumes_count"] == len(report["volumes"])
    assert summary["reclaimable"] > 0


def test_a_prune_removes_exactly_what_its_preview_listed_and_never_a_stacks_data(
    admin: TestClient, engine: Engine, tmp_path: Path
):
    ids = world(engine, tmp_path)
    options = {"images": "unused", "containers": True, "networks": True, "volumes": "unused"}
    preview = admin.post("/api/disk/prune/preview", json=options).json()
    assert _items(preview) == {
        ("container", "leftover"),
        ("image", ids["dangling"].removeprefix("sha256:")[:12]),
        ("image", "junk:1"),
        ("image", "other:1"),  # (its only container goes first)
        ("image", "layered-a:1"),
        ("image", "layered-b:1"),
        ("volume", "loose"),
        ("volume", ids["anonymous"]),
        ("network", "loose-net"),
    }
    kept = {(k["kind"], k["name"]): k["reason"] for k in preview["kept"]}
    assert kept[("volume", "gone_data")] == "a volume of the stack gone (its folder is gone)"
    assert kept[("volume", "downed_data")] == "a volume of the stack downed"
    assert kept[("volume", "keepme")] == "labelled stackyard.protect=true"
    assert kept[("image", "declared/app:1")] == "an image of declares/app"
    assert kept[("image", "stackyard/rollback:running.app")] == "kept by an update for its rollback"
    assert kept[("image", "precious:1")] == "labelled stackyard.protect=true"
    assert kept[("network", "kept-net")] == "labelled stackyard.protect=true"

    # Made after the preview: not in it, so not removed.
    late = imported(engine, tmp_path, "late:1", 50_000)
    before = engine.client.df()["LayersSize"]
    wanted = [f"{i['kind']}:{i['id']}" for i in preview["items"]]
    report = admin.post("/api/disk/prune", json={"options": options, "ids": wanted}).json()
    assert {(i["kind"], i["name"]) for i in report["removed"]} == _items(preview)
    assert report["left"] == []
    freed_layers = before - engine.client.df()["LayersSize"]
    assert report["freed"]["image"] == freed_layers
    assert abs(preview["bytes"]["image"] - freed_layers) <= 0.01 * freed_layers
    layered = [i["name"] for i in report["removed"] if i["name"].startswith("layered")]
    assert layered == ["layered-b:1", "layered-a:1"]  # (the child first)

    names = {v.name for v in engine.client.volumes.list()}
    assert {"running_data", "stopped_data", "downed_data", "gone_data", "keepme"} <= names
    assert {"loose", ids["anonymous"]} & names == set()
    left = {i.id for i in engine.client.images.list(all=True)}
    assert {ids["declared"], ids["rollback"], ids["protected"], late} <= left
    assert {ids["dangling"], ids["junk"], ids["other"]} & left == set()
    networks = {n.name for n in engine.client.networks.list()}
    assert "kept-net" in networks and "loose-net" not in networks
    assert {c.name for c in engine.client.containers.list(all=True)} >= {
        "running-app-1",
        "stopped-app-1",
    }
    history = admin.get("/api/disk/prunes").json()
    assert history[0]["total"] == report["total"]


def test_what_came_into_use_after_the_preview_is_left_with_why(
    admin: TestClient, engine: Engine, tmp_path: Path
):
    imported(engine, tmp_path, "soon-used:1", 80_000)
    options = {"images": "unused", "containers": False, "networks": False, "build_cache": False}
    preview = admin.post("/api/disk/prune/preview", json=options).json()
    (item,) = [i for i in preview["items"] if i["name"] == "soon-used:1"]
    engine.docker("create", "--name", "user", "soon-used:1", "x")
    report = admin.post(
        "/api/disk/prune", json={"options": options, "ids": [f"image:{item['id']}"]}
    ).json()
    assert report["removed"] == []
    assert report["left"][0]["id"] == item["id"]
    assert "in use" in report["left"][0]["reason"]
    assert engine.client.images.get("soon-used:1")


def test_removals_say_why_they_are_refused_and_a_volume_needs_its_name_typed(
    admin: TestClient, engine: Engine, tmp_path: Path
):
    world(engine, tmp_path)
    used = admin.delete("/api/disk/volumes/running_data", params={"confirm": "running_data"})
    assert used.status_code == 409 and "use this volume" in used.json()["detail"]
    untyped = admin.delete("/api/disk/volumes/loose", params={"confirm": "lose"})
    assert untyped.status_code == 400 and "Type the volume's name" in untyped.json()["detail"]
    assert "loose" in {v.name for v in engine.client.volumes.list()}
    gone = admin.delete("/api/disk/volumes/gone_data", params={"confirm": "gone_data"})
    assert gone.status_code == 204
    audit = admin.get("/api/audit").json()["items"]
    entry = next(e for e in audit if e["action"] == "disk.volume.remove")
    assert entry["detail"] == "of the stack gone (its folder is gone)"
    busy = admin.delete(f"/api/disk/images/{engine.client.images.get(BUSYBOX).id}")
    assert busy.status_code == 409 and "use this image" in busy.json()["detail"]
    bridge = admin.delete("/api/disk/networks/bridge")
    assert bridge.status_code == 409


def test_a_prune_schedule_prunes_the_host_and_keeps_its_report(
    admin: TestClient, engine: Engine, tmp_path: Path
):
    made = imported(engine, tmp_path, "sched:1", 120_000)
    imported(engine, tmp_path, "sched:1", 60_000)  # (the first: dangling now)
    body = {
        "name": "weekly clean",
        "kind": "prune",
        "cron": "weekly",
        "prune": {"images": "dangling", "containers": False, "networks": False},
    }
    schedule = admin.post("/api/schedules", json=body)
    assert schedule.status_code == 201, schedule.text
    assert schedule.json()["prune"]["images"] == "dangling"
    assert admin.post(f"/api/schedules/{schedule.json()['id']}/run").status_code == 202
    (ran,) = wait_history(admin, schedule.json()["id"], 1)
    assert (ran["outcome"], ran["stack_id"], ran["pruned"]) == ("succeeded", "*", 1), ran
    assert ran["size"] >= 120_000
    assert made not in {i.id for i in engine.client.images.list(all=True)}
    (report,) = admin.get("/api/disk/prunes").json()
    assert report["origin"] == "schedule 'weekly clean'" and report["total"] == ran["size"]


def test_the_fleet_shows_each_hosts_disk(admin: TestClient, engine: Engine, tmp_path: Path):
    imported(engine, tmp_path, "fleetdisk:1", 90_000)

    def measured() -> dict | None:
        report = admin.get("/api/fleet/host").json()
        return report["disk"]

    disk = wait_until(measured, what="the disk summary measured in the background")
    assert disk["images_count"] >= 3 and disk["images"] > 90_000
    assert "disk" in admin.get("/api/fleet/host").json()["capabilities"]


def test_viewers_see_operators_act_on_their_stacks_images_admins_on_all(
    central_app: FastAPI, admin: TestClient, engine: Engine, tmp_path: Path
):
    current = imported(engine, tmp_path, "roletest/app:2", 50_000)
    old = imported(engine, tmp_path, "roletest/app:1", 50_000)
    other = imported(engine, tmp_path, "unrelated:1", 50_000)
    stack(engine, "roles", "services:\n  app:\n    image: roletest/app:2\n")
    viewer = client_with_role(central_app, admin, "vera", "viewer")
    operator = client_with_role(central_app, admin, "otto", "operator")

    assert viewer.get("/api/disk").status_code == 200
    assert viewer.post("/api/disk/prune/preview", json={}).status_code == 403
    assert viewer.delete(f"/api/disk/images/{old}").status_code == 403
    assert operator.post("/api/disk/prune/preview", json={}).status_code == 403
    assert operator.delete("/api/disk/volumes/x", params={"confirm": "x"}).status_code == 403
    refused = operator.delete(f"/api/disk/images/{other}")
    assert refused.status_code == 403 and "their stacks'" in refused.json()["detail"]
    # An older version of a repository a stack names: the operator's to remove.
    assert operator.delete(f"/api/disk/images/{old}").status_code == 204
    assert admin.delete(f"/api/disk/images/{other}").status_code == 204
    left = {i.id for i in engine.client.images.list(all=True)}
    assert current in left and {old, other} & left == set()
    audit = admin.get("/api/audit", params={"limit": 20}).json()["items"]
    removed = [(e["actor"], e["outcome"]) for e in audit if e["action"] == "disk.image.remove"]
    assert ("otto", "success") in removed and ("otto", "failure") in removed
