"""Following the logs of a container that writes 10,000 lines a second for a minute.

Two followers attach before the container starts writing, in the same run: `docker logs
-f` (the baseline) and a client of `GET /api/stacks/{id}/logs` (Server-Sent Events).
Every line is numbered, so each side's count says how many it got and whether any was
lost or repeated. Goals: at least 0.9 of the baseline's lines, none lost or repeated, at
most 10 % of a core over the writing (issue 43), and memory flat (under 32 MiB of growth).
`BENCH_LOGS_SECONDS` (default 60) and `BENCH_LOGS_RATE` (default 10000) change the load.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
import uuid

import httpx

from bench.common import (
    VENV_BIN,
    admin_token,
    cpu_seconds,
    free_port,
    goal,
    rss_mib,
    stackyard_env,
    start,
    workdir,
)

SECONDS = int(os.environ.get("BENCH_LOGS_SECONDS", "60"))
RATE = int(os.environ.get("BENCH_LOGS_RATE", "10000"))
#: Lines written per burst (ten bursts a second).
BURST = RATE // 10
#: Seconds the container waits before writing: both followers attach meanwhile.
HEAD_START = 8

COMPOSE = """services:
  writer:
    image: stackyard-test/busybox:1
    labels: [{label}]
    command:
      - sh
      - -c
      - |
        sleep {head_start}
        i=0
        while [ $$i -lt {bursts} ]; do
          seq $$((i*{burst}+1)) $$((i*{burst}+{burst}))
          i=$$((i+1))
          sleep 0.1
        done
        sleep 3600
"""
_NUMBER = re.compile(rb'"text":\s*"(\d+)"')


class Counter:
    """Numbers seen, once each: how many lines came, and which are missing or repeated."""

    def __init__(self) -> None:
        self.seen = bytearray(SECONDS * RATE + 1)
        self.count = 0
        self.repeated = 0
        self.last_at = time.monotonic()

    def add(self, number: int) -> None:
        if 0 < number < len(self.seen):
            if self.seen[number]:
                self.repeated += 1
            self.seen[number] = 1
        self.count += 1
        self.last_at = time.monotonic()

    def missing(self) -> int:
        return len(self.seen) - 1 - sum(self.seen)


def follow_docker(container: str, counter: Counter, stop: threading.Event) -> None:
    process = subprocess.Popen(
        ["docker", "logs", "-f", "--tail", "0", container],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    try:
        for line in process.stdout:
            text = line.strip()
            if text.isdigit():
                counter.add(int(text))
            if stop.is_set():
                break
    finally:
        process.kill()
        process.wait()


def follow_stackyard(url: str, token: str, counter: Counter, stop: threading.Event) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    try:
        with httpx.stream(
            "GET", url, params={"tail": 0}, headers=headers, timeout=httpx.Timeout(10, read=None)
        ) as response:
            response.raise_for_status()
            for line in response.iter_lines():
                if line.startswith("data:"):
                    for number in _NUMBER.findall(line.encode()):
                        counter.add(int(number))
                if stop.is_set():
                    break
    except httpx.HTTPError:
        if not stop.is_set():
            raise


def run() -> None:
    folder = workdir()
    stack = f"logbench-{uuid.uuid4().hex[:6]}"
    stack_dir = folder / "stacks" / stack
    stack_dir.mkdir(parents=True)
    label = f"stackyard.bench={uuid.uuid4().hex[:8]}"
    (stack_dir / "compose.yaml").write_text(
        COMPOSE.format(label=label, head_start=HEAD_START, bursts=SECONDS * 10, burst=BURST)
    )
    server = None
    try:
        env = stackyard_env(folder)
        port = free_port()
        server = start(
            [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
        )
        token = admin_token(folder, env)
        subprocess.run(
            ["docker", "compose", "up", "-d"], cwd=stack_dir, check=True, capture_output=True
        )
        container = f"{stack}-writer-1"
        ours, theirs = Counter(), Counter()
        stop = threading.Event()
        threads = [
            threading.Thread(target=follow_docker, args=(container, theirs, stop), daemon=True),
            threading.Thread(
                target=follow_stackyard,
                args=(f"{server.url}/api/stacks/{stack}/logs", token, ours, stop),
                daemon=True,
            ),
        ]
        for thread in threads:
            thread.start()
        pid = server.process.pid
        rss_start = rss_mib(pid)
        began = time.monotonic()
        time.sleep(HEAD_START - 1)  # the followers attached; the writing is about to begin
        cpu_start, writing = cpu_seconds(pid), time.monotonic()
        rss_samples = []
        total = SECONDS * RATE
        # Until both have everything, or nothing new came for 10 s after the writing.
        while time.monotonic() - began < HEAD_START + SECONDS + 120:
            time.sleep(1)
            rss_samples.append(rss_mib(pid))
            done = ours.count >= total and theirs.count >= total
            quiet = time.monotonic() - max(ours.last_at, theirs.last_at) > 10
            if done or (time.monotonic() - began > HEAD_START + SECONDS and quiet):
                break
        cpu = cpu_seconds(pid) - cpu_start
        elapsed = max(ours.last_at, theirs.last_at) - writing
        stop.set()

        print(
            f"lines written: {total} ({RATE}/s for {SECONDS} s) | docker logs -f: "
            f"{theirs.count} (missing {theirs.missing()}) | stackyard: {ours.count} "
            f"(missing {ours.missing()}, repeated {ours.repeated}) | ratio "
            f"{ours.count / max(theirs.count, 1):.3f} (goal >= 0.9, none lost)",
            flush=True,
        )
        print(
            f"service while following: CPU {cpu:.1f} s over the {elapsed:.0f} s of writing "
            f"({100 * cpu / elapsed:.1f} % of one core) | RSS start {rss_start:.1f} MiB, "
            f"peak {max(rss_samples):.1f} MiB, end {rss_samples[-1]:.1f} MiB",
            flush=True,
        )
        goal(
            "logs: lines received / docker logs -f",
            [ours.count / max(theirs.count, 1)],
            0.9,
            "x",
            at_least=True,
        )
        goal("logs: lines lost or repeated", [ours.missing() + ours.repeated], 0, "")
        goal(f"logs: CPU following {RATE} lines/s, % of a core", [100 * cpu / elapsed], 10, " %")
        goal("logs: service RSS growth while following", [max(rss_samples) - rss_start], 32, " MiB")
    finally:
        if server is not None:
            server.stop()
        subprocess.run(["docker", "compose", "down", "-t", "0"], cwd=stack_dir, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    run()
