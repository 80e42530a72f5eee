"""Start-up time to the first 200 from /api/health, and idle RSS, against a bare FastAPI app.

The baseline is the same web stack (uvicorn + FastAPI) serving one route, started the
same way in the same run: the ratio shows what Stackyard itself adds.
"""

from __future__ import annotations

import shutil
import sys
import time

from bench.common import VENV_BIN, free_port, report, rss_mib, stackyard_env, start, workdir

RUNS = 5
IDLE_SECONDS = 3


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
