"""YAML alias bombs: refused before compose runs (on save, in the list, for actions), and
compose itself held by the process limits even when it does meet one."""

import threading
import time
from pathlib import Path

import pytest

from stackyard.process import children
from tests.compose.test_yaml import BOMB, SELF_MERGE
from tests.process.test_children import pids_running
from tests.support.stacks import compose_text, service, wait_run
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker

BOMBS = [(BOMB, "too many YAML aliases"), (SELF_MERGE, "refers to the node that contains it")]


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_bombs_are_refused_on_save_and_in_the_list(admin_client, make_stack, stacks_dir):
    stack_id = make_stack("target", compose_text(web=service()))
    before = rss_mib()
    for text, message in BOMBS:
        started = time.monotonic()
        saved = admin_client.put(f"/api/stacks/{stack_id}/compose", json={"content": text})
        assert saved.status_code == 400 and message in saved.json()["detail"], saved.text
        created = admin_client.post("/api/stacks", json={"name": "bomb", "compose": text})
        assert created.status_code == 400 and message in created.json()["detail"]
        assert time.monotonic() - started < 10

    for index, (text, _) in enumerate(BOMBS):
        folder = stacks_dir / f"by-hand-{index}"
        folder.mkdir()
        (folder / "compose.yaml").write_text(text)
    started = time.monotonic()
    listing = admin_client.get("/api/stacks")
    assert listing.status_code == 200
    assert time.monotonic() - started < 10
    stacks = {s["id"]: s for s in listing.json()}
    for index, (_, message) in enumerate(BOMBS):
        assert stacks[f"by-hand-{index}"]["state"] == "invalid"
        assert message in stacks[f"by-hand-{index}"]["error"]
    assert stacks[stack_id]["state"] == "stopped"  # the old file was kept

    assert admin_client.post("/api/stacks/by-hand-0/actions/start").status_code == 202
    run = wait_run(admin_client, "by-hand-0", timeout=20)
    assert run["status"] == "failed" and "too many YAML aliases" in run["progress"]["errors"][0]
    assert admin_client.post("/api/stacks/updates/check").status_code == 200

    # No compose left behind: the service's own background reads of the stacks (each
    # `docker compose config` under its 60 s limit) may still be ending on a busy machine.
    wait_until(lambda: not pids_running(str(stacks_dir)), 90, "no compose run left")
    assert not children.live_groups()
    assert rss_mib() - before < 200


def rss_of(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def test_compose_meeting_a_bomb_is_held_by_the_limits(tmp_path):
    """Past the static check (run directly): compose stays within its memory limit and
    is gone at the end, dead or killed at the timeout."""
    (tmp_path / "compose.yaml").write_text(BOMB)
    outcome: dict = {}

    def call():
        try:
            outcome["code"] = children.run(
                ["docker", "compose", "--project-directory", str(tmp_path), "config"],
                cwd=tmp_path,
                timeout=15,
                limits=children.Limits(memory_mb=256),
            ).returncode
        except children.TimedOut as exc:
            outcome["code"] = exc

    thread = threading.Thread(target=call)
    started = time.monotonic()
    thread.start()
    peak = 0.0
    while thread.is_alive():
        peak = max([peak, *(rss_of(pid) for pid in pids_running(str(tmp_path)))])
        time.sleep(0.1)
    thread.join()
    assert time.monotonic() - started < 15 + 30  # its time limit, and a moment to end it
    assert outcome["code"] != 0
    assert 0 < peak < 256 + 64, f"compose grew to {peak:.0f} MiB"
    assert not pids_running(str(tmp_path)) and not children.live_groups()
