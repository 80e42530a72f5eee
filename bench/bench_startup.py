"""Start-up time to the first 200 from /api/health, and idle RSS, against a bare FastAPI app.

Each start is a first start: a fresh data folder (so the schema is made and the first
admin's password hashed) beside a stacks folder of 300 stacks (three services each), with
byte code compiled as the image has it (scripts/setup.sh compiles the environment). The
baseline is the same web stack (uvicorn + FastAPI) serving one route, started the same way
in the same run: the ratio shows what Stackyard itself adds. Goals (issue 19): at most
1.2 s to the first 200 and at most 100 MiB idle.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from bench.common import VENV_BIN, free_port, report, rss_mib, stackyard_env, start, workdir

RUNS = 5
IDLE_SECONDS = 3
STACKS = 300
SERVICE = "    image: stackyard-test/busybox:1\n    command: [sleep, '3600']\n"


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


def run() -> None:
    ours_t, ours_m, base_t, base_m = [], [], [], []
    for _ in range(RUNS):
        folder = workdir()
        try:
            _stacks(folder)
            env = stackyard_env(folder)
            t, m = _measure(lambda p: [str(VENV_BIN / "stackyard"), "serve", "--port", str(p)], env)
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
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    report("start-up to first 200", ours_t, base_t, "s", "bare FastAPI")
    report(f"idle RSS after {IDLE_SECONDS}s", ours_m, base_m, "MiB", "bare FastAPI")
