"""Resource use against the engine's own figures (`docker stats`), for containers whose
use is known: one that holds 64 MiB (a file in its /dev/shm, which is memory), one that
keeps a CPU busy, one that restarts."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.containers.test_logs import bearer
from tests.support.stacks import compose
from tests.support.waiting import wait_until

pytestmark = pytest.mark.docker

MIB = 1024 * 1024
COMPOSE = """services:
  holder:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    command:
      - sh
      - -c
      - |
        trap 'exit 0' TERM
        head -c 67108864 /dev/urandom > /dev/shm/held
        while true; do sleep 1 & wait $$!; done
  busy:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do :; done"]
  flaky:
    image: stackyard-test/busybox:1
    labels: [stackyard.test=stack]
    restart: always
    command: ["sh", "-c", "sleep 1; exit 3"]
"""


def docker_stats(name: str) -> dict:
    done = subprocess.run(
        ["docker", "stats", "--no-stream", "--format", "{{json .}}", name],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def size(text: str) -> float:
    """`docker stats` sizes (`64.2MiB`, `1.5GiB`, `512KiB`, `0B`) in bytes."""
    units = {"B": 1, "KiB": 1024, "MiB": MIB, "GiB": 1024 * MIB, "kB": 1000, "MB": 1e6, "GB": 1e9}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    raise ValueError(text)


def test_usage_matches_the_engine_s_own_figures(server, docker_cleanup):
    stack_id = f"use-{uuid.uuid4().hex[:6]}"
    folder = Path(server.env["STACKS_DIR"]) / stack_id
    folder.mkdir()
    (folder / "compose.yaml").write_text(COMPOSE)
    docker_cleanup.compose_project(stack_id)
    compose(folder.parent, stack_id, "up", "-d")
    headers = bearer(server)

    held_since: list[float] = []

    def sampled() -> tuple[dict, dict] | None:
        answer = httpx.get(f"{server.url}/api/usage", headers=headers, timeout=30)
        assert answer.status_code == 200, answer.text
        usage = answer.json()
        mine = {c["service"]: c for c in usage["containers"] if c["project"] == stack_id}
        if not held_since and (mine.get("holder", {}).get("memory_used") or 0) >= 64 * MIB:
            held_since.append(time.monotonic())
        # The holder's CPU is read once its file is whole and a CPU sample has passed since:
        # the sample that saw the file being written from /dev/urandom was busy.
        ready = (
            held_since
            and time.monotonic() - held_since[0] > 2.5
            and (mine.get("busy") or {}).get("cpu_percent") is not None
            and (mine.get("flaky") or {}).get("restarts")
        )
        return (usage, mine) if ready else None

    usage, mine = wait_until(
        sampled, what="the usage of the holder, the busy and the flaky", interval=0.5
    )

    holder, busy = mine["holder"], mine["busy"]
    engine = docker_stats(f"{stack_id}-holder-1")
    used_by_engine = size(engine["MemUsage"].split(" / ")[0])
    assert 64 * MIB <= holder["memory_used"] < 80 * MIB
    assert abs(holder["memory_used"] - used_by_engine) < 4 * MIB, (holder, engine)
    assert (
        holder["memory_limit"] == size(engine["MemUsage"].split(" / ")[1])
        or abs(holder["memory_limit"] - size(engine["MemUsage"].split(" / ")[1]))
        < 0.01 * holder["memory_limit"]
    )
    assert holder["pids"] >= 1 and holder["restarts"] == 0 and holder["started_at"]

    engine_cpu = float(docker_stats(f"{stack_id}-busy-1")["CPUPerc"].rstrip("%"))
    # A loop that would keep a core busy (100 %): on a machine shared with the suite and
    # other busy processes it gets its share of two cores (a sixth at a load of 12), far
    # above the container that only sleeps, in our figures and the engine's alike.
    assert busy["cpu_percent"] > 5 and engine_cpu > 5
    assert (holder["cpu_percent"] or 0) < min(5, busy["cpu_percent"] / 4)
    assert mine["flaky"]["restarts"] >= 1

    totals = usage["stacks"][stack_id]
    assert totals["containers"] == len(mine)
    assert totals["memory_used"] == sum(c["memory_used"] or 0 for c in mine.values())
    assert totals["cpu_percent"] == pytest.approx(
        sum(c["cpu_percent"] or 0 for c in mine.values()), abs=0.05
    )
    assert usage["total"]["containers"] >= len(mine)

    # The last minutes, a point every 10 s while someone looks: the busy loop is stopped
    # first (the holder's points are what is checked, and a busy core slows the suite).
    compose(folder.parent, stack_id, "stop", "busy")
    url = f"{server.url}/api/stacks/{stack_id}/usage/history"

    def two_points() -> dict | None:
        httpx.get(f"{server.url}/api/usage", headers=headers, timeout=30)  # still looking
        answer = httpx.get(url, headers=headers, timeout=30)
        assert answer.status_code == 200, answer.text
        history = answer.json()
        return history if len(history["containers"][f"{stack_id}-holder-1"]) >= 2 else None

    history = wait_until(two_points, what="two points of the holder's history", interval=2)
    assert history["step_seconds"] == 10
    assert set(history["containers"]) == {f"{stack_id}-{s}-1" for s in ("holder", "busy", "flaky")}
    points = history["containers"][f"{stack_id}-holder-1"]
    times = [point["at"] for point in points]
    assert times == sorted(times) and times[-1] - times[0] >= 9.5
    assert time.time() - 15 * 60 <= times[0] and times[-1] <= time.time()
    assert all(point["memory_used"] >= 64 * MIB for point in points[1:])
    assert (
        httpx.get(
            f"{server.url}/api/stacks/nope/usage/history", headers=headers, timeout=30
        ).status_code
        == 404
    )
