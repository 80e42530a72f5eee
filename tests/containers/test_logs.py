"""Logs of a stack's containers, against the real engine and a real server: the tail,
following, stdout and stderr told apart, a recreated container followed into its new
life, the whole log as a file, and a stream that ends on the server when the client goes."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.containers.sse import events
from tests.support.service import ADMIN_PASSWORD, USER_PASSWORD, sign_in
from tests.support.stacks import compose
from tests.support.waiting import PATIENCE, wait_until

pytestmark = pytest.mark.docker

#: Ten lines a second: `out-N` on stdout and `err-N` on stderr, numbered per life of the
#: container (`LIFE` from the stack's .env tells the lives apart).
COMPOSE = """services:
  talk:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    environment:
      LIFE: ${LIFE:-first}
    command:
      - sh
      - -c
      - |
        trap 'exit 0' TERM
        i=0
        while true; do
          i=$$((i+1)); echo out-$$LIFE-$$i; echo err-$$LIFE-$$i >&2
          sleep 0.1 & wait $$!
        done
  quiet:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
"""


@pytest.fixture
def server(shared_server):
    return shared_server


@pytest.fixture
def talking(server, docker_cleanup, docker_client) -> tuple[str, Path]:
    stack_id = f"talk-{uuid.uuid4().hex[:6]}"
    folder = Path(server.env["STACKS_DIR"]) / stack_id
    folder.mkdir()
    (folder / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(stack_id)
    compose(folder.parent, stack_id, "up", "-d")

    def lines(**stream: bool) -> int:
        return docker_client.api.logs(f"{stack_id}-talk-1", **stream).count(b"\n")

    wait_until(
        lambda: lines(stdout=True, stderr=False) >= 15 and lines(stdout=False, stderr=True) >= 15,
        what="15 lines of each stream",
    )
    return stack_id, folder


def bearer(server) -> dict[str, str]:
    with httpx.Client(base_url=server.url) as client:
        sign_in(client, "admin", ADMIN_PASSWORD)
        made = client.post("/api/auth/tokens", json={"name": "logs", "password": ADMIN_PASSWORD})
        assert made.status_code == 201, made.text
        return {"Authorization": f"Bearer {made.json()['token']}"}


def test_tail_then_follow_with_streams_told_apart(server, talking):
    stack_id, _ = talking
    headers = bearer(server)
    url = f"{server.url}/api/stacks/{stack_id}/logs"
    with httpx.stream("GET", url, params={"tail": 6}, headers=headers, timeout=30) as response:
        assert response.status_code == 200, response.read()
        stream = events(response)
        _, first = next(stream)
        tail = first["lines"]
        assert len(tail) == 6
        assert all(line["container"] == f"{stack_id}-talk-1" for line in tail)
        assert all(line["service"] == "talk" for line in tail)
        times = [line["time"] for line in tail]
        assert times == sorted(times)
        seen = list(tail)
        while len(seen) < 40:
            _, batch = next(stream)
            assert not batch["end"]
            seen += batch["lines"]
    for line in seen:
        kind = "out" if line["stream"] == "stdout" else "err"
        assert line["text"].startswith(f"{kind}-first-"), line
    # Following loses nothing and repeats nothing: per stream, the numbers count up by one.
    for kind in ("out", "err"):
        texts = [line["text"] for line in seen if line["text"].startswith(kind)]
        numbers = [int(text.rsplit("-", 1)[1]) for text in texts]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), (kind, numbers)


def test_only_one_service_and_no_follow(server, talking):
    stack_id, _ = talking
    headers = bearer(server)
    url = f"{server.url}/api/stacks/{stack_id}/logs"
    params = {"service": "talk", "tail": 4, "follow": "false"}
    with httpx.stream("GET", url, params=params, headers=headers, timeout=30) as response:
        received = list(events(response))
    assert [batch["end"] for _, batch in received] == [False, True]
    assert len(received[0][1]["lines"]) == 4
    missing = httpx.get(url, params={"service": "nope"}, headers=headers)
    assert missing.status_code == 404 and "talk" in missing.json()["detail"]


def test_a_recreated_container_is_followed_into_its_new_life(server, talking):
    stack_id, folder = talking
    headers = bearer(server)
    url = f"{server.url}/api/stacks/{stack_id}/logs"
    with httpx.stream(
        "GET", url, params={"service": "talk", "tail": 1}, headers=headers, timeout=60
    ) as response:
        stream = events(response)
        next(stream)
        (folder / ".env").write_text("LIFE=second\n")
        compose(folder.parent, stack_id, "up", "-d", "--force-recreate", "talk")
        deadline = time.monotonic() + PATIENCE
        texts: list[str] = []
        while time.monotonic() < deadline and not any("-second-5" in t for t in texts):
            _, batch = next(stream)
            texts += [line["text"] for line in batch["lines"]]
    assert any(t.startswith("out-first-") for t in texts)
    assert "out-second-1" in texts and "err-second-1" in texts  # from its very first line
    # After the switch nothing of the old life comes again.
    first_new = texts.index("out-second-1")
    assert not any("-first-" in t for t in texts[first_new + 2 :])


def test_the_whole_log_downloads_merged_by_time(server, talking):
    stack_id, _ = talking
    headers = bearer(server)
    response = httpx.get(
        f"{server.url}/api/stacks/{stack_id}/logs/download", headers=headers, timeout=30
    )
    assert response.status_code == 200
    assert "attachment" in response.headers["content-disposition"]
    assert f'filename="{stack_id}.log"' in response.headers["content-disposition"]
    lines = response.text.splitlines()
    assert len(lines) >= 20
    stamps = [line.split(" ", 1)[0] for line in lines]
    assert stamps == sorted(stamps)
    first = lines[0].split(" ", 3)
    assert first[1] == f"{stack_id}-talk-1" and first[2] in ("stdout", "stderr")
    assert any(line.endswith(" stderr err-first-1") for line in lines)


def _docker_sockets(pid: int) -> int:
    """Connections of the server to the engine's socket (each open log stream holds one)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    connected = 0
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 7 and fields[6] in inodes and fields[5] == "03":  # connected
            connected += 1
    return connected


def test_the_stream_ends_on_the_server_when_the_client_goes(server, talking):
    """Each followed stream holds two connections to the engine (the container's log and
    the project's events) while it is open; closing the page closes them. Pooled
    connections of the service's other calls come and stay (a few more when the machine
    is busy): ten streams leave at most a few more than one did, where a leak would leave
    twenty."""
    stack_id, _ = talking
    headers = bearer(server)
    pid = server.process.pid
    url = f"{server.url}/api/stacks/{stack_id}/logs"

    def follow_a_little() -> int:
        with httpx.stream("GET", url, headers=headers, timeout=30) as response:
            stream = events(response)
            next(stream)
            next(stream)
            return _docker_sockets(pid)

    def settled(at_most: int) -> int:
        wait_until(lambda: _docker_sockets(pid) <= at_most, what=f"at most {at_most} sockets")
        return _docker_sockets(pid)

    during = follow_a_little()
    after_one = settled(during - 2)  # the log stream and the events stream are gone
    for _ in range(9):
        assert follow_a_little() >= after_one + 2
    settled(after_one + 4)


def test_a_stream_its_client_named_ends_when_asked_and_completes(server, talking):
    """A page leaving asks the server to end its streams: the answer then completes (no
    `end` batch: the logs did not end), rather than being cut by the browser. Only the
    user who opened a stream ends it; a name nothing is open by is a 404."""
    stack_id, _ = talking
    headers = bearer(server)
    url = f"{server.url}/api/stacks/{stack_id}/logs"
    name = uuid.uuid4().hex
    end = f"{server.url}/api/streams/{name}/end"
    with httpx.stream("GET", url, params={"stream": name}, headers=headers, timeout=30) as response:
        stream = events(response)
        next(stream)
        with httpx.Client(base_url=server.url) as other:
            sign_in(other, "admin", ADMIN_PASSWORD)  # (the same user, by session cookie)
            token = other.cookies["stackyard_csrf"]
            someone = f"v-{name[:8]}"
            made = other.post(
                "/api/users",
                json={"username": someone, "password": USER_PASSWORD, "role": "viewer"},
                headers={"X-CSRF-Token": token},
            )
            assert made.status_code == 201, made.text
            with httpx.Client(base_url=server.url) as viewer:
                sign_in(viewer, someone, USER_PASSWORD)
                refused = viewer.post(
                    f"/api/streams/{name}/end",
                    headers={"X-CSRF-Token": viewer.cookies["stackyard_csrf"]},
                )
            assert refused.status_code == 404  # not theirs
            ended = other.post(f"/api/streams/{name}/end", headers={"X-CSRF-Token": token})
        assert ended.status_code == 204, ended.text
        rest = list(stream)  # the answer completes: the iteration stops
    assert all(not batch["end"] for _, batch in rest)
    assert httpx.post(end, headers=headers, timeout=30).status_code == 404
