"""Shared pieces: starting a server, reading its memory, printing figures and ratios."""

from __future__ import annotations

import os
import secrets
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
from tests.support.processes import free_port as free_port  # re-exported for the benches
from tests.support.processes import stop_process

#: Rounds of a benchmark whose figures are medians (ours and the baseline take turns).
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
VENV_BIN = Path(os.environ.get("VIRTUAL_ENV", Path(__file__).parents[1] / ".venv")) / "bin"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


@dataclass
class Started:
    process: subprocess.Popen
    url: str
    seconds_to_ready: float

    def stop(self) -> None:
        stop_process(self.process)


def start(
    command: Sequence[str], env: dict[str, str], ready_path: str, port: int, timeout: float = 60
) -> Started:
    """Start a server and time it until `ready_path` first answers 200."""
    url = f"http://127.0.0.1:{port}"
    began = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    with httpx.Client(timeout=1) as client:
        while time.perf_counter() - began < timeout:
            if process.poll() is not None:
                raise RuntimeError(f"{command} exited with {process.returncode}")
            try:
                if client.get(url + ready_path).status_code == 200:
                    return Started(process, url, time.perf_counter() - began)
            except httpx.TransportError:
                pass
            time.sleep(0.005)
    process.kill()
    raise RuntimeError(f"{command} not ready within {timeout}s")


def median_latency(client: httpx.Client, path: str, calls: int) -> float:
    """Median seconds of `calls` sequential GETs of `path` (each must answer 200)."""
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        response = client.get(path)
        times.append(time.perf_counter() - began)
        if response.status_code != 200:
            raise RuntimeError(f"GET {path}: {response.status_code} {response.text[:200]}")
    return statistics.median(times)


def admin_token(workdir: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [str(VENV_BIN / "stackyard"), "token", "create", "admin"],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def stackyard_env(workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STACKYARD_", "STACKS_"))}
    env.update(
        STACKYARD_DATA_DIR=str(workdir / "data"),
        STACKS_DIR=str(workdir / "stacks"),
        STACKYARD_ADMIN_PASSWORD="bench-admin-password",
        STACKYARD_SECRET_KEY=secrets.token_urlsafe(48),
        STACKYARD_LOG_LEVEL="WARNING",
        STACKYARD_UPDATE_CHECK_INTERVAL="0",
    )
    return env


def workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="stackyard-bench-"))


def report(
    name: str, ours: Sequence[float], baseline: Sequence[float], unit: str, baseline_name: str
) -> None:
    """Print medians and the ratio ours/baseline (below 1.0 means we are lower)."""
    mine, base = statistics.median(ours), statistics.median(baseline)
    print(
        f"{name}: stackyard {mine:.3f} {unit} | {baseline_name} {base:.3f} {unit} "
        f"| ratio {mine / base:.2f} (n={len(ours)})",
        flush=True,
    )


@dataclass(frozen=True)
class Figure:
    """One measured figure against its goal, for the summary `make bench` ends with."""

    bench: str
    name: str
    best: float  # the min (the max for a figure that should be at least its goal)
    median: float
    limit: float
    unit: str
    at_least: bool  # the goal is a floor (a throughput, a ratio to beat), not a ceiling

    @property
    def verdict(self) -> str:
        def meets(value: float) -> bool:
            return value >= self.limit if self.at_least else value <= self.limit

        if meets(self.median):
            return "met"
        return "met at best only" if meets(self.best) else "NOT met"


#: Every figure measured in this run, in order; `CURRENT` names the benchmark running.
FIGURES: list[Figure] = []
CURRENT = ""


def goal(
    name: str, values: Sequence[float], limit: float, unit: str, *, at_least: bool = False
) -> Figure:
    """The best and the median of `values` against a goal of at most `limit` (at least,
    with `at_least`), printed and kept for the summary. A shared machine's load only ever
    makes a figure worse: the best is the figure of a quiet moment, the median a typical
    one."""
    mid = statistics.median(values)
    best = max(values) if at_least else min(values)
    figure = Figure(CURRENT, name, best, mid, limit, unit, at_least)
    FIGURES.append(figure)
    print(
        f"GOAL {name}: best {_shown(best)}{unit} | median {_shown(mid)}{unit} (n={len(values)}) "
        f"| goal {'>=' if at_least else '<='} {limit:g}{unit}: {figure.verdict}",
        flush=True,
    )
    return figure


def _shown(value: float) -> str:
    """A figure to three decimals, without trailing zeros (a count shows as one)."""
    return f"{value:.3f}".rstrip("0").rstrip(".")


def summary(figures: Sequence[Figure]) -> str:
    """The table of every figure against its goal."""
    rows = [("benchmark", "figure", "median", "best", "goal", "verdict")]
    for f in figures:
        rows.append(
            (
                f.bench,
                f.name,
                f"{_shown(f.median)}{f.unit}",
                f"{_shown(f.best)}{f.unit}",
                f"{'>=' if f.at_least else '<='} {f.limit:g}{f.unit}",
                f.verdict,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |"
        for row in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """CPU seconds (user and system) a process has used, or one thread of it."""
    where = f"/proc/{pid}/task/{thread}/stat" if thread else f"/proc/{pid}/stat"
    fields = Path(where).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_windows(pid: int, seconds: float, window: float = 5.0) -> list[float]:
    """Percent of a core `pid` used in each window of `window` s over `seconds` (at least
    one window)."""
    windows = []
    for _ in range(max(1, int(seconds // window))):
        used, began = cpu_seconds(pid), time.perf_counter()
        time.sleep(window)
        windows.append((cpu_seconds(pid) - used) / (time.perf_counter() - began) * 100)
    return windows


def compose_ls() -> float:
    """Seconds of one `docker compose ls --all --format json`: the engine's own list of
    the projects (it reads no compose file), the baseline of the stack list."""
    began = time.perf_counter()
    subprocess.run(
        ["docker", "compose", "ls", "--all", "--format", "json"], capture_output=True, check=True
    )
    return time.perf_counter() - began


@dataclass
class FirstList:
    seconds: float  # the first GET /api/stacks
    compose_ls: float  # the median `docker compose ls` just before it
    stacks: list[dict]
    token: str  # the admin's API token it made

    @property
    def ratio(self) -> float:
        return self.seconds / self.compose_ls


def first_list(server: Started, workdir: Path, env: dict[str, str], ls_runs: int = 5) -> FirstList:
    """The first stack list after a start, as a user's first page comes to it: a token
    made (with the CLI, as soon as the service answers), who is signed in asked, then the
    list, timed; `docker compose ls` is timed just before it (its median)."""
    token = admin_token(workdir, env)
    with httpx.Client(
        base_url=server.url, timeout=600, headers={"Authorization": f"Bearer {token}"}
    ) as http:
        http.get("/api/auth/me").raise_for_status()  # the first page asks it first
        ls = statistics.median(compose_ls() for _ in range(ls_runs))
        began = time.perf_counter()
        response = http.get("/api/stacks").raise_for_status()
        return FirstList(time.perf_counter() - began, ls, response.json(), token)


class RssPeak:
    """The peak RSS of a process from now until `growth()` (sampled every 50 ms)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.start, self.peak = pid, rss_mib(pid), rss_mib(pid)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, rss_mib(self.pid))
            time.sleep(0.05)

    def growth(self) -> float:
        self.stop.set()
        self.thread.join()
        return self.peak - self.start


def wait_run(http: httpx.Client, stack: str, every: float = 0.1) -> dict:
    """The stack's run, once it has ended (asked every `every` seconds)."""
    while True:
        run = http.get(f"/api/stacks/{stack}/run")
        if run.status_code == 200 and run.json()["status"] != "running":
            return run.json()
        time.sleep(every)


def wait_succeeded(http: httpx.Client, stack: str, every: float = 0.1) -> dict:
    """The stack's run, once it has ended; RuntimeError unless it succeeded."""
    state = wait_run(http, stack, every)
    if state["status"] != "succeeded":
        raise RuntimeError(f"run failed: {state['progress']['errors']}")
    return state
