"""A program started for a request dies with it when the client goes away: a real server,
a compose tool that never finishes `config`, and a client that gives up."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from tests.support.service import ADMIN_PASSWORD, service_env, sign_in, start_server
from tests.support.waiting import wait_until

COMPOSE = "services:\n  web:\n    image: stackyard-test/busybox:1\n"


def fake_docker(folder: Path, mark: Path) -> Path:
    """A `docker` whose `compose version` answers and whose `compose config` of a saved
    candidate never ends (its pid written to `mark`)."""
    folder.mkdir()
    script = folder / "docker"
    script.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        '  *"version --short"*) echo 2.40.3 ;;\n'
        f'  *stackyard-check*config*) echo $$ > "{mark}"; exec sleep 300 ;;\n'
        "  *) exit 1 ;;\n"
        "esac\n"
    )
    script.chmod(0o755)
    return folder


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_compose_config_is_killed_when_the_client_goes_away(tmp_path: Path):
    mark = tmp_path / "config.pid"
    bin_dir = fake_docker(tmp_path / "bin", mark)
    (tmp_path / "stacks" / "demo").mkdir(parents=True)
    (tmp_path / "stacks" / "demo" / "compose.yaml").write_text(COMPOSE)
    env = service_env(tmp_path, PATH=f"{bin_dir}:{os.environ['PATH']}")
    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url) as admin:
            sign_in(admin, "admin", ADMIN_PASSWORD)
            # The stack's routes and project made first: on a busy machine they took
            # most of the time the client gives the check below.
            assert admin.get("/api/stacks/demo").status_code == 200
            with pytest.raises(httpx.ReadTimeout):  # the client gives up after 4 s
                admin.put(
                    "/api/stacks/demo/compose",
                    json={"content": COMPOSE + "# edited\n"},
                    timeout=httpx.Timeout(10, read=4),
                )
        pid = int(mark.read_text())
        wait_until(lambda: not alive(pid), what="compose config ended with its request")
        # The save did not happen, and its scratch file goes once the check has ended.
        folder = tmp_path / "stacks" / "demo"
        wait_until(lambda: os.listdir(folder) == ["compose.yaml"], what="the scratch file gone")
        assert (folder / "compose.yaml").read_text() == COMPOSE
    finally:
        server.stop()
