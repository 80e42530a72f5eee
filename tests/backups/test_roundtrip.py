"""A stack with all its data, backed up and restored, on the real engine: a named volume
and bind folders (inside and outside the stack folder) holding files of several owners
(ids above 65535) and modes (setuid, also on a file with two links, a 0555 folder),
symlinks (relative, absolute, dangling), hardlinks, a FIFO, empty folders, xattrs, ACLs,
a file capability, sparse files, nanosecond times, and names of every kind (non-ASCII,
not UTF-8, a newline, a leading dash, 255 bytes, a path of 4,000 bytes). After a restore
every entry's type, mode, owner, group, mtime (ns), link count, size, content hash, link
target, xattrs and sparseness are what they were (`trees.snapshot`): restored in place
(over changed data, which must not survive) and under a new name (a clone beside the
original)."""

from __future__ import annotations

import os
import tarfile
import uuid
from pathlib import Path

import pytest
from zlib_ng import gzip_ng, zlib_ng

from stackyard.files.zipstream import file_chunks
from tests.backups.trees import (
    LONG,
    ODD_NAMES,
    decorate,
    helper,
    make_deep,
    make_tree,
    snapshot,
)
from tests.support.service import settings_in
from tests.support.stacks import BUSYBOX, HELPER, compose, start_restore, wait_run

pytestmark = pytest.mark.docker

COMPOSE = """services:
  app:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    volumes:
      - db:/var/lib/db
      - ./data:/data
      - {outside}:/outside
      - ./app.ini:/etc/app.ini
      - {outside_file}:/etc/outside.conf
    environment:
      SECRET: ${{SECRET}}
volumes:
  db:
"""


#: The userland of the default helper image (debian:bookworm-slim): dash, coreutils and
#: GNU tar run the restore's scripts there.
DEBIAN = "stackyard-test/debian:bookworm"


@pytest.fixture
def helper_image() -> str:
    return HELPER


@pytest.fixture
def settings(tmp_path, stacks_dir, database_url, helper_image):
    return settings_in(tmp_path, database_url=database_url, backup_helper_image=helper_image)


@pytest.fixture
def rich_stack(stacks_dir, tmp_path, docker_cleanup) -> tuple[str, Path]:
    stack_id = f"round-{uuid.uuid4().hex[:6]}"
    folder = stacks_dir / stack_id
    (folder / "data").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    outside_file = tmp_path / "outside.conf"
    outside_file.write_text("outside=1\n")
    os.chmod(outside_file, 0o600)
    (folder / "compose.yaml").write_text(COMPOSE.format(outside=outside, outside_file=outside_file))
    (folder / ".env").write_text("SECRET=hunter2\n")
    (folder / ".secrets").write_text("TOKEN=t0k3n\n")
    (folder / "config").mkdir()
    (folder / "config" / "app.ini").write_text("[app]\n")
    (folder / "app.ini").write_text("[bound]\n")
    os.chmod(folder / "app.ini", 0o640)
    # Names a plain tar header cannot hold, in the stack folder itself (which holds
    # binds, so it is archived in parts and renamed under data/).
    (folder / "ünïcødé").write_text("grüße\n")
    long = folder / "long" / LONG / LONG
    long.mkdir(parents=True)
    (long / f"{LONG}.txt").write_text("deep\n")
    os.link(long / f"{LONG}.txt", folder / "long" / "hard-to-deep")
    for odd in ODD_NAMES:
        (folder / os.fsdecode(odd)).write_bytes(odd)
    make_deep(folder)  # a path of 3,949 bytes in the stack folder too
    os.setxattr(folder / "config" / "app.ini", "user.origin", b"stack folder")
    docker_cleanup.compose_project(stack_id)
    compose(stacks_dir, stack_id, "create")  # the volume exists; nothing runs
    for kind, source in [("volume", f"{stack_id}_db"), ("bind", str(folder / "data"))]:
        make_tree(kind, source)
        decorate(kind, source)
    make_tree("bind", str(outside))
    decorate("bind", str(outside))
    os.utime(folder / "config", ns=(0, 1_500_000_000_000_000_001))
    os.utime(folder, ns=(0, 1_500_000_000_987_654_321))  # the folder that holds binds
    return stack_id, outside


def back_up(client, stack_id: str, **body) -> str:
    started = client.post(f"/api/stacks/{stack_id}/backups", json=body)
    assert started.status_code == 202, started.text
    run = wait_run(client, stack_id)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert run["action"] == "backup" and run["progress"]["percent"] == 100.0
    (newest,) = [a for a in client.get("/api/backups").json() if a["stack_id"] == stack_id][:1]
    return newest["name"]


def restore(client, name: str, target: str, **body) -> dict:
    """The bind folders hold setuid files: written back only when asked for."""
    started = start_restore(client, name, **({"special_files": True} | body))
    assert started.status_code == 202, started.text
    run = wait_run(client, target)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    assert run["progress"]["stage"] == "Writing the data (2 of 2)"  # after the check
    return run


@pytest.mark.parametrize("helper_image", [HELPER, DEBIAN])
def test_everything_comes_back_in_place_and_as_a_clone(admin_client, rich_stack, stacks_dir):
    stack_id, outside = rich_stack
    folder = stacks_dir / stack_id
    before = {
        "volume": snapshot("volume", f"{stack_id}_db"),
        "data": snapshot("bind", str(folder / "data")),
        "outside": snapshot("bind", str(outside)),
        "stack": _stack_files(folder),
    }
    # (type, mode, uid, gid, mtime, links, size, hash, target, xattrs, sparse, device)
    assert before["stack"]["./ünïcødé".encode()][1] == "0o644"
    assert before["stack"][f"./long/{LONG}/{LONG}/{LONG}.txt".encode()][5] == 2
    assert before["stack"][b"."][4] == 1_500_000_000_987_654_321
    assert before["volume"][b"./owned"][1:4] == ("0o644", 100000, 200000)
    assert before["volume"][b"./suid"][1] == "0o4755"
    assert before["volume"][b"./suid-hard"][1] == "0o4750"
    assert before["volume"][b"./sgid"][1] == "0o2755"
    assert before["volume"][b"./sticky"][1] == "0o1777"
    assert before["volume"][b"./suid-hard"][5] == 2
    assert before["volume"][b"./hard1"][5] == 2
    assert before["volume"][b"./sparse"][10] is True
    assert before["volume"][b"./dev-null"][11] == os.makedev(1, 3)
    assert dict(before["volume"][b"./dir/file"][9]).keys() == {
        "user.note",
        "system.posix_acl_access",
    }
    assert before["volume"][b"."][4] == 1_600_000_000_123_456_794
    assert max(len(path) for path in before["volume"]) > 3900
    assert max(len(path) for path in before["stack"]) > 3900

    name = back_up(admin_client, stack_id)
    manifest = admin_client.get(f"/api/backups/{name}").json()
    assert manifest["format_version"] == 2 and manifest["stack_id"] == stack_id
    captured = {a["key"]: a for a in manifest["assets"]}
    assert captured[f"volume:{stack_id}_db"]["captured"]
    assert all(a["sha256"] and a["bytes"] > 0 for a in captured.values() if a["captured"])
    assert manifest["inventory"]["assets"]
    # Read by GNU tar: everything kept but trusted.* xattrs, and the manifest says so.
    assert manifest["stack_fidelity"]["tool"] == "gnu-tar"
    for asset in (a for a in manifest["assets"] if a["captured"]):
        assert asset["fidelity"]["tool"] == "gnu-tar"
        assert asset["fidelity"]["not_kept"] == ["trusted_xattrs"]

    # Changed after the backup: these must not survive the restore.
    (folder / "data" / "new-after-backup").write_text("x")
    helper("volume", f"{stack_id}_db", "echo late > /data/new-after-backup")
    (folder / "data" / "dir" / "file").write_text("changed")
    (folder / "compose.yaml").write_text((folder / "compose.yaml").read_text() + "# edited\n")
    (folder / ".env").write_text("SECRET=changed\n")
    (folder / "app.ini").write_text("[changed]\n")
    (outside.parent / "outside.conf").write_text("outside=2\n")
    (folder / "kept.txt").write_text("not in the archive: stays")

    assert admin_client.post(f"/api/backups/{name}/restore", json={}).status_code == 409
    # Outside the stack folder only what the user saw and confirmed.
    preview = admin_client.post(f"/api/backups/{name}/restore/preview", json={"overwrite": True})
    outside_file = outside.parent / "outside.conf"
    assert preview.json()["stack_exists"] is True
    assert {(w["path"], w["replaced"]) for w in preview.json()["outside"]} == {
        (str(outside), True),
        (str(outside_file), True),
    }
    unconfirmed = admin_client.post(f"/api/backups/{name}/restore", json={"overwrite": True})
    assert unconfirmed.status_code == 409 and str(outside) in unconfirmed.json()["detail"]
    restore(admin_client, name, stack_id, overwrite=True)
    # Its audit entry, written as it ended, names every path it wrote.
    ended = next(
        e
        for e in admin_client.get("/api/audit").json()["items"]
        if e["action"] == "backup.restore" and e["outcome"] == "success"
    )
    for wrote in ("stack folder", f"volume {stack_id}_db", str(outside), str(outside_file)):
        assert wrote in ended["detail"], ended
    assert snapshot("volume", f"{stack_id}_db") == before["volume"]
    assert snapshot("bind", str(folder / "data")) == before["data"]
    assert snapshot("bind", str(outside)) == before["outside"]
    assert _stack_files(folder) == before["stack"] | _stack_files(folder, only=b"./kept.txt")
    assert "# edited" not in (folder / "compose.yaml").read_text()  # stack files come back
    assert (folder / ".env").read_text() == "SECRET=hunter2\n"
    assert (folder / ".secrets").read_text() == "TOKEN=t0k3n\n"
    # Bound files, inside the stack folder and outside it, with their modes.
    assert (folder / "app.ini").read_text() == "[bound]\n"
    assert (folder / "app.ini").stat().st_mode & 0o777 == 0o640
    assert (outside.parent / "outside.conf").read_text() == "outside=1\n"
    assert (outside.parent / "outside.conf").stat().st_mode & 0o777 == 0o600
    # What the archive does not know stays; nothing of the switch is left behind.
    assert (folder / "kept.txt").read_text() == "not in the archive: stays"
    assert [p.name for p in stacks_dir.iterdir() if p.name.startswith(".")] == []
    assert ".stackyard" not in helper("volume", f"{stack_id}_db", "ls -a /data")

    clone = f"{stack_id}-clone"
    # A clone's bind folders outside the stack folder are new ones beside the original's.
    cloned_outside = outside.parent / f"outside-{clone}"
    cloned_file = outside.parent / f"outside.conf-{clone}"
    preview = admin_client.post(f"/api/backups/{name}/restore/preview", json={"stack": clone})
    assert {(w["path"], w["replaced"]) for w in preview.json()["outside"]} == {
        (str(cloned_outside), False),
        (str(cloned_file), False),
    }
    restore(admin_client, name, clone, stack=clone)
    assert snapshot("volume", f"{clone}_db") == before["volume"]
    assert snapshot("bind", str(cloned_outside)) == before["outside"]
    assert cloned_file.read_text() == "outside=1\n"
    assert snapshot("bind", str(stacks_dir / clone / "data")) == before["data"]
    assert (stacks_dir / clone / "config" / "app.ini").read_text() == "[app]\n"
    assert (stacks_dir / clone / "app.ini").read_text() == "[bound]\n"
    assert (stacks_dir / clone / "ünïcødé").read_text() == "grüße\n"
    # The clone is a stack of its own beside the original: compose resolves it to its
    # own folder and volume.
    config = compose(stacks_dir, clone, "config", "--format", "json").stdout
    assert f'"{stacks_dir / clone / "data"}"' in config and f'"{clone}_db"' in config
    assert f'"{cloned_outside}"' in config and f'"{cloned_file}"' in config
    assert f'"{outside}"' not in config
    assert snapshot("bind", str(outside)) == before["outside"]  # the original's, untouched
    assert outside_file.read_text() == "outside=1\n"


def _stack_files(folder: Path, only: bytes | None = None) -> dict[bytes, tuple]:
    """The snapshot of the stack folder's own files (the binds inside it apart), or of
    one of them."""
    entries = snapshot("bind", str(folder))
    return {
        path: line
        for path, line in entries.items()
        if not path.startswith((b"./data/", b"./app.ini")) and (only is None or path == only)
    }


def _fingerprint(docker_client, volume: str) -> tuple[int, int, int]:
    """Size, modification time and CRC-32 of the content of the volume's `huge`, read on
    this machine where the engine keeps the volume, its holes not read (reading 4 GiB of
    a new sparse file fills the page cache with zeros: 15 s, against 1 s here)."""
    path = Path(docker_client.volumes.get(volume).attrs["Mountpoint"]) / "huge"
    crc = 0
    for chunk in file_chunks(path.open("rb", buffering=0), "huge"):
        crc = zlib_ng.crc32(chunk, crc)
    return path.stat().st_size, int(path.stat().st_mtime), crc


def test_a_file_over_4_gib_comes_back_whole(
    admin_client, stacks_dir, docker_cleanup, docker_client
):
    """Past the 4 GiB marks of zip and of old tar headers: a (sparse) file of 4.1 GiB,
    with data at its start, middle and end, restored over itself."""
    stack_id = f"huge-{uuid.uuid4().hex[:6]}"
    folder = stacks_dir / stack_id
    folder.mkdir()
    (folder / "compose.yaml").write_text(
        "services:\n  app:\n    image: stackyard-test/busybox:1\n"
        "    labels: [stackyard.test=stack]\n    volumes: ['big:/big']\nvolumes:\n  big:\n"
    )
    docker_cleanup.compose_project(stack_id)
    compose(stacks_dir, stack_id, "create")
    volume = f"{stack_id}_big"
    helper(
        "volume",
        volume,
        "cd /data && truncate -s 4400000000 huge"
        " && printf start | dd of=huge conv=notrunc 2>/dev/null"
        " && printf middle | dd of=huge bs=1 seek=4294967296 conv=notrunc 2>/dev/null"
        " && printf end >> huge && touch -d @1600000000 huge",
    )
    before = _fingerprint(docker_client, volume)
    assert before[:2] == (4400000003, 1600000000)

    name = back_up(admin_client, stack_id)
    helper("volume", volume, "printf changed | dd of=/data/huge conv=notrunc 2>/dev/null")
    restore(admin_client, name, stack_id, overwrite=True)
    assert _fingerprint(docker_client, volume) == before


def test_what_is_left_out_stays_out_and_a_restore_can_take_one_part(
    admin_client, rich_stack, stacks_dir, app
):
    """A bind folder inside the stack folder that was not chosen is not in the archive
    through the stack folder either; a restore of one volume leaves the folders alone."""
    stack_id, _outside = rich_stack
    folder = stacks_dir / stack_id
    name = back_up(admin_client, stack_id, binds=[])
    path = app.state.settings.data_dir / "backups" / name
    assert path.stat().st_mode & 0o777 == 0o600  # it holds the stack's .secrets
    with tarfile.open(path) as outer:
        stack_tar = outer.extractfile("stack.tar.gz")
        assert stack_tar is not None
        with tarfile.open(fileobj=gzip_ng.GzipNGFile(fileobj=stack_tar), mode="r|") as inner:
            names = [member.name for member in inner]
    assert "data/compose.yaml" in names and "data/config/app.ini" in names
    assert not any(n == "data/data" or n.startswith("data/data/") for n in names)
    manifest = admin_client.get(f"/api/backups/{name}").json()
    skipped = {a["key"]: a["skipped"] for a in manifest["assets"] if not a["captured"]}
    assert skipped[f"bind:{folder / 'data'}"] == "not selected"

    before = snapshot("bind", str(folder / "data"))
    (folder / "data" / "made-later").write_text("stays")
    helper("volume", f"{stack_id}_db", "echo later > /data/later")
    restore(admin_client, name, stack_id, overwrite=True, assets=["db"])
    assert helper("volume", f"{stack_id}_db", "ls /data/later 2>&1 || true").startswith("ls:")
    assert (folder / "data" / "made-later").read_text() == "stays"
    assert snapshot("bind", str(folder / "data")) != before  # untouched: still has its new file


@pytest.mark.parametrize("helper_image", [HELPER, BUSYBOX])
def test_owners_beyond_a_tar_header_are_kept(
    admin_client, stacks_dir, docker_cleanup, helper_image
):
    """Ids above 16777215 (8 octal digits, all a plain tar header holds): the volume is
    read the exact way (GNU tar's PAX headers, or without it the engine's archive API),
    and the owner comes back as it was."""
    stack_id = f"wide-{uuid.uuid4().hex[:6]}"
    folder = stacks_dir / stack_id
    folder.mkdir()
    (folder / "compose.yaml").write_text(
        "services:\n  app:\n    image: stackyard-test/busybox:1\n"
        "    labels: [stackyard.test=stack]\n    volumes: ['ids:/ids']\nvolumes:\n  ids:\n"
    )
    docker_cleanup.compose_project(stack_id)
    compose(stacks_dir, stack_id, "create")
    volume = f"{stack_id}_ids"
    helper("volume", volume, "echo x > /data/f && chown 20000000:30000000 /data/f")
    inventory = admin_client.get(f"/api/stacks/{stack_id}/backup/inventory").json()
    assert [a["wide_ids"] for a in inventory["assets"]] == [True]
    name = back_up(admin_client, stack_id)
    (asset,) = admin_client.get(f"/api/backups/{name}").json()["assets"]
    assert asset["fidelity"]["tool"] == ("gnu-tar" if helper_image == HELPER else "engine")
    helper("volume", volume, "chown 0:0 /data/f")
    restore(admin_client, name, stack_id, overwrite=True)
    assert helper("volume", volume, "stat -c '%u %g' /data/f") == "20000000 30000000\n"


def test_everything_comes_back_through_a_repository(
    admin_client, rich_stack, stacks_dir, tmp_path, docker_cleanup
):
    """Backed up straight into a restic repository (its parts split into data and
    metadata, deduplicated, encrypted), pulled back as an archive and restored as a
    clone: every entry as it was."""
    stack_id, outside = rich_stack
    folder = stacks_dir / stack_id
    before = {
        "volume": snapshot("volume", f"{stack_id}_db"),
        "data": snapshot("bind", str(folder / "data")),
        "outside": snapshot("bind", str(outside)),
    }
    made = admin_client.post(
        "/api/destinations/repositories",
        json={
            "name": "vault",
            "settings": {
                "type": "repository",
                "location": {"type": "folder", "path": str(tmp_path / "repo")},
            },
        },
    )
    assert made.status_code == 201, made.text
    vault = made.json()["destination"]["id"]
    started = admin_client.post(f"/api/destinations/{vault}/backups", json={"stack": stack_id})
    assert started.status_code == 202, started.text
    run = wait_run(admin_client, stack_id)
    assert run["status"] == "succeeded", run["progress"]["errors"]
    name = run["artifact"]
    assert name not in {a["name"] for a in admin_client.get("/api/backups").json()}
    pulled = admin_client.post(f"/api/destinations/{vault}/archives/{name}/pull")
    assert pulled.status_code == 202, pulled.text
    assert wait_run(admin_client, stack_id)["status"] == "succeeded"
    manifest = admin_client.get(f"/api/backups/{name}").json()
    assert manifest["stack_member"] == "stack.tar"  # (plain tars: restic gave them back)

    clone = f"{stack_id}-vault"
    docker_cleanup.compose_project(clone)
    restore(admin_client, name, clone, stack=clone)
    assert snapshot("volume", f"{clone}_db") == before["volume"]
    assert snapshot("bind", str(stacks_dir / clone / "data")) == before["data"]
    assert snapshot("bind", str(outside.parent / f"outside-{clone}")) == before["outside"]
    assert (stacks_dir / clone / "ünïcødé").read_text() == "grüße\n"
    assert (stacks_dir / clone / ".secrets").read_text() == "TOKEN=t0k3n\n"
