"""Children: limits, process groups killed on every exit path, minimal environment, output
decoding that never raises."""

import asyncio
import os
import random
import resource
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from stackyard.compose.probe import ComposeTool
from stackyard.compose.project import run_config
from stackyard.compose.runner import run_compose
from stackyard.errors import Invalid
from stackyard.process import children
from tests.support.waiting import PATIENCE, until, wait_until


def pids_running(*needles: str) -> list[int]:
    """Live (not zombie) processes whose command line contains every needle."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X") and all(needle in cmdline for needle in needles):
            found.append(int(entry.name))
    return found


def sleepers() -> tuple[list[str], str, str]:
    """`sh` with a background grandchild and a foreground child, each a unique sleep."""
    first = str(random.randint(10**6, 10**7))
    second = str(int(first) + 1)
    return ["sh", "-c", f"sleep {first} & sleep {second}"], f"sleep {first}", f"sleep {second}"


def both_gone(first: str, second: str) -> bool:
    return not pids_running(first) and not pids_running(second)


# -- limits -------------------------------------------------------------------------
def test_a_child_that_allocates_beyond_the_memory_limit_dies():
    grab = "b = bytearray(512 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); print('grew')"
    done = children.run(
        [sys.executable, "-c", grab], timeout=60, limits=children.Limits(memory_mb=128)
    )
    assert done.returncode != 0
    assert "grew" not in done.stdout
    assert "MemoryError" in done.stderr

    # The same child under the default limit is fine: the limit is what stopped it.
    assert children.run([sys.executable, "-c", grab], timeout=60).stdout.strip() == "grew"


def test_a_child_that_spins_past_the_cpu_limit_dies():
    started = time.monotonic()
    done = children.run(
        [sys.executable, "-c", "while True: pass"],
        timeout=60,
        limits=children.Limits(cpu_seconds=1),
    )
    assert done.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
    assert time.monotonic() - started < 20


def test_limits_are_set_in_the_child_only():
    script = "import resource; print(*resource.getrlimit(resource.RLIMIT_DATA))"
    done = children.run(
        [sys.executable, "-c", script],
        timeout=30,
        limits=children.Limits(memory_mb=300, cpu_seconds=7),
    )
    assert done.stdout.split() == [str(300 * 2**20)] * 2
    assert resource.getrlimit(resource.RLIMIT_DATA)[0] != 300 * 2**20


def test_the_compose_binary_works_under_the_default_limits(tmp_path):
    (tmp_path / "compose.yaml").write_text("services:\n  web:\n    image: busybox\n")
    done = children.run(
        ["docker", "compose", "config", "--format", "json"], cwd=tmp_path, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert '"web"' in done.stdout


# -- process groups -----------------------------------------------------------------
def test_timeout_kills_the_child_and_its_grandchild():
    args, first, second = sleepers()
    started = time.monotonic()
    with pytest.raises(children.TimedOut, match="did not answer within 1 s"):
        children.run(args, timeout=1)
    assert time.monotonic() - started < 10
    wait_until(lambda: both_gone(first, second))
    assert not children.live_groups()


def test_what_a_finished_child_left_running_is_killed_at_once():
    marker = str(random.randint(10**6, 10**7))
    started = time.monotonic()
    done = children.run(["sh", "-c", f"sleep {marker} & echo started"], timeout=30)
    assert done.stdout.strip() == "started"
    assert time.monotonic() - started < PATIENCE  # the orphan held the pipe: not waited for
    wait_until(lambda: not pids_running(f"sleep {marker}"))


def test_cancelling_the_stream_kills_the_child_and_its_grandchild():
    args, first, second = sleepers()

    async def scenario():
        task = asyncio.create_task(children.stream(args, lambda chunk: None))
        await until(lambda: pids_running(first) and pids_running(second), what="both children")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    wait_until(lambda: both_gone(first, second))  # killed; gone once the kernel is done
    assert not children.live_groups()


def test_a_stream_with_a_timeout_kills_its_group():
    args, first, second = sleepers()
    with pytest.raises(children.TimedOut):
        asyncio.run(children.stream(args, lambda chunk: None, timeout=1))
    wait_until(lambda: both_gone(first, second))


def test_kill_all_stops_every_live_child_with_its_group():
    async_args, a_first, a_second = sleepers()
    sync_args, s_first, s_second = sleepers()
    outcome: dict = {}

    def sync_call():
        try:
            outcome["sync"] = children.run(sync_args, timeout=600).returncode
        except Exception as exc:  # pragma: no cover - reported below
            outcome["sync"] = exc

    thread = threading.Thread(target=sync_call)
    thread.start()

    async def scenario():
        task = asyncio.create_task(children.stream(async_args, lambda chunk: None))
        # Both children made and registered (the needles match their `sh` at once).
        await until(
            lambda: (
                len(children.live_groups()) >= 2
                and all(pids_running(p) for p in (a_first, a_second, s_first, s_second))
            ),
            what="four children in two groups",
        )
        await asyncio.to_thread(children.kill_all)
        return await asyncio.wait_for(task, 10)

    try:
        code = asyncio.run(scenario())
    finally:
        children.kill_all()  # nothing of this test outlives it, whatever failed
    thread.join(10)
    assert code == -signal.SIGTERM
    assert outcome["sync"] == -signal.SIGTERM
    for needle in (a_first, a_second, s_first, s_second):
        wait_until(lambda needle=needle: not pids_running(needle))


def test_run_compose_cancelled_leaves_no_process(tmp_path):
    args, first, second = sleepers()
    tool = ComposeTool(("sh", "-c", args[2], "sh"), "2.40.0", True)

    async def scenario():
        task = asyncio.create_task(run_compose(tool, tmp_path, ["up"], lambda line: None))
        await until(lambda: pids_running(first) and pids_running(second), what="both children")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    wait_until(lambda: both_gone(first, second))  # a SIGKILL takes a moment to land


# -- output and environment ---------------------------------------------------------
def test_output_that_is_not_utf8_is_decoded_with_replacement():
    done = children.run(["sh", "-c", r"printf 'a\377b'; printf 'c\376d' >&2"], timeout=10)
    assert done.stdout == "a\ufffdb" and done.stderr == "c\ufffdd"

    chunks: list[bytes] = []
    assert asyncio.run(children.stream(["printf", r"x\377y"], chunks.append)) == 0
    assert b"".join(chunks) == b"x\xffy"


def test_compose_output_that_is_not_utf8_is_no_server_error(tmp_path):
    (tmp_path / "compose.yaml").write_text("services: {}\n")
    failing = ComposeTool(("sh", "-c", r"printf 'bad \377 byte' >&2; exit 1", "sh"), "2.40.0", True)
    with pytest.raises(Invalid, match="bad \ufffd byte"):
        run_config(failing, tmp_path)

    lines: list[str] = []
    printing = ComposeTool(("sh", "-c", r"printf 'one \377\ntwo\r\n'", "sh"), "2.40.0", True)
    assert asyncio.run(run_compose(printing, tmp_path, ["up"], lines.append)) == 0
    assert lines == ["one \ufffd", "two"]


def test_the_child_environment_is_minimal(monkeypatch):
    monkeypatch.setenv("STACKYARD_ADMIN_PASSWORD", "hunter2-admin")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:hunter2-db@h/db")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hunter2-aws")
    monkeypatch.setenv("COMPOSE_PROJECT_NAME", "hijacked")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("DOCKER_CONFIG", "/somewhere/docker")
    output = children.run(["env"], timeout=10).stdout
    assert "hunter2" not in output and "hijacked" not in output
    assert "HTTPS_PROXY=http://proxy:3128" in output
    assert "DOCKER_CONFIG=/somewhere/docker" in output
    assert f"PATH={os.environ['PATH']}" in output

    env = children.child_env("tcp://engine:2375", {"PATH": "/bin", "HOME": "/root", "X": "y"})
    assert env == {"PATH": "/bin", "HOME": "/root", "DOCKER_HOST": "tcp://engine:2375"}
