"""Tuning: the children of background work run nicer than the service, the open-files
limit is raised, malloc arenas are limited unless the environment says otherwise."""

import os
import subprocess
import sys

from stackyard.process import children, tuning


def test_children_started_in_the_background_yield_the_cpu():
    """Background work (the list's resolutions, the periodic update check) runs niced,
    with what it starts; a request's child, and the service itself, do not."""
    own = os.getpriority(os.PRIO_PROCESS, 0)
    niceness = ["sh", "-c", "nice; sh -c nice"]  # the child and a grandchild
    assert children.run(niceness, timeout=30).stdout.split() == [str(own)] * 2
    with tuning.in_background():
        done = children.run(niceness, timeout=30)
    expected = min(own + tuning.BACKGROUND_NICE, 19)
    assert done.stdout.split() == [str(expected)] * 2
    assert children.run(niceness, timeout=30).stdout.split() == [str(own)] * 2
    assert os.getpriority(os.PRIO_PROCESS, 0) == own


def test_the_open_files_limit_is_raised_towards_the_hard_limit():
    """Under systemd the soft limit is often 1024: deep folder zips need more."""
    script = (
        "import resource\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        "from stackyard.process.tuning import raise_open_files_limit\n"
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
        "from stackyard.process.tuning import limit_malloc_arenas\n"
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
    assert arenas(base) == ("True", tuning.MALLOC_ARENAS)
    assert arenas({**base, "MALLOC_ARENA_MAX": "16"}) == ("False", 9)
