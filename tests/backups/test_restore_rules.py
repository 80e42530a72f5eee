"""The restore rules: a slugified manifest id, unsafe tar members refused before anything
is written, version 1 archives, the 409, and uploads that are not archives."""

from __future__ import annotations

import os
import stat
import tarfile
import uuid
from pathlib import Path

import pytest

from stackyard.backups.archive import ArchiveWriter
from stackyard.backups.restore import plan
from stackyard.backups.service import RestoreRequest
from tests.backups.crafted import (
    COMPOSE,
    bind_archive,
    bind_manifest,
    entry,
    manifest_only,
    v1_archive,
    v2_archive,
)
from tests.backups.trees import CAPABILITY, helper
from tests.support.stacks import wait_run

pytestmark = pytest.mark.docker


def upload(client, path: Path):
    return client.put(
        "/api/backups/upload",
        content=path.read_bytes(),
        headers={"Content-Type": "application/x-tar"},
    )


def archives_dir(app) -> Path:
    return Path(app.state.settings.data_dir) / "backups"


def _sparse(name: str) -> tuple:
    """A GNU tar sparse file (format 1.0) to be written under `name`."""
    info, data = entry("data/GNUSparseFile.0/x", data=b"x")
    info.pax_headers = {
        "GNU.sparse.major": "1",
        "GNU.sparse.minor": "0",
        "GNU.sparse.name": name,
        "GNU.sparse.realsize": "1",
    }
    return info, data


UNSAFE = {
    "absolute": [entry("/etc/evil", data=b"x")],
    "dot-dot": [entry("data", tarfile.DIRTYPE), entry("data/../../evil", data=b"x")],
    "outside-root": [entry("elsewhere/evil", data=b"x")],
    "through-a-symlink": [
        entry("data", tarfile.DIRTYPE),
        entry("data/link", tarfile.SYMTYPE, "/etc"),
        entry("data/link/evil", data=b"x"),
    ],
    "hardlink-out": [
        entry("data", tarfile.DIRTYPE),
        entry("data/h", tarfile.LNKTYPE, "/etc/shadow"),
    ],
    "symlink-out": [
        entry("data", tarfile.DIRTYPE),
        entry("data/s", tarfile.SYMTYPE, "../../../etc"),
    ],
    "sparse-named-out": [entry("data", tarfile.DIRTYPE), _sparse("data/../../evil")],
    "old-gnu-sparse": [entry("data", tarfile.DIRTYPE), entry("data/s", tarfile.GNUTYPE_SPARSE)],
}


@pytest.mark.parametrize("payload", sorted(UNSAFE))
def test_unsafe_members_are_refused_and_nothing_is_kept(admin_client, app, tmp_path, payload):
    stack_id = f"evil-{uuid.uuid4().hex[:6]}"
    crafted = v2_archive(tmp_path / "evil.tar", stack_id, UNSAFE[payload])
    refused = upload(admin_client, crafted)
    assert refused.status_code == 400, refused.text
    assert "Unsafe member" in refused.json()["detail"]
    assert [p.name for p in archives_dir(app).iterdir()] == []  # no archive, no temp file


def test_an_unsafe_stored_archive_writes_nothing_when_restored(
    admin_client, app, stacks_dir, docker_cleanup, docker_client
):
    stack_id = f"evil-{uuid.uuid4().hex[:6]}"
    archives_dir(app).mkdir(parents=True, exist_ok=True)
    name = f"{stack_id}--crafted--20260101T000000Z.tar"
    v2_archive(archives_dir(app) / name, stack_id, UNSAFE["through-a-symlink"])
    docker_cleanup.compose_project(stack_id)
    started = admin_client.post(f"/api/backups/{name}/restore", json={})
    assert started.status_code == 202
    run = wait_run(admin_client, stack_id)
    assert run["status"] == "failed"
    assert any("Unsafe member" in e for e in run["progress"]["errors"])
    assert not (stacks_dir / stack_id).exists()  # nothing written: not even the folder
    assert docker_client.volumes.list(filters={"name": f"{stack_id}_db"}) == []
    checked = admin_client.post(f"/api/backups/{name}/verify").json()
    assert checked["ok"] is False and "Unsafe member" in checked["error"]


@pytest.mark.parametrize(
    ("stack_id", "lands_as"), [("../../etc", "etc"), ("../../srv/Web App", "srv-web-app")]
)
def test_a_traversal_stack_id_is_slugified(
    admin_client, app, stacks_dir, tmp_path, docker_cleanup, docker_client, stack_id, lands_as
):
    docker_cleanup.compose_project(lands_as)
    crafted = v2_archive(
        tmp_path / "a.tar", stack_id, [entry("data", tarfile.DIRTYPE), entry("data/f", data=b"1")]
    )
    uploaded = upload(admin_client, crafted)
    assert uploaded.status_code == 201, uploaded.text
    started = admin_client.post(f"/api/backups/{uploaded.json()['name']}/restore", json={})
    assert started.status_code == 202, started.text
    assert started.json()["stack"] == lands_as
    run = wait_run(admin_client, lands_as)
    assert (stacks_dir / lands_as / "compose.yaml").is_file()
    assert not (stacks_dir.parent / "etc").exists()
    # The manifest named a volume of its own making: not written, whatever it says, and
    # the restore says it was done in part only.
    assert run["status"] == "partial", run["progress"]["errors"]
    lines = [ln["text"] for ln in run["progress"]["lines"]]
    assert any("a manifest cannot name other volumes" in text for text in lines), lines


def test_an_id_that_slugifies_to_nothing_is_refused(admin_client, tmp_path):
    crafted = v2_archive(tmp_path / "a.tar", "../..", [entry("data", tarfile.DIRTYPE)])
    refused = upload(admin_client, crafted)
    assert refused.status_code == 400 and "usable id" in refused.json()["detail"]


def test_a_manifest_cannot_send_bind_data_where_it_does_not_belong():
    manifest = bind_manifest(
        "web",
        {
            "/etc": None,
            "/var/run/docker.sock": None,
            "/srv/stacks": None,  # holds the stacks folder
            "/srv/stacks/web/../../../etc/cron.d": "../../../etc/cron.d",
            "/data/../etc": None,
            "/srv/media/photos": None,  # a plain folder of the host: written back
            "/srv/stacks/web/data": "data",
        },
    )
    restored = plan(manifest, "web", "/srv/stacks/web", restore_binds=True, wanted=None)
    assert [(i.target, i.inside) for i in restored.items] == [
        ("/srv/media/photos", None),
        ("/srv/stacks/web/data", "data"),
    ]
    reasons = restored.skipped
    assert "system path" in reasons["bind:/etc"]
    assert "system path" in reasons["bind:/var/run/docker.sock"]
    assert "holds the stacks folder" in reasons["bind:/srv/stacks"]
    assert (
        "not a path inside the stack folder" in reasons["bind:/srv/stacks/web/../../../etc/cron.d"]
    )
    assert "not a plain absolute path" in reasons["bind:/data/../etc"]


def test_a_restore_never_writes_the_services_own_folders(app, tmp_path):
    data_dir = app.state.settings.data_dir.resolve()
    manifest = bind_manifest(
        "web", {str(data_dir): None, str(data_dir.parent): None, str(tmp_path / "media"): None}
    )
    archive = manifest_only(tmp_path / "a.tar", manifest)
    restored, _, _ = app.state.services.backups.restore_plan(archive, RestoreRequest())
    assert [i.target for i in restored.items] == [str(tmp_path / "media")]
    assert "holds this service's data folder" in restored.skipped[f"bind:{data_dir}"]
    assert "never written" in restored.skipped[f"bind:{data_dir.parent}"]


def test_an_nfs_volume_is_never_wiped(admin_client, app, docker_cleanup, docker_client):
    """Restored with overwrite, the files of an NFS or CIFS volume that are not in the
    archive stay: that share may be other machines' too. (This kernel mounts no NFS: the
    volume is a local one of the same name; what counts is what the archive says.)"""
    stack_id = f"nfs-{uuid.uuid4().hex[:6]}"
    docker_cleanup.compose_project(stack_id)
    archives_dir(app).mkdir(parents=True, exist_ok=True)
    name = f"{stack_id}--crafted--20260101T000000Z.tar"
    v2_archive(
        archives_dir(app) / name, stack_id, [entry("data/from-backup", data=b"1")], remote="nfs"
    )
    docker_client.volumes.create(f"{stack_id}_db", labels=docker_cleanup.labels)
    helper("volume", f"{stack_id}_db", "echo theirs > /data/shared-file")
    admin_client.post(f"/api/backups/{name}/restore", json={"overwrite": True})
    run = wait_run(admin_client, stack_id)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert any("not wiped" in ln["text"] for ln in run["progress"]["lines"])
    listed = helper("volume", f"{stack_id}_db", "ls /data").split()
    assert sorted(listed) == ["from-backup", "shared-file"]


def test_version_1_archives_still_restore(admin_client, stacks_dir, tmp_path, docker_cleanup):
    stack_id = f"old-{uuid.uuid4().hex[:6]}"
    docker_cleanup.compose_project(stack_id)
    old = v1_archive(tmp_path / "old.tar", stack_id, {"dump.sql": b"CREATE TABLE t;\n"})
    uploaded = upload(admin_client, old)
    assert uploaded.status_code == 201, uploaded.text
    assert uploaded.json()["format_version"] == 1
    admin_client.post(f"/api/backups/{uploaded.json()['name']}/restore", json={})
    run = wait_run(admin_client, stack_id)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert (stacks_dir / stack_id / ".env").read_text() == "FROM_V1=yes\n"
    assert helper("volume", f"{stack_id}_db", "cat /data/dump.sql") == "CREATE TABLE t;\n"


@pytest.mark.parametrize(
    "body",
    [b"", b"not a tar at all", b"\0" * 10240],
    ids=["empty", "garbage", "zeros"],
)
def test_an_upload_that_is_no_archive_is_refused(admin_client, app, body):
    refused = admin_client.put(
        "/api/backups/upload", content=body, headers={"Content-Type": "application/x-tar"}
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["detail"]
    folder = archives_dir(app)
    assert not folder.exists() or list(folder.iterdir()) == []


def test_a_damaged_archive_is_refused(admin_client, app, tmp_path):
    good = v2_archive(
        tmp_path / "a.tar",
        "damaged",
        [entry("data", tarfile.DIRTYPE), entry("data/f", data=b"1" * 5000)],
    )
    data = bytearray(good.read_bytes())
    data[700:720] = b"X" * 20  # inside the stack folder's gzip data
    (tmp_path / "b.tar").write_bytes(bytes(data))
    refused = upload(admin_client, tmp_path / "b.tar")
    assert refused.status_code == 400, refused.text
    assert list(archives_dir(app).iterdir()) == []


def _lines(run: dict) -> list[str]:
    return [line["text"] for line in run["progress"]["lines"]]


def test_a_crafted_archive_writes_only_the_binds_its_compose_file_declares(
    admin_client, app, stacks_dir, tmp_path, docker_cleanup
):
    """Binds in the manifest naming another stack's folder, the trash, the data folder
    and its runs, a link to the data folder on the host, root's keys, a folder the
    restored compose file does not bind: none written, each said why. The one bind the
    compose file declares is written."""
    stack_id = f"evil-{uuid.uuid4().hex[:6]}"
    docker_cleanup.compose_project(stack_id)
    victim = stacks_dir / "victim"
    victim.mkdir(parents=True)
    (victim / "compose.yaml").write_text("services: {}\n")
    data_dir = app.state.settings.data_dir
    link = tmp_path / "to-data"
    link.symlink_to(data_dir)
    media, other = tmp_path / "media", tmp_path / "other"
    media.mkdir()
    other.mkdir()
    compose = (
        "services:\n  app:\n    image: stackyard-test/busybox:1\n"
        f"    volumes: ['{media}:/media', '{link}:/linked']\n"
    )
    hostile = [
        entry("data", tarfile.DIRTYPE),
        entry("data/compose.yaml", data=b"services: {x: {image: x, privileged: true}}\n"),
        entry("data/secret_key", data=b"attacker's"),
    ]
    targets = [victim, stacks_dir / ".trash", data_dir, data_dir / "runs", link, other]
    binds = {str(t): hostile for t in targets} | {"/root/.ssh": hostile}
    binds[str(media)] = [entry("data", tarfile.DIRTYPE), entry("data/photo", data=b"p")]
    uploaded = upload(admin_client, bind_archive(tmp_path / "a.tar", stack_id, compose, binds))
    assert uploaded.status_code == 201, uploaded.text

    name = uploaded.json()["name"]
    preview = admin_client.post(f"/api/backups/{name}/restore/preview", json={}).json()
    # What the manifest names apart from the compose file's binds is left out from the start.
    assert sorted(w["path"] for w in preview["outside"]) == [str(media), str(other)]
    confirm = {"confirm_paths": [str(media), str(other)]}
    started = admin_client.post(f"/api/backups/{name}/restore", json=confirm)
    assert started.status_code == 202, started.text
    run = wait_run(admin_client, stack_id)
    assert run["status"] == "partial", run["progress"]["errors"]
    lines = _lines(run)
    said = {
        str(victim): "is inside the stacks folder",
        str(stacks_dir / ".trash"): "is inside the stacks folder",
        str(data_dir): "this service's data folder",
        str(data_dir / "runs"): "is inside this service's data folder",
        str(link): "leads through a symbolic link",
        "/root/.ssh": "system path",
        str(other): "the restored compose file does not bind it",
    }
    for path, why in said.items():
        assert any(path in line and why in line for line in lines), (path, lines)
    assert (media / "photo").read_bytes() == b"p"
    assert (victim / "compose.yaml").read_text() == "services: {}\n"
    assert not (stacks_dir / ".trash").exists()
    assert not (data_dir / "compose.yaml").exists()
    assert not (data_dir / "runs" / "compose.yaml").exists()
    assert list(other.iterdir()) == []


def _special_entries() -> list:
    device = entry("data/null", tarfile.CHRTYPE)
    device.devmajor, device.devminor, device.mode = 1, 5, 0o666
    setuid, content = entry("data/sh", data=b"#!/bin/sh\necho root\n")
    setuid.mode = 0o4755
    capable, script = entry("data/cap", data=b"#!/bin/sh\n")
    capable.pax_headers = {"SCHILY.xattr.security.capability": CAPABILITY.decode("ascii")}
    return [device, (setuid, content), (capable, script)]


def test_device_nodes_and_setuid_files_outside_volumes_are_written_only_when_asked(
    admin_client, app, stacks_dir, tmp_path, docker_cleanup
):
    stack_id = f"special-{uuid.uuid4().hex[:6]}"
    docker_cleanup.compose_project(stack_id)
    stack = [entry("data", tarfile.DIRTYPE), entry("data/compose.yaml", data=COMPOSE.encode())]
    crafted = v2_archive(
        tmp_path / "a.tar", stack_id, [entry("data", tarfile.DIRTYPE)], stack + _special_entries()
    )
    name = upload(admin_client, crafted).json()["name"]
    checked = admin_client.post(f"/api/backups/{name}/verify").json()
    assert checked["ok"] is True
    assert {m["member"]: m["special"] for m in checked["members"]} == {
        "stack.tar.gz": ["data/null", "data/sh", "data/cap"],
        "volumes/0.tar.gz": [],
    }

    admin_client.post(f"/api/backups/{name}/restore", json={})
    run = wait_run(admin_client, stack_id)
    assert run["status"] == "failed"
    assert (
        "setuid/setgid files or files with capabilities ('null', 'sh', 'cap')"
        in run["progress"]["errors"][0]
    )
    assert not (stacks_dir / stack_id).exists()

    admin_client.post(f"/api/backups/{name}/restore", json={"special_files": True})
    run = wait_run(admin_client, stack_id)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert (stacks_dir / stack_id / "sh").stat().st_mode & 0o7777 == 0o4755
    assert stat.S_ISCHR((stacks_dir / stack_id / "null").stat().st_mode)
    assert os.getxattr(stacks_dir / stack_id / "cap", "security.capability") == CAPABILITY
    restores = [
        e["detail"]
        for e in admin_client.get("/api/audit").json()["items"]
        if e["action"] == "backup.restore"
    ]
    assert any("with device nodes and setuid/setgid files" in (d or "") for d in restores)


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)
REFUSED_COMPOSE = {
    "env file outside": COMPOSE.replace("    volumes:", "    env_file: /etc/shadow\n    volumes:"),
    "include outside": "include: [../../../etc/compose.yaml]\n" + COMPOSE,
    "yaml bomb": BOMB + COMPOSE,
}


@pytest.mark.parametrize("kind", sorted(REFUSED_COMPOSE))
def test_a_compose_file_an_edit_would_refuse_refuses_the_restore(
    admin_client, app, stacks_dir, docker_cleanup, docker_client, kind
):
    """The restored compose file passes the checks of an edit before anything is written:
    the stack's folder as it was, its volume unmade, nothing staged left."""
    stack_id = f"refused-{uuid.uuid4().hex[:6]}"
    (stacks_dir / stack_id).mkdir()
    (stacks_dir / stack_id / "compose.yaml").write_text(COMPOSE)
    archives_dir(app).mkdir(parents=True, exist_ok=True)
    name = f"{stack_id}--crafted--20260101T000000Z.tar"
    stack = [
        entry("data", tarfile.DIRTYPE),
        entry("data/compose.yaml", data=REFUSED_COMPOSE[kind].encode()),
    ]
    v2_archive(archives_dir(app) / name, stack_id, [entry("data", tarfile.DIRTYPE)], stack)
    docker_cleanup.compose_project(stack_id)
    started = admin_client.post(f"/api/backups/{name}/restore", json={"overwrite": True})
    assert started.status_code == 202, started.text
    run = wait_run(admin_client, stack_id)
    assert run["status"] == "failed"
    (error,) = run["progress"]["errors"]
    assert "The archive's compose file is refused, as an edit would be" in error
    assert (stacks_dir / stack_id / "compose.yaml").read_text() == COMPOSE
    assert [p.name for p in stacks_dir.iterdir()] == [stack_id]
    assert docker_client.volumes.list(filters={"name": f"{stack_id}_db"}) == []
    # Audited as it ended: a failure, with why.
    (ended, started) = [
        e for e in admin_client.get("/api/audit").json()["items"] if e["action"] == "backup.restore"
    ]
    assert (started["outcome"], ended["outcome"]) == ("started", "failure")
    assert "refused, as an edit would be" in ended["detail"]


def test_a_manifest_nested_too_deeply_is_refused(admin_client, app, tmp_path):
    path = tmp_path / "deep.tar"
    with open(path, "wb") as file:
        writer = ArchiveWriter(file, 1_700_000_000)
        writer.add("manifest.json", b"[" * 100_000 + b"]" * 100_000)
        writer.close()
    refused = upload(admin_client, path)
    assert refused.status_code == 400, refused.text
    assert "not JSON" in refused.json()["detail"]
    folder = archives_dir(app)
    assert not folder.exists() or list(folder.iterdir()) == []
