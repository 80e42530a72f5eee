"""Start-up time to the first 200 from /api/health, idle RSS, and the first stack list
after a start.

Each start is a first start: a fresh data folder (so the schema is made and the first
admin's password hashed) beside a stacks folder of 300 stacks (three services each), with
byte code compiled as the image has it (scripts/setup.sh compiles the environment). The
baseline is the same web stack (uvicorn + FastAPI) serving one route, started the same way
in the same run: the ratio shows what Stackyard itself adds.

Each round starts the service twice: once left idle (its RSS after `IDLE_SECONDS`), once
asked for its first stack list as a user's first page comes to it (a token made with the
CLI as soon as it answers, who is signed in, then the list), against `docker compose ls`.
Both starts count for the start-up time.

Goals: at most 1.2 s to the first 200 (issue 19 and the composition root's), at most
100 MiB idle (issue 19), and the first list after a start at most 0.5x `docker compose ls`.
The machine may be shared: each goal line gives the best and the median.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from bench.common import (
    VENV_BIN,
    first_list,
    free_port,
    goal,
    report,
    rss_mib,
    stackyard_env,
    start,
    workdir,
)

RUNS = 5
IDLE_SECONDS = 3
STACKS = 300
SERVICE = "    image: stackyard-test/busybox:1\n    command: [sleep, '3600']\n"
START_GOAL = 1.2
RSS_GOAL = 100
FIRST_LIST_GOAL = 0.5


def _stacks(folder: Path) -> None:
    for n in range(STACKS):
        stack = folder / "stacks" / f"stack{n:03d}"
        stack.mkdir(parents=True)
        services = "".join(f"  s{i}:\n{SERVICE}" for i in range(3))
        (stack / "compose.yaml").write_text(f"services:\n{services}")


def _measure(command_for_port, env) -> tuple[float, float]:
    port = free_port()
    started = start(command_for_port(port), env, "/api/health", port)
    try:
        time.sleep(IDLE_SECONDS)
        return started.seconds_to_ready, rss_mib(started.process.pid)
    finally:
        started.stop()


def _serve(port: int) -> list[str]:
    return [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)]


def _start_and_list(folder: Path) -> tuple[float, float]:
    """A start on a fresh data folder, then its first list: (seconds to the first 200,
    the list's ratio to `docker compose ls`)."""
    shutil.rmtree(folder / "data", ignore_errors=True)
    env = stackyard_env(folder)
    port = free_port()
    server = start(_serve(port), env, "/api/health", port)
    try:
        listed = first_list(server, folder, env)
        assert len(listed.stacks) == STACKS, len(listed.stacks)
        return server.seconds_to_ready, listed.ratio
    finally:
        server.stop()


def run() -> None:
    ours_t, ours_m, base_t, base_m, ratios = [], [], [], [], []
    for _ in range(RUNS):
        folder = workdir()
        try:
            _stacks(folder)
            env = stackyard_env(folder)
            t, m = _measure(_serve, env)
            ours_t.append(t)
            ours_m.append(m)
            t, m = _measure(
                lambda p: [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "bench.baseline_app:app",
                    "--port",
                    str(p),
                    "--log-level",
                    "warning",
                ],
                env,
            )
            base_t.append(t)
            base_m.append(m)
            t, ratio = _start_and_list(folder)
            ours_t.append(t)
            ratios.append(ratio)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    report("start-up to first 200", ours_t, base_t, "s", "bare FastAPI")
    report(f"idle RSS after {IDLE_SECONDS}s", ours_m, base_m, "MiB", "bare FastAPI")
    goal("start-up to first 200", ours_t, START_GOAL, " s")
    goal(f"idle RSS after {IDLE_SECONDS}s", ours_m, RSS_GOAL, " MiB")
    goal(
        f"first GET /api/stacks after a start ({STACKS} stacks) / docker compose ls",
        ratios,
        FIRST_LIST_GOAL,
        "x",
    )
