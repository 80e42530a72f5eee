"""A helper image without GNU tar (busybox's) keeps less, and says so: the manifest names
per part the tool that read it and what it did not keep, and what it kept comes back."""

from __future__ import annotations

import uuid

import pytest

from tests.backups.test_roundtrip import back_up, restore
from tests.backups.trees import decorate, make_tree, snapshot
from tests.support.service import settings_in
from tests.support.stacks import BUSYBOX, compose

pytestmark = pytest.mark.docker

COMPOSE = """services:
  app:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    volumes: ['db:/db', './inside:/inside']
volumes:
  db:
"""
#: What busybox tar and the engine's archive API do not keep.
NOT_KEPT = ["mtime_ns", "xattrs", "acls", "sparse", "trusted_xattrs"]


@pytest.fixture
def settings(tmp_path, stacks_dir, database_url):
    return settings_in(tmp_path, database_url=database_url, backup_helper_image=BUSYBOX)


def _kept_part(entries: dict[bytes, tuple]) -> dict[bytes, tuple]:
    """What busybox keeps of each entry: all but nanoseconds, xattrs and sparseness; and
    the engine's archive API, which writes it back, drops setuid on files with two links
    (both said in the runs)."""
    return {
        path: (line[0], line[1] if line[5] == 1 else "", *line[2:4], line[4] // 10**9, *line[5:9])
        for path, line in entries.items()
    }


def _lines(run: dict) -> list[str]:
    return [line["text"] for line in run["progress"]["lines"]]


def test_a_helper_without_gnu_tar_says_what_it_did_not_keep(
    admin_client, stacks_dir, docker_cleanup
):
    stack_id = f"bbox-{uuid.uuid4().hex[:6]}"
    folder = stacks_dir / stack_id
    (folder / "inside").mkdir(parents=True)
    (folder / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(stack_id)
    compose(stacks_dir, stack_id, "create")
    volume = f"{stack_id}_db"
    make_tree("volume", volume)
    decorate("volume", volume)
    before = snapshot("volume", volume)
    assert dict(before[b"./dir/file"][9])["user.note"] == b"kept \x00 binary"

    name = back_up(admin_client, stack_id)
    assert (
        "Not kept (ACLs, sparseness, times finer than a second, xattrs) in the stack folder, "
        f"{volume}, {folder / 'inside'}: the helper image has no GNU tar (BACKUP_HELPER_IMAGE)"
    ) in _lines(admin_client.get(f"/api/stacks/{stack_id}/run").json())
    manifest = admin_client.get(f"/api/backups/{name}").json()
    parts = {a["key"]: a["fidelity"] for a in manifest["assets"] if a["captured"]}
    assert parts[f"volume:{volume}"]["tool"] == "busybox-tar"
    assert parts[f"volume:{volume}"]["not_kept"] == NOT_KEPT
    assert "owners" in parts[f"volume:{volume}"]["kept"]
    assert manifest["stack_fidelity"] == {
        "tool": "engine",
        "kept": ["mode", "owners", "symlinks", "hardlinks", "fifos", "devices", "empty_folders"],
        "not_kept": NOT_KEPT,
    }

    compose(stacks_dir, stack_id, "down", "--volumes")
    restored = restore(admin_client, name, stack_id, overwrite=True)
    assert any("drops the setuid and setgid bits" in line for line in _lines(restored))
    after = snapshot("volume", volume)
    assert _kept_part(after) == _kept_part(before)
    assert after[b"./dir/file"][9] == ()  # said: not kept
