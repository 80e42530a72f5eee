"""Agents that dial the central (issue 42): online, back, a shell beside downloads, zip, fleet.

Real `stackyard serve` and `stackyard agent --connect URL --enrol TOKEN` processes on
loopback, each agent made by an admin with `POST /api/agents/tunnel`; every figure against
a baseline taken in the same run.

1. Online: from a tunnel agent's process start (it enrols, starts, dials) to its tunnel
   "connected" (`GET /api/agents/{id}`, asked every 10 ms), straight and through an HTTP
   CONNECT proxy (`HTTPS_PROXY`, `tests.support.connect_proxy`), a new agent each round
   (`BENCH_ROUNDS`), taking turns with the baseline: the same command as a direct agent
   (`stackyard agent`, plain HTTP on loopback) until its `/agent/health` first answers
   (what any agent process takes to start). Goal: at most 2 s.
2. Back: the central stopped and started on the same port, `BENCH_ROUNDS` times, each
   after the tunnel held `dialer.STEADY` s (a tunnel that was up, not one flapping): from
   the central's `/api/health` answering again to "connected" (goal: at most 5 s); beside
   it the time from the central's stop (its process ended), and its own start.
3. A shell in a container of a stack on the tunnel agent (its WebSocket through the
   central, over the tunnel) echoes a line, one after the other with `PAUSE` between,
   `ECHOES` times while a `BENCH_TUNNEL_DOWNLOAD_MIB` (100) MiB file of the same agent is
   downloaded through the tunnel (`/api/agents/{id}/files/download`) again and again, read
   as fast as it comes: the p99 of the echo's round trip, a round's figure (goal: at most
   100 ms); and the growth of the central's RSS peak during the round (goal: at most 50
   MiB). `BENCH_ROUNDS` rounds, in turns with the baseline: the same container's shell
   and the same file through a direct agent (`stackyard agent`, plain HTTP on loopback,
   serving the same stacks folder on the same Docker engine). Beside them, each shell's
   echo with nothing else on its agent (`PROBES` echoes first).
4. A folder zip (`BENCH_TUNNEL_ZIP_MIB` (256) MiB, as many files, half random bytes)
   through the central from the tunnel agent, against the same folder through the
   central from that direct agent, in turns: goal at least 0.8x the throughput.
5. `BENCH_TUNNEL_AGENTS` (2,000; 0 for none) stand-in tunnel agents on a central of their
   own, one in 20 enrolled and never dialing (offline): `stackyard.agents.dialer.Dialer`s,
   all in one asyncio loop in a thread of this process, each enrolled through `POST
   /api/agents/tunnel` and `enrol()`, each SSH server forwarding to a stand-in of
   `bench.standins` (realistic answers after a delay of 20-150 ms, its event stream
   followed), all dialing at once (a central restarted under its fleet): how long until
   every healthy one is up (counted by the dialers, then seen connected by the central),
   the dials that failed, the cipher SSH chose. The fleet dashboard's time against the
   slowest healthy stand-in's own answer (goal: at most that plus 100 ms, as
   `bench_fleet` judges it), with the same stand-ins as direct agents of a central of
   their own (just before) beside it; and the central's CPU with the tunnels up and
   nothing asked, over `BENCH_TUNNEL_IDLE` (30) s in windows of 5 s (goal: at most 25%
   of a core), against the same central's idle CPU with the same agents enrolled, before
   any dialed.

`BENCH_TUNNEL_PARTS` (all: `online,back,shell,zip,many`) runs only the parts it names
(the tunnel agent and its central are made for any of parts 1 to 4).

Everything made (processes, the shell's stack, folders) is removed at the end, also when
the bench fails.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import re
import secrets
import shutil
import statistics
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from tests.support.connect_proxy import connect_proxy
from tests.support.processes import stop_process

from bench.common import (
    ROUNDS,
    VENV_BIN,
    RssPeak,
    Started,
    admin_token,
    cpu_seconds,
    cpu_windows,
    free_port,
    goal,
    rss_mib,
    stackyard_env,
    start,
    workdir,
)
from bench.standins import StandIn, StandIns, all_pushed

DOWNLOAD_MIB = int(os.environ.get("BENCH_TUNNEL_DOWNLOAD_MIB", "100"))
ZIP_MIB = int(os.environ.get("BENCH_TUNNEL_ZIP_MIB", "256"))
AGENTS = int(os.environ.get("BENCH_TUNNEL_AGENTS", "2000"))
IDLE = int(os.environ.get("BENCH_TUNNEL_IDLE", "30"))
PARTS = set(os.environ.get("BENCH_TUNNEL_PARTS", "online,back,shell,zip,many").split(","))
#: Echoes of the shell with nothing else on the tunnel (the baseline of the p99).
PROBES = 200
#: Echoes of the shell during downloads, a round (their p99 is the round's figure).
ECHOES = 200
#: Between two echoes of the shell during a download (a quick typist's pace).
PAUSE = 0.01
WINDOW = 5
CALLS = 7
BUSYBOX = "stackyard-test/busybox:1"
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


# -- processes ---------------------------------------------------------------------------
def _env(folder: Path, **extra: str) -> dict[str, str]:
    """A service's environment in `folder`, no proxy unless given."""
    env = stackyard_env(folder)
    env = {k: v for k, v in env.items() if k.upper() not in _PROXIES}
    env.update(extra)
    (folder / "stacks").mkdir(parents=True, exist_ok=True)
    return env


def _central(env: dict[str, str], port: int = 0) -> Started:
    port = port or free_port()
    return start(
        [str(VENV_BIN / "stackyard"), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env,
        "/api/health",
        port,
    )


@dataclass
class Agent:
    process: subprocess.Popen
    folder: Path
    began: float  # perf_counter at its start

    def log(self) -> str:
        return (self.folder / "agent.log").read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        stop_process(self.process)


def _agent(folder: Path, env: dict[str, str], *args: str) -> Agent:
    """`stackyard agent ARGS`, its output in `folder/agent.log`."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "agent.log").open("ab") as log:
        began = time.perf_counter()
        process = subprocess.Popen(
            [str(VENV_BIN / "stackyard"), "agent", *args],
            env=env,
            cwd=folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return Agent(process, folder, began)


def _dialing(folder: Path, central: str, token: str, **extra: str) -> Agent:
    """A tunnel agent: enrols with `token`, then dials `central`."""
    env = _env(folder, **extra)
    return _agent(folder, env, "--connect", central, "--enrol", token, "--port", str(free_port()))


def _direct(folder: Path, stacks: Path | None = None) -> tuple[Agent, str, str]:
    """A direct agent on loopback (plain HTTP), once its health answers: it, its URL, its
    token."""
    token = secrets.token_urlsafe(32)
    env = _env(folder, STACKYARD_AGENT_TLS="false", STACKYARD_AGENT_TOKEN=token)
    if stacks is not None:
        env["STACKS_DIR"] = str(stacks)
    port = free_port()
    agent = _agent(folder, env, "--host", "127.0.0.1", "--port", str(port))
    url = f"http://127.0.0.1:{port}"
    with httpx.Client(timeout=1, headers={"Authorization": f"Bearer {token}"}) as client:
        deadline = time.perf_counter() + 60
        while time.perf_counter() < deadline:
            if agent.process.poll() is not None:
                raise RuntimeError(f"the direct agent exited: {agent.log()}")
            try:
                if client.get(f"{url}/agent/health").status_code == 200:
                    return agent, url, token
            except httpx.TransportError:
                pass
            time.sleep(0.005)
    agent.stop()
    raise RuntimeError(f"the direct agent did not answer: {agent.log()}")


def _new_tunnel_agent(http: httpx.Client, name: str) -> tuple[int, str]:
    made = http.post("/api/agents/tunnel", json={"name": name}).raise_for_status().json()
    return int(made["agent"]["id"]), str(made["token"])


def _connected(
    http: httpx.Client, agent_id: int, agent: Agent | None, timeout: float = 60
) -> float:
    """perf_counter when the agent's tunnel is first seen connected (asked every 10 ms)."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if agent is not None and agent.process.poll() is not None:
            raise RuntimeError(f"the tunnel agent exited: {agent.log()}")
        try:
            view = http.get(f"/api/agents/{agent_id}")
            if view.status_code == 200 and view.json()["tunnel"] == "connected":
                return time.perf_counter()
        except httpx.TransportError:
            pass
        time.sleep(0.01)
    raise RuntimeError(f"agent {agent_id} not connected in {timeout:g} s")


# -- the shell -----------------------------------------------------------------------------
class Shell:
    """A shell in a container, through the central's WebSocket, timed echo by echo."""

    def __init__(self, url: str, token: str) -> None:
        from websockets.sync.client import connect

        self.socket = connect(
            url,
            additional_headers={"Authorization": f"Bearer {token}"},
            proxy=None,
            max_size=None,
            open_timeout=30,
        )
        self.count = 0

    def echo(self) -> float:
        """Seconds from a line typed to its answer seen: `echo m$((N))e` answers `mNe`,
        which its own echo by the terminal does not contain."""
        self.count += 1
        answer = f"m{self.count}e".encode()
        seen = b""
        began = time.perf_counter()
        self.socket.send(f"echo m$(({self.count}))e\n".encode())
        while answer not in seen:
            message = self.socket.recv(timeout=30)
            seen += message if isinstance(message, bytes) else message.encode()
        return time.perf_counter() - began

    def close(self) -> None:
        self.socket.close()


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


@contextmanager
def _stack_on(http: httpx.Client, base: str, name: str) -> Iterator[None]:
    """A stack of one running busybox on the agent at `base`, removed afterwards."""
    compose = f"services:\n  box:\n    image: {BUSYBOX}\n    command: [sleep, '86400']\n"
    try:
        http.post(f"{base}/stacks", json={"name": name, "compose": compose}).raise_for_status()
        http.post(f"{base}/stacks/{name}/actions/start").raise_for_status()
        deadline = time.perf_counter() + 120
        while time.perf_counter() < deadline:
            run = http.get(f"{base}/stacks/{name}/run")
            if run.status_code == 200 and run.json()["status"] != "running":
                break
            time.sleep(0.1)
        if run.json()["status"] != "succeeded":
            raise RuntimeError(f"the stack did not start: {run.text[:500]}")
        yield
    finally:
        subprocess.run(
            ["docker", "compose", "-p", name, "down", "-v", "-t", "0"],
            capture_output=True,
            timeout=120,
        )


def _download(client: httpx.Client, path: str) -> tuple[float, int]:
    """MiB/s and bytes of one download, read as fast as they come."""
    began = time.perf_counter()
    size = 0
    with client.stream("GET", path) as answer:
        answer.raise_for_status()
        for chunk in answer.iter_raw():
            size += len(chunk)
    return size / (time.perf_counter() - began) / 1024**2, size


def _write_random(path: Path, mib: int) -> None:
    with path.open("wb") as out:
        for _ in range(mib):
            out.write(os.urandom(1024 * 1024))


def _make_folder(root: Path, mib: int) -> None:
    """`mib` files of 1 MiB, half random bytes and half text (deflate has work on both)."""
    chunk = os.urandom(512 * 1024)
    text = (b"stack compose volume image service network backup restore\n" * 9000)[: 512 * 1024]
    for i in range(mib):
        sub = root / f"d{i % 16:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{i:04d}.bin").write_bytes(chunk[i:] + chunk[:i] + text)


# -- 1. online -----------------------------------------------------------------------------
def online(http: httpx.Client, central: Started, folder: Path) -> None:
    straight, proxied, direct = [], [], []
    with connect_proxy() as proxy:
        for r in range(ROUNDS):
            agent, _, _ = _direct(folder / f"direct-{r}")
            direct.append(time.perf_counter() - agent.began)
            agent.stop()
            for kind, into in (("straight", straight), ("proxied", proxied)):
                agent_id, token = _new_tunnel_agent(http, f"{kind}-{r}")
                extra = {"HTTPS_PROXY": proxy.url} if kind == "proxied" else {}
                asked = len(proxy.targets)
                agent = _dialing(folder / f"{kind}-{r}", central.url, token, **extra)
                try:
                    into.append(_connected(http, agent_id, agent) - agent.began)
                finally:
                    agent.stop()
                if kind == "proxied" and len(proxy.targets) == asked:
                    raise RuntimeError("the proxied agent did not go through the proxy")
                http.delete(f"/api/agents/{agent_id}").raise_for_status()
    base = statistics.median(direct)
    for kind, values in (("straight", straight), ("through an HTTP CONNECT proxy", proxied)):
        print(
            f"tunnel agent online {kind}: {statistics.median(values):.2f} s from its start "
            f"(median of {ROUNDS}; min {min(values):.2f}, max {max(values):.2f}; enrolling "
            f"first) | a direct agent's start to its first health answer {base:.2f} s "
            f"| ratio {statistics.median(values) / base:.2f}",
            flush=True,
        )
    goal("tunnel agent online after its start", straight, 2.0, " s")
    goal("tunnel agent online through a CONNECT proxy", proxied, 2.0, " s")


# -- 2. back -------------------------------------------------------------------------------
def back(
    http: httpx.Client,
    central: Started,
    env: dict[str, str],
    agent_id: int,
    agent: Agent,
    started: list[Started],
) -> Started:
    """Part 2: the central restarted `ROUNDS` times (each start added to `started`); the
    central running at the end."""
    from stackyard.agents.dialer import STEADY

    port = int(central.url.rsplit(":", 1)[1])
    up_since = _connected(http, agent_id, agent)
    from_answer, from_stop, starts = [], [], []
    for _ in range(ROUNDS):
        time.sleep(max(0.0, STEADY + 1 - (time.perf_counter() - up_since)))
        central.stop()
        stopped = time.perf_counter()
        central = _central(env, port)
        started.append(central)
        answered = stopped + central.seconds_to_ready
        up_since = _connected(http, agent_id, agent)
        from_answer.append(up_since - answered)
        from_stop.append(up_since - stopped)
        starts.append(central.seconds_to_ready)
    print(
        f"tunnel back after the central's restart: {statistics.median(from_answer):.2f} s "
        f"after it answered again (median of {ROUNDS}; max {max(from_answer):.2f}) | "
        f"{statistics.median(from_stop):.2f} s after its stop (max {max(from_stop):.2f}) | "
        f"the central's own start {statistics.median(starts):.2f} s",
        flush=True,
    )
    goal("tunnel back after the central answers again", from_answer, 5.0, " s")
    return central


# -- 3. a shell beside a download ------------------------------------------------------------
@dataclass
class Beside:
    """What a shell saw during downloads: its echoes, the central's RSS peak growth, the
    downloads' MiB/s and count."""

    echoes: list[float]
    growth: float
    rate: float
    downloads: int


def _beside(shell: Shell, downloader: httpx.Client, path: str, pid: int) -> Beside:
    """The shell's echoes while `path` is downloaded, again and again until `ECHOES` of
    them were taken (each download of the whole file, read as fast as it comes)."""
    done, found = threading.Event(), {}
    rates: list[float] = []

    def fetch() -> None:
        try:
            while not done.is_set():
                rate, size = _download(downloader, path)
                if size != DOWNLOAD_MIB * 1024**2:
                    raise RuntimeError(f"{size} bytes downloaded")
                rates.append(rate)
        except Exception as exc:
            found["error"] = exc
            done.set()

    peak = RssPeak(pid)
    fetcher = threading.Thread(target=fetch, daemon=True)
    fetcher.start()
    echoes = []
    while not done.is_set() and len(echoes) < ECHOES:
        echoes.append(shell.echo())
        time.sleep(PAUSE)
    done.set()  # (the download under way is read to its end)
    fetcher.join()
    growth = peak.growth()
    if "error" in found:
        raise found["error"]
    return Beside(echoes, growth, statistics.median(rates), len(rates))


def shell_beside_download(
    http: httpx.Client, central: Started, token: str, tunnel: int, direct: int, stack: str
) -> None:
    """Part 3: the same container's shell through the tunnel agent and, the baseline,
    through the direct agent, each during downloads from its own agent."""
    ws = central.url.replace("http://", "ws://")
    shells: dict[int, Shell] = {}
    try:
        for who in (tunnel, direct):
            path = f"/api/agents/{who}/stacks/{stack}/containers/{stack}-box-1/shell"
            shells[who] = Shell(ws + path, token)
        idle = {}
        for who, shell in shells.items():
            shell.echo()  # (the shell's start)
            idle[who] = [shell.echo() for _ in range(PROBES)]
        seen: dict[int, list[Beside]] = {tunnel: [], direct: []}
        with httpx.Client(base_url=central.url, headers=http.headers, timeout=600) as downloader:
            for _ in range(ROUNDS):
                for who in (direct, tunnel):
                    path = f"/api/agents/{who}/files/download?path={stack}/blob.bin"
                    seen[who].append(_beside(shells[who], downloader, path, central.process.pid))
    finally:
        for shell in shells.values():
            shell.close()
    p99s = {who: [_p99(b.echoes) * 1000 for b in rounds] for who, rounds in seen.items()}
    rates = {who: statistics.median(b.rate for b in rounds) for who, rounds in seen.items()}
    downloads = sum(b.downloads for b in seen[tunnel])
    print(
        f"shell echo during {DOWNLOAD_MIB} MiB downloads, through the tunnel: p99 "
        f"{statistics.median(p99s[tunnel]):.1f} ms (median of {ROUNDS} rounds of {ECHOES} "
        f"echoes, {downloads} downloads at {rates[tunnel]:.0f} MiB/s; max "
        f"{max(p99s[tunnel]):.1f}) | through a direct agent, the same container, "
        f"{statistics.median(p99s[direct]):.1f} ms (downloads at {rates[direct]:.0f} MiB/s) "
        f"| nothing else on it ({PROBES} echoes): the tunnel p99 {_p99(idle[tunnel]) * 1000:.1f} "
        f"ms, median {statistics.median(idle[tunnel]) * 1000:.1f}; the direct agent p99 "
        f"{_p99(idle[direct]) * 1000:.1f} ms, median {statistics.median(idle[direct]) * 1000:.1f}",
        flush=True,
    )
    growths = {who: [b.growth for b in rounds] for who, rounds in seen.items()}
    print(
        f"central RSS peak growth during the tunnel's downloads: "
        f"+{statistics.median(growths[tunnel]):.1f} MiB (median of {ROUNDS}; max "
        f"{max(growths[tunnel]):.1f}) | during the direct agent's "
        f"+{statistics.median(growths[direct]):.1f} MiB | the central's RSS now "
        f"{rss_mib(central.process.pid):.0f} MiB",
        flush=True,
    )
    goal(f"shell echo p99 during {DOWNLOAD_MIB} MiB tunnel downloads", p99s[tunnel], 100, " ms")
    goal(f"central RSS growth, {DOWNLOAD_MIB} MiB tunnel downloads", growths[tunnel], 50, " MiB")


# -- 4. a zip: the tunnel against a direct agent ------------------------------------------------
def zip_against_direct(http: httpx.Client, pid: int, tunnel: int, direct: int) -> None:
    """Part 4: the same folder zipped through the central from either agent, in turns;
    beside it the central's CPU a zipped MiB cost (what a busy machine changes least)."""
    ours, theirs = [], []
    cpu: dict[int, list[float]] = {tunnel: [], direct: []}
    for _ in range(ROUNDS):
        path = "/files/download?path=zipped"
        for who, into in ((direct, theirs), (tunnel, ours)):
            used = cpu_seconds(pid)
            rate, size = _download(http, f"/api/agents/{who}{path}")
            cpu[who].append((cpu_seconds(pid) - used) / (size / 1024**2) * 1000)
            into.append(rate)
    mine, base = statistics.median(ours), statistics.median(theirs)
    print(
        f"folder zip ({ZIP_MIB} MiB, {ZIP_MIB} files) through the central from the tunnel "
        f"agent: {mine:.1f} MiB/s | from a direct agent {base:.1f} MiB/s | ratio "
        f"{mine / base:.2f} (medians of {ROUNDS}, zipped MiB/s, taking turns) | the "
        f"central's CPU a zipped MiB: through the tunnel {statistics.median(cpu[tunnel]):.2f} "
        f"ms, from the direct agent {statistics.median(cpu[direct]):.2f} ms",
        flush=True,
    )
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    goal("zip through the tunnel / through a direct agent", ratios, 0.8, "x", at_least=True)


def one_agent() -> None:
    """Parts 1 to 4: one central, real agents: a tunnel agent and a direct agent serving
    the same stacks folder on the same Docker engine."""
    folder = workdir()
    env = _env(folder / "central")
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, folder, ignore_errors=True)
        central = _central(env)
        stopping = [central]  # (the central now: restarted in part 2)
        stack.callback(lambda: stopping[-1].stop())
        token = admin_token(folder / "central", env)
        http = stack.enter_context(
            httpx.Client(
                base_url=central.url, headers={"Authorization": f"Bearer {token}"}, timeout=600
            )
        )
        if "online" in PARTS:
            online(http, central, folder)
        tunnel_id, enrolment = _new_tunnel_agent(http, "tunnel")
        agent = _dialing(folder / "tunnel", central.url, enrolment)
        stack.callback(agent.stop)
        if "back" in PARTS:
            central = back(http, central, env, tunnel_id, agent, stopping)
        else:
            _connected(http, tunnel_id, agent)
        if not PARTS & {"shell", "zip"}:
            return

        stacks = agent.folder / "stacks"
        direct, url, secret = _direct(folder / "direct", stacks)
        stack.callback(direct.stop)
        made = http.post("/api/agents", json={"name": "direct", "url": url, "token": secret})
        direct_id = made.raise_for_status().json()["id"]
        name = f"bench-tunnel-{secrets.token_hex(3)}"
        if "shell" in PARTS:
            stack.enter_context(_stack_on(http, f"/api/agents/{tunnel_id}", name))
            _write_random(stacks / name / "blob.bin", DOWNLOAD_MIB)
            shell_beside_download(http, central, token, tunnel_id, direct_id, name)
        if "zip" in PARTS:
            _make_folder(stacks / "zipped", ZIP_MIB)
            zip_against_direct(http, central.process.pid, tunnel_id, direct_id)


# -- 5. many stand-ins -------------------------------------------------------------------------
class _Counted(logging.Handler):
    """The dialers' warnings (a dial failed, to be dialed again), counted, not printed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.last = record.getMessage()


@dataclass
class Fleet:
    """The dashboard's times (after one that opened the agents' connections), the agents
    online in each answer, the CPU a request cost the central and the stand-ins' thread,
    and why the agents of the last answer not online were not (the commonest)."""

    times: list[float]
    online: list[int]
    cpu_central: float
    cpu_standins: float
    why: list[tuple[str, int]]

    def said(self) -> str:
        why = "; ".join(f"{n}: {detail}" for detail, n in self.why)
        return (
            f"{statistics.median(self.times) * 1000:.0f} ms (median of {CALLS}; min "
            f"{min(self.times) * 1000:.0f}, max {max(self.times) * 1000:.0f}; online in each "
            f"answer {self.online}; not online in the last: {why or 'none'}) | CPU a "
            f"request: the central {self.cpu_central * 1000:.0f} ms, the stand-ins "
            f"{self.cpu_standins * 1000:.0f} ms"
        )


def _fleet(http: httpx.Client, pid: int, standins: StandIns) -> Fleet:
    thread = standins.thread.native_id
    assert thread is not None
    healthy = sum(1 for agent in standins.agents if agent.kind == "healthy")
    waited, pushed = all_pushed(http, healthy)  # (their event streams followed)
    print(f"{pushed} of {healthy} reports pushed, {waited:.1f} s after the agents were up")
    central, others = cpu_seconds(pid), cpu_seconds(os.getpid(), thread)
    times, answers = [], []
    for _ in range(CALLS):
        began = time.perf_counter()
        answer = http.get("/api/dashboard/fleet").raise_for_status()
        times.append(time.perf_counter() - began)
        answers.append(answer)
    central = (cpu_seconds(pid) - central) / CALLS
    others = (cpu_seconds(os.getpid(), thread) - others) / CALLS
    online, why = [], Counter[str]()
    for answer in answers:
        cards = [card for card in answer.json()["hosts"] if card["kind"] == "agent"]
        online.append(sum(1 for card in cards if card["status"] == "online"))
    for card in cards:  # (the details name their agent and its port: one for all)
        if card["status"] != "online":
            detail = re.sub(r":\d+", ":*", (card["detail"] or "").replace(card["name"], "*"))
            why[f"{card['status']}, {detail}"] += 1
    return Fleet(times, online, central, others, why.most_common(3))


def _direct_fleet(agents: list[StandIn], standins: StandIns) -> Fleet:
    """The baseline: the same stand-ins added as direct agents to a central of their own
    (the offline ones refuse connections), its dashboard timed as `many`'s."""
    folder = workdir()
    env = _env(folder)
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, folder, ignore_errors=True)
        central = _central(env)
        stack.callback(central.stop)
        token = admin_token(folder, env)
        http = stack.enter_context(
            httpx.Client(
                base_url=central.url, headers={"Authorization": f"Bearer {token}"}, timeout=300
            )
        )

        def add(agent: StandIn) -> None:
            body = {"name": f"d{agent.index}", "url": agent.url, "token": "t" * 40}
            http.post("/api/agents", json=body).raise_for_status()

        with ThreadPoolExecutor(16) as pool:  # (each add reaches its agent first)
            list(pool.map(add, agents))
        return _fleet(http, central.process.pid, standins)


def many(size: int) -> None:
    from stackyard.agents.dialer import Dialer, enrol

    agents = [
        StandIn(i, "offline" if i % 20 == 19 else "healthy", 0.020 + (i * 7 % 131) / 1000)
        for i in range(size)
    ]
    healthy = [a for a in agents if a.kind == "healthy"]
    folder = workdir()
    counted = _Counted()
    dialer_log = logging.getLogger("stackyard.agents.dialer")
    dialer_log.addHandler(counted)
    dialer_log.propagate = False
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, folder, ignore_errors=True)
        stack.callback(setattr, dialer_log, "propagate", True)
        stack.callback(dialer_log.removeHandler, counted)
        standins = StandIns(agents)
        standins.start()
        stack.callback(standins.stop)
        slowest = max(healthy, key=lambda a: a.delay)
        with httpx.Client(timeout=10) as direct:
            url = f"{slowest.url}/agent/fleet/host"
            own = statistics.median(_seconds(direct, url) for _ in range(CALLS))
        baseline = _direct_fleet(agents, standins)

        env = _env(folder / "central")
        central = _central(env)
        stack.callback(central.stop)  # (first: the dialers then only wait to dial again)
        token = admin_token(folder / "central", env)
        http = stack.enter_context(
            httpx.Client(
                base_url=central.url, headers={"Authorization": f"Bearer {token}"}, timeout=300
            )
        )

        def make(agent: StandIn) -> None:
            _, enrolment = _new_tunnel_agent(http, f"t{agent.index}")
            enrol(folder / "standins" / str(agent.index), central.url, enrolment)

        began = time.perf_counter()
        # The first alone: the central makes its own SSH key on its first enrolment, and
        # two first enrolments at once race for it (one answered 500, its token used up).
        make(agents[0])
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(make, agents[1:]))
        enrolled = time.perf_counter() - began
        pid = central.process.pid
        quiet = cpu_windows(pid, IDLE, WINDOW)

        dialing: list[asyncio.Task[None]] = []  # (held: the loop keeps weak references)
        dialers: list[Dialer] = []

        async def dial() -> None:
            for agent in healthy:
                dialer = Dialer(folder / "standins" / str(agent.index), central.url, agent.port)
                dialers.append(dialer)
                dialing.append(asyncio.ensure_future(dialer.run()))

        thread = standins.thread.native_id
        assert thread is not None
        cpu_central, cpu_standins = cpu_seconds(pid), cpu_seconds(os.getpid(), thread)
        began = time.perf_counter()
        asyncio.run_coroutine_threadsafe(dial(), standins.loop).result()
        deadline = began + max(120.0, size * 0.2)
        up = 0
        # Counted by the dialers (asking the central for 2,000 agents' views every second
        # cost it as much as the handshakes), then seen by the central.
        while up < len(healthy):
            if time.perf_counter() > deadline:
                raise RuntimeError(f"{up} of {len(healthy)} tunnels up; {counted.last}")
            time.sleep(0.1)
            up = sum(1 for dialer in dialers if dialer.connected.is_set())
        seen = 0
        while seen < len(healthy):
            if time.perf_counter() > deadline:
                raise RuntimeError(f"{seen} of {len(healthy)} tunnels connected")
            views = http.get("/api/agents").json()
            seen = sum(1 for view in views if view["tunnel"] == "connected")
            time.sleep(0 if seen == len(healthy) else 0.2)
        all_up = time.perf_counter() - began
        ciphers = Counter(dialer.cipher() for dialer in dialers)
        cpu_central = cpu_seconds(pid) - cpu_central
        cpu_standins = cpu_seconds(os.getpid(), thread) - cpu_standins
        failed = f"; the last: {counted.last}" if counted.count else ""
        print(
            f"{size} stand-in tunnel agents enrolled in {enrolled:.0f} s; {len(healthy)} "
            f"tunnels up {all_up:.1f} s after their dialers started at once, using "
            f"{cpu_central:.0f} s of the central's CPU and {cpu_standins:.0f} s of the "
            f"stand-ins' thread ({counted.count} dials failed and were dialed again{failed}); "
            f"central RSS {rss_mib(pid):.0f} MiB; ciphers {dict(ciphers)}",
            flush=True,
        )
        tunnels = _fleet(http, pid, standins)
        own_ms = own * 1000
        print(
            f"fleet of {size} tunnel agents: {tunnels.said()} (the stand-ins' dialers too) "
            f"| the same stand-ins as direct agents (a central of their own, just before): "
            f"{baseline.said()} | slowest healthy stand-in's own answer {own_ms:.0f} ms "
            "(on 2 cores beside it)",
            flush=True,
        )
        goal(
            f"fleet of {size} tunnel agents",
            [t * 1000 for t in tunnels.times],
            round(own_ms + 100),
            " ms",
        )

        time.sleep(WINDOW)  # (what the last dashboard started settles)
        standins_cpu = cpu_seconds(os.getpid(), thread)
        busy = cpu_windows(pid, IDLE, WINDOW)
        standins_cpu = (cpu_seconds(os.getpid(), thread) - standins_cpu) / IDLE * 100
        print(
            f"central idle with {len(healthy)} tunnels up: {statistics.median(busy):.1f}% of a "
            f"core (median of {len(busy)} windows of {WINDOW} s; max {max(busy):.1f}%) | the "
            f"same central with the {size} agents enrolled, before any dialed "
            f"{statistics.median(quiet):.1f}% | the stand-ins' dialers {standins_cpu:.1f}% "
            f"| central RSS {rss_mib(pid):.0f} MiB",
            flush=True,
        )
        goal(f"central idle CPU with {len(healthy)} tunnels", busy, 25, "%")


def _seconds(client: httpx.Client, url: str) -> float:
    began = time.perf_counter()
    client.get(url).raise_for_status()
    return time.perf_counter() - began


def run() -> None:
    if PARTS & {"online", "back", "shell", "zip"}:
        one_agent()
    if AGENTS and "many" in PARTS:
        many(AGENTS)
