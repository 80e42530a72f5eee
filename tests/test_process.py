"""The subprocess seam: limits, process groups killed on every exit path, minimal
environment, output decoding that never raises."""

import asyncio
import os
import random
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from stackyard import process
from stackyard.compose.probe import ComposeTool
from stackyard.compose.project import run_config
from stackyard.compose.runner import run_compose
from stackyard.errors import Invalid


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


def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


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
    done = process.run(
        [sys.executable, "-c", grab], timeout=60, limits=process.Limits(memory_mb=128)
    )
    assert done.returncode != 0
    assert "grew" not in done.stdout
    assert "MemoryError" in done.stderr

    # The same child under the default limit is fine: the limit is what stopped it.
    assert process.run([sys.executable, "-c", grab], timeout=60).stdout.strip() == "grew"


def test_a_child_that_spins_past_the_cpu_limit_dies():
    started = time.monotonic()
    done = process.run(
        [sys.executable, "-c", "while True: pass"],
        timeout=60,
        limits=process.Limits(cpu_seconds=1),
    )
    assert done.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
    assert time.monotonic() - started < 20


def test_limits_are_set_in_the_child_only():
    script = "import resource; print(*resource.getrlimit(resource.RLIMIT_DATA))"
    done = process.run(
        [sys.executable, "-c", script],
        timeout=30,
        limits=process.Limits(memory_mb=300, cpu_seconds=7),
    )
    assert done.stdout.split() == [str(300 * 2**20)] * 2
    assert resource.getrlimit(resource.RLIMIT_DATA)[0] != 300 * 2**20


def test_children_started_in_the_background_yield_the_cpu():
    """Background work (the list's resolutions, the periodic update check) runs niced,
    with what it starts; a request's child, and the service itself, do not."""
    own = os.getpriority(os.PRIO_PROCESS, 0)
    niceness = ["sh", "-c", "nice; sh -c nice"]  # the child and a grandchild
    assert process.run(niceness, timeout=30).stdout.split() == [str(own)] * 2
    with process.in_background():
        done = process.run(niceness, timeout=30)
    expected = min(own + process.BACKGROUND_NICE, 19)
    assert done.stdout.split() == [str(expected)] * 2
    assert process.run(niceness, timeout=30).stdout.split() == [str(own)] * 2
    assert os.getpriority(os.PRIO_PROCESS, 0) == own


def test_the_compose_binary_works_under_the_default_limits(tmp_path):
    (tmp_path / "compose.yaml").write_text("services:\n  web:\n    image: busybox\n")
    done = process.run(
        ["docker", "compose", "config", "--format", "json"], cwd=tmp_path, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert '"web"' in done.stdout


# -- process groups -----------------------------------------------------------------
def test_timeout_kills_the_child_and_its_grandchild():
    args, first, second = sleepers()
    started = time.monotonic()
    with pytest.raises(process.TimedOut, match="did not answer within 1 s"):
        process.run(args, timeout=1)
    assert time.monotonic() - started < 10
    wait_for(lambda: both_gone(first, second), 5)
    assert not process.live_groups()


def test_what_a_finished_child_left_running_is_killed_at_once():
    marker = str(random.randint(10**6, 10**7))
    started = time.monotonic()
    done = process.run(["sh", "-c", f"sleep {marker} & echo started"], timeout=30)
    assert done.stdout.strip() == "started"
    assert time.monotonic() - started < 5  # the orphan held the pipe: not waited for
    wait_for(lambda: not pids_running(f"sleep {marker}"), 5)


def test_cancelling_the_stream_kills_the_child_and_its_grandchild():
    args, first, second = sleepers()

    async def scenario():
        task = asyncio.create_task(process.stream(args, lambda chunk: None))
        while not (pids_running(first) and pids_running(second)):
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    wait_for(lambda: both_gone(first, second), 5)  # killed; gone once the kernel is done
    assert not process.live_groups()


def test_a_stream_with_a_timeout_kills_its_group():
    args, first, second = sleepers()
    with pytest.raises(process.TimedOut):
        asyncio.run(process.stream(args, lambda chunk: None, timeout=1))
    wait_for(lambda: both_gone(first, second), 5)


def test_kill_all_stops_every_live_child_with_its_group():
    async_args, a_first, a_second = sleepers()
    sync_args, s_first, s_second = sleepers()
    outcome: dict = {}

    def sync_call():
        try:
            outcome["sync"] = process.run(sync_args, timeout=600).returncode
        except Exception as exc:  # pragma: no cover - reported below
            outcome["sync"] = exc

    thread = threading.Thread(target=sync_call)
    thread.start()

    async def scenario():
        task = asyncio.create_task(process.stream(async_args, lambda chunk: None))
        # Both children made and registered (the needles match their `sh` at once).
        while len(process.live_groups()) < 2 or not all(
            pids_running(p) for p in (a_first, a_second, s_first, s_second)
        ):
            await asyncio.sleep(0.05)
        await asyncio.to_thread(process.kill_all)
        return await asyncio.wait_for(task, 10)

    try:
        code = asyncio.run(scenario())
    finally:
        process.kill_all()  # nothing of this test outlives it, whatever failed
    thread.join(10)
    assert code == -signal.SIGTERM
    assert outcome["sync"] == -signal.SIGTERM
    for needle in (a_first, a_second, s_first, s_second):
        wait_for(lambda needle=needle: not pids_running(needle), 5)


def test_run_compose_cancelled_leaves_no_process(tmp_path):
    args, first, second = sleepers()
    tool = ComposeTool(("sh", "-c", args[2], "sh"), "2.40.0", True)

    async def scenario():
        task = asyncio.create_task(run_compose(tool, tmp_path, ["up"], lambda line: None))
        while not (pids_running(first) and pids_running(second)):
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    wait_for(lambda: both_gone(first, second), 5)  # a SIGKILL takes a moment to land


# -- output and environment ---------------------------------------------------------
def test_output_that_is_not_utf8_is_decoded_with_replacement():
    done = process.run(["sh", "-c", r"printf 'a\377b'; printf 'c\376d' >&2"], timeout=10)
    assert done.stdout == "a\ufffdb" and done.stderr == "c\ufffdd"

    chunks: list[bytes] = []
    assert asyncio.run(process.stream(["printf", r"x\377y"], chunks.append)) == 0
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
    output = process.run(["env"], timeout=10).stdout
    assert "hunter2" not in output and "hijacked" not in output
    assert "HTTPS_PROXY=http://proxy:3128" in output
    assert "DOCKER_CONFIG=/somewhere/docker" in output
    assert f"PATH={os.environ['PATH']}" in output

    env = process.child_env("tcp://engine:2375", {"PATH": "/bin", "HOME": "/root", "X": "y"})
    assert env == {"PATH": "/bin", "HOME": "/root", "DOCKER_HOST": "tcp://engine:2375"}


def test_the_open_files_limit_is_raised_towards_the_hard_limit():
    """Under systemd the soft limit is often 1024: deep folder zips need more."""
    script = (
        "import resource\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        "from stackyard.process import raise_open_files_limit\n"
        "now = raise_open_files_limit(4096)\n"
        "print(now, resource.getrlimit(resource.RLIMIT_NOFILE)[0], hard)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    now, soft, hard = (int(v) for v in out.stdout.split())
    assert now == soft == min(4096, hard) and soft > 256


def test_malloc_arenas_are_limited_unless_the_environment_says_otherwise():
    """Eight threads that allocate at once get an arena each by default (memory kept for
    good); after the start-up call they share two. MALLOC_ARENA_MAX still wins."""
    script = (
        "import ctypes, ctypes.util, sys, threading\n"
        "from stackyard.process import limit_malloc_arenas\n"
        "print(limit_malloc_arenas(), flush=True)\n"
        "libc = ctypes.CDLL(ctypes.util.find_library('c'))\n"
        "barrier = threading.Barrier(9)\n"
        "def work():\n"
        "    libc.malloc(100000)\n"
        "    barrier.wait()\n"
        "    barrier.wait()\n"
        "threads = [threading.Thread(target=work) for _ in range(8)]\n"
        "for t in threads: t.start()\n"
        "barrier.wait()\n"
        "libc.malloc_stats()\n"  # one 'Arena N:' block per arena, on stderr
        "barrier.wait()\n"
    )

    def arenas(env: dict[str, str]) -> tuple[str, int]:
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        return out.stdout.strip(), out.stderr.count("\nArena ") + out.stderr.startswith("Arena ")

    base = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    assert arenas(base) == ("True", process.MALLOC_ARENAS)
    assert arenas({**base, "MALLOC_ARENA_MAX": "16"}) == ("False", 9)
