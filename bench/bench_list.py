"""The stack list with 300 stack folders never seen before (3 services each, a few started
for real): the first `GET /api/stacks` right after a start on a fresh data dir, and the
warm list; and the start-up to the first 200 of those starts.

Baseline in the same run: `docker compose ls --all --format json` (median of a few runs),
which only asks the engine (it reads no compose file). Goals: the first list after a start
at most 0.5x of it, the warm list at most 0.5x, the start-up at most 1.2 s. The first list
comes as a user's first page comes to it: a token made with the CLI as soon as the service
answers, who is signed in, then the list (`bench.common.first_list`). It is measured in
`BENCH_ROUNDS` starts (default 3), each on a fresh data dir; the goal lines give the best
and the median (the machine may be shared).

In the first round, the warm list is measured twice: while the background resolutions
(`docker compose config` per stack, off the request path) are running, and after they have
settled. The service reads every stack's files and builds the routes the first page asks
for when it starts (off the request path), so the first list after a start finds them
done; the background resolutions run niced, with a core left free on small hosts
(`stackyard.stacks.warmup`). What reading costs is measured too: 300 more folders made
after the start, listed at once (the list reads them on the request path).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from bench.common import (
    ROUNDS,
    VENV_BIN,
    compose_ls,
    first_list,
    free_port,
    goal,
    stackyard_env,
    start,
    workdir,
)
from stackyard.stacks.warmup import WORKERS

STACKS = 300
FIRST_GOAL = 0.5
WARM_GOAL = 0.5
START_GOAL = 1.2
STARTED = 6  # stacks started for real (3 containers each); two of them stopped again
WARM_CALLS = 20
LS_RUNS = 5
BUSYBOX = "stackyard-test/busybox:1"
BIG = "stackyard-test/big:1"


def _compose_text(n: int, label: str) -> str:
    services = []
    for i, image in enumerate((BUSYBOX, BIG, BUSYBOX)):
        services.append(
            f"  s{i}:\n"
            f"    image: {image}\n"
            f'    command: ["sleep", "3600"]\n'
            f"    labels: [{label}]\n"
            f"    environment:\n      STACK: stack{n:03d}\n"
            f"    restart: unless-stopped\n"
        )
    return "services:\n" + "".join(services)


def _compose(folder: Path, *args: str) -> None:
    subprocess.run(["docker", "compose", *args], cwd=folder, capture_output=True, check=True)


def _children(pid: int) -> int:
    """Processes whose parent is `pid` (the server's compose runs)."""
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if fields and fields[1] == str(pid):
            count += 1
    return count


def _settle(pid: int, timeout: float = 600) -> float:
    """Seconds until the server has had no child for 2 s in a row."""
    began = time.perf_counter()
    quiet_since = None
    while time.perf_counter() - began < timeout:
        if _children(pid):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.perf_counter()
        elif time.perf_counter() - quiet_since >= 2:
            return quiet_since - began
        time.sleep(0.1)
    raise RuntimeError("background resolutions did not settle")


def _warm(http: httpx.Client) -> float:
    times = []
    for _ in range(WARM_CALLS):
        began = time.perf_counter()
        http.get("/api/stacks").raise_for_status()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def _check(listed: list[dict], started: list[str]) -> None:
    by_id = {s["id"]: s for s in listed}
    assert len(by_id) == STACKS, len(by_id)
    states = [by_id[s]["state"] for s in started]
    assert states == ["running"] * (STARTED - 2) + ["stopped"] * 2, states
    assert all(len(s["services"]) == 3 for s in by_id.values())


def _after_the_first(server, http: httpx.Client, stacks: Path, label: str) -> None:
    """The first round's warm lists (while the background resolutions run, and after),
    then 300 folders more listed at once."""
    ls_times = [compose_ls() for _ in range(LS_RUNS)]
    during = _warm(http)
    settled_in = _settle(server.process.pid)
    ls_times += [compose_ls() for _ in range(LS_RUNS)]
    after = _warm(http)
    ls = statistics.median(ls_times)
    for n in range(STACKS):
        late = stacks / f"late{n:03d}"
        late.mkdir()
        (late / "compose.yaml").write_text(_compose_text(n, label))
    began = time.perf_counter()
    unread = http.get("/api/stacks").raise_for_status()
    cold = time.perf_counter() - began
    assert len(unread.json()) == 2 * STACKS
    for n in range(STACKS):
        shutil.rmtree(stacks / f"late{n:03d}")
    print(
        f"GET /api/stacks with {STACKS} more folders made after the start (read on the "
        f"request path): {cold * 1000:.1f} ms | ratio {cold / ls:.2f}",
        flush=True,
    )
    print(
        f"warm GET /api/stacks, median of {WARM_CALLS}: {after * 1000:.1f} ms "
        f"| docker compose ls --all: {ls * 1000:.1f} ms | ratio {after / ls:.2f} "
        f"(goal <= {WARM_GOAL})",
        flush=True,
    )
    print(
        f"warm GET /api/stacks while the background resolutions ran ({WORKERS} compose "
        f"at a time, niced): {during * 1000:.1f} ms | ratio {during / ls:.2f}; the background "
        f"resolutions settled {settled_in:.1f} s after that",
        flush=True,
    )


def run() -> None:
    folder = workdir()
    stacks = folder / "stacks"
    label = f"stackyard.bench={uuid.uuid4().hex[:8]}"
    started = [f"stack{n:03d}" for n in range(0, STACKS, STACKS // STARTED)][:STARTED]
    try:
        for n in range(STACKS):
            stack = stacks / f"stack{n:03d}"
            stack.mkdir(parents=True)
            (stack / "compose.yaml").write_text(_compose_text(n, label))
            (stack / ".env").write_text(f"STACK_NUMBER={n}\n")
        began = time.perf_counter()
        with ThreadPoolExecutor(STARTED) as pool:
            list(pool.map(lambda s: _compose(stacks / s, "up", "-d"), started))
        for stack_id in started[-2:]:
            _compose(stacks / stack_id, "stop", "-t", "0")
        print(
            f"setup: {STACKS} stack folders, {len(started)} started for real "
            f"({len(started) * 3} containers, 2 stacks stopped again) "
            f"in {time.perf_counter() - began:.1f} s",
            flush=True,
        )

        starts, firsts = [], []
        for round_ in range(ROUNDS):
            shutil.rmtree(folder / "data", ignore_errors=True)  # every stack never seen
            env = stackyard_env(folder)
            port = free_port()
            server = start(
                [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)],
                env,
                "/api/health",
                port,
            )
            try:
                listed = first_list(server, folder, env)
                _check(listed.stacks, started)
                starts.append(server.seconds_to_ready)
                firsts.append(listed.ratio)
                print(
                    f"round {round_ + 1}: start-up to first 200 {server.seconds_to_ready:.3f} s "
                    f"| first GET /api/stacks ({STACKS} stacks never seen, fresh data dir) "
                    f"{listed.seconds * 1000:.1f} ms | docker compose ls --all "
                    f"{listed.compose_ls * 1000:.1f} ms | ratio {listed.ratio:.2f}",
                    flush=True,
                )
                if round_ == 0:
                    with httpx.Client(
                        base_url=server.url,
                        timeout=600,
                        headers={"Authorization": f"Bearer {listed.token}"},
                    ) as http:
                        _after_the_first(server, http, stacks, label)
            finally:
                server.stop()
        goal("start-up to first 200", starts, START_GOAL, " s")
        goal("first GET /api/stacks after a start / docker compose ls", firsts, FIRST_GOAL, "x")
    finally:
        with ThreadPoolExecutor(STARTED) as pool:
            list(
                pool.map(
                    lambda s: subprocess.run(
                        ["docker", "compose", "down", "-t", "0"],
                        cwd=stacks / s,
                        capture_output=True,
                    ),
                    started,
                )
            )
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    run()
