"""The fleet dashboard over 200 agents (stand-ins with realistic answers and delays of
20-150 ms), 10 of them offline: its time against the slowest healthy agent's own answer
time (goal: at most that plus 100 ms), then with 5 of them accepting connections and
never answering (goal: the agents' time limit once, never the sum), and the central's
RSS. Then a folder zip through the central's proxy against the same download straight
from a real agent (goal: at least 0.9 of its throughput).
"""

from __future__ import annotations

import os
import statistics
import time

import httpx

from bench.common import (
    ROUNDS,
    VENV_BIN,
    admin_token,
    free_port,
    rss_mib,
    stackyard_env,
    start,
    workdir,
)
from bench.standins import StandIn, StandIns

AGENTS = int(os.environ.get("BENCH_FLEET_AGENTS", "200"))
PROXY_MIB = int(os.environ.get("BENCH_PROXY_MIB", "512"))
CALLS = 7


def _central(folder, **extra: str):
    env = stackyard_env(folder)
    env.update(extra)
    (folder / "stacks").mkdir(parents=True, exist_ok=True)
    port = free_port()
    started = start(
        [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
    )
    return started, admin_token(folder, env)


def _timed(client: httpx.Client, path: str, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        answer = client.get(path)
        times.append(time.perf_counter() - began)
        answer.raise_for_status()
    return times


def fleet() -> None:
    kinds = ["offline" if i % 20 == 19 else "healthy" for i in range(AGENTS)]
    silent = [i for i, kind in enumerate(kinds) if kind == "offline"][:5]
    agents = [
        StandIn(i, "silent" if i in silent else kinds[i], 0.020 + (i * 7 % 131) / 1000)
        for i in range(AGENTS)
    ]
    standins = StandIns(agents)
    standins.start()
    folder = workdir()
    central, token = _central(folder)
    try:
        with httpx.Client(
            base_url=central.url, headers={"Authorization": f"Bearer {token}"}, timeout=120
        ) as http:
            ids: dict[int, int] = {}
            for agent in agents:
                made = http.post(
                    "/api/agents",
                    json={
                        "name": f"a{agent.index}",
                        "url": agent.url,
                        "token": "t" * 40,
                        "enabled": agent.kind != "silent",
                    },
                )
                made.raise_for_status()
                ids[agent.index] = made.json()["id"]
            healthy = [a for a in agents if a.kind == "healthy"]
            slowest = max(healthy, key=lambda a: a.delay)
            with httpx.Client(timeout=10) as direct:
                own = _timed(direct, f"{slowest.url}/agent/fleet/host", CALLS)
            rss_before = rss_mib(central.process.pid)
            quick = _timed(http, "/api/dashboard/fleet", CALLS)
            payload = http.get("/api/dashboard/fleet").json()
            status = [card["status"] for card in payload["hosts"] if card["kind"] == "agent"]
            online, offline = status.count("online"), status.count("offline")
            ms = {name: statistics.median(t) * 1000 for name, t in (("fleet", quick), ("own", own))}
            goal = ms["own"] + 100
            verdict = "met" if ms["fleet"] <= goal else "NOT met"
            print(
                f"fleet, {online} agents online + {offline} offline (refusing connections; "
                f"{status.count('disabled')} disabled): {ms['fleet']:.0f} ms "
                f"(median of {CALLS}; min {min(quick) * 1000:.0f}, max {max(quick) * 1000:.0f}) "
                f"| slowest healthy agent's own answer {ms['own']:.0f} ms "
                f"| goal <= {goal:.0f} ms: {verdict}",
                flush=True,
            )
            for agent in agents:
                if agent.kind == "silent":
                    http.put(
                        f"/api/agents/{ids[agent.index]}",
                        json={"name": f"a{agent.index}", "url": agent.url, "enabled": True},
                    ).raise_for_status()
            stalled = _timed(http, "/api/dashboard/fleet", 3)
            limit = 5.0
            print(
                f"fleet with {len(silent)} agents that never answer: "
                f"{statistics.median(stalled):.2f} s (median of 3) | time limit {limit:g} s; "
                f"the sum would be {len(silent) * limit:g} s",
                flush=True,
            )
            rss_after = rss_mib(central.process.pid)
            print(
                f"central RSS: {rss_before:.1f} MiB before, {rss_after:.1f} MiB after "
                f"{CALLS + 4} fleet requests over {AGENTS} agents",
                flush=True,
            )
    finally:
        central.stop()
        standins.stop()


def _make_folder(root, mib: int) -> None:
    root.mkdir(parents=True)
    chunk = os.urandom(1024 * 1024)
    text = b"stack compose volume image service network backup restore\n" * 18000
    for i in range(mib):
        sub = root / f"d{i % 16:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i:04d}.bin").write_bytes(chunk[: 512 * 1024] + text[: 512 * 1024])


def _download(client: httpx.Client, url: str) -> float:
    began = time.perf_counter()
    size = 0
    with client.stream("GET", url) as answer:
        answer.raise_for_status()
        for chunk in answer.iter_raw():
            size += len(chunk)
    return size / (time.perf_counter() - began) / 1024**2


def proxy_zip() -> None:
    folder = workdir()
    agent_dir = folder / "agent"
    _make_folder(agent_dir / "stacks" / "data", PROXY_MIB)
    env = stackyard_env(agent_dir)
    agent_token = "b" * 43
    env.update(STACKYARD_AGENT_TOKEN=agent_token)
    port = free_port()
    import subprocess

    process = subprocess.Popen(
        [str(VENV_BIN / "stackyard"), "agent", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = ""
    while "fingerprint" not in line:
        line = process.stderr.readline() if process.stderr else ""
        if not line and process.poll() is not None:
            raise RuntimeError("the agent did not start")
    fingerprint = line.rsplit(" ", 1)[1].strip()
    agent_url = f"https://127.0.0.1:{port}"
    central, token = _central(folder / "central")
    try:
        for _ in range(100):
            try:
                httpx.get(
                    f"{agent_url}/agent/health",
                    verify=False,
                    headers={"Authorization": f"Bearer {agent_token}"},
                )
                break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(
            base_url=central.url, headers={"Authorization": f"Bearer {token}"}, timeout=600
        ) as http:
            made = http.post(
                "/api/agents",
                json={
                    "name": "real",
                    "url": agent_url,
                    "token": agent_token,
                    "fingerprint": fingerprint,
                },
            )
            made.raise_for_status()
            agent_id = made.json()["id"]
            direct = httpx.Client(
                verify=False, headers={"Authorization": f"Bearer {agent_token}"}, timeout=600
            )
            ours, theirs = [], []
            for _ in range(ROUNDS):
                theirs.append(_download(direct, f"{agent_url}/agent/files/download?path=data"))
                ours.append(_download(http, f"/api/agents/{agent_id}/files/download?path=data"))
            direct.close()
        mine, base = statistics.median(ours), statistics.median(theirs)
        print(
            f"folder zip ({PROXY_MIB} MiB, {PROXY_MIB} files) through the proxy: {mine:.1f} MiB/s "
            f"| straight from the agent {base:.1f} MiB/s | ratio {mine / base:.2f} (goal >= 0.9; "
            f"medians of {ROUNDS}, zipped MiB/s)",
            flush=True,
        )
    finally:
        central.stop()
        process.terminate()
        process.wait(30)


def run() -> None:
    fleet()
    proxy_zip()
