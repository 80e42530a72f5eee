"""A program started for a request dies with it when the client goes away: a real server,
a compose tool that never finishes `config`, and a client that closes its connection
once it runs."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.support.service import (
    ADMIN_PASSWORD,
    ANSWER_WITHIN,
    service_env,
    sign_in,
    start_server,
)
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
        with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as admin:
            sign_in(admin, "admin", ADMIN_PASSWORD)
            edit = admin.build_request(
                "PUT", "/api/stacks/demo/compose", json={"content": COMPOSE + "# edited\n"}
            )
        # The client goes away once the check runs (a time limit of its own would decide
        # alone, on a busy machine, whether the check had begun by then).
        with sent(edit):
            wait_until(mark.exists, what="compose config started")
        pid = int(mark.read_text())
        wait_until(lambda: not alive(pid), what="compose config ended with its request")
        # The save did not happen, and its scratch file goes once the check has ended.
        folder = tmp_path / "stacks" / "demo"
        wait_until(lambda: os.listdir(folder) == ["compose.yaml"], what="the scratch file gone")
        assert (folder / "compose.yaml").read_text() == COMPOSE
    finally:
        server.stop()


@contextlib.contextmanager
def sent(request: httpx.Request) -> Iterator[None]:
    """`request` sent on a connection of its own, closed at the end without its answer
    having been read (as a client that gives up closes it)."""
    url = request.url
    head = [f"{request.method} {url.raw_path.decode()} HTTP/1.1"]
    head += [f"{name}: {value}" for name, value in request.headers.items()]
    with socket.create_connection((url.host, url.port or 80)) as connection:
        connection.sendall("\r\n".join(head).encode() + b"\r\n\r\n" + request.read())
        yield
