"""Stacks from git: a push webhook and the poll to the new container, redeploys in a
50-stack repository, and a fetch against `git fetch` (issue 39).

Against a real `stackyard serve`, the real Docker engine and a real `git daemon` on
loopback serving bare repositories that a working clone here writes and pushes to
(tests/support/git_servers.py). Every stack is a one-service compose file of
`stackyard-test/busybox:1` (present on the engine) with a healthcheck that passes at its
first probe (tests/git/conftest.py's `app_compose`): the health gate passes in about a
second. The stacks' policy is "auto", the host's update policy its default.

1. Webhook. A repository (no polling) and one stack of it. Each of N rounds pushes a
   commit that changes the stack's `VERSION`, then delivers a GitHub-signed push
   (`X-Hub-Signature-256` with the secret from `POST .../webhook`) to
   `POST /api/git/hooks/{repo}`, and inspects the engine's containers every 50 ms until
   the stack's container with the new `VERSION` is running: timed from the POST to that
   moment (the sync's end is awaited after it, untimed). Goal: p95 (nearest rank) at most
   3 s.
2. Poll. A repository polled every 10 s (the least allowed) and one stack. Each round
   waits a different part of the interval (0, 1/N, ... of it: the push lands at each phase
   of the poll), pushes, and times the push's end to the new container running. The first
   round's push comes right after the stack was made (its fetch, not a poll's, is the
   last one: the poll, which looks every 5 s, is not in step with it yet); the others
   come after a poll's deploy. Goal: the worst round at most the interval + 2 s.
3. Fetch. A repository of 50 folders with 200 commits over them (4 each). Stackyard: a
   new repository record (no stacks) and its first `POST .../sync`, timed over HTTP (the
   mirror made, fetched, the ref read). Baseline: `git fetch --no-tags <url>
   +refs/heads/main:refs/x` into an empty bare repository (`git init --bare` untimed).
   `BENCH_ROUNDS` each, taking turns. Goal: the median ratio at most 1.5x. Also shown:
   Stackyard's fetch in this process (`stackyard.git.remote.fetch`: the mirror made,
   fetched, the ref read), to tell git's part from the API's. Measured before the 50
   stacks of 4 run (their healthchecks, one a second each, load the machine).
4. Redeploys. A repository of 50 folders, one stack each (all 50 created as git stacks,
   4 at a time; their service with `network_mode: none`: 50 compose networks would
   outgrow the engine's address pools). A commit changes one folder; `POST .../sync`;
   the ids of all 50 containers are compared before and after. Goal: 0 recreated besides
   the changed one (which must run its new `VERSION`). Also shown: the sync's time, and
   when in it the changed stack's new container ran (the other 49 are looked at in the
   same sync).

Everything made here (the stacks' compose projects and their rollback tags, the server,
the git daemon, the temp folder) is removed at the end, also when the bench fails.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docker
import httpx
from tests.git.conftest import app_compose
from tests.support.git_servers import GitDaemon, Work, git_daemon

from bench.common import (
    ROUNDS,
    VENV_BIN,
    Started,
    admin_token,
    free_port,
    goal,
    report,
    stackyard_env,
    start,
    workdir,
)
from stackyard.git import remote
from stackyard.stacks.guarded import keep_tag

WEBHOOK_ROUNDS = 10
WEBHOOK_GOAL = 3.0
POLL_SECONDS = 10  # the least a repository may poll at
POLL_ROUNDS = 5
POLL_GOAL = POLL_SECONDS + 2.0
STACKS = 50
COMMITS = 200
RATIO_GOAL = 1.5
WATCH = 0.05  # seconds between two looks at the engine
TIMEOUT = 120.0
CREATORS = 4  # git stacks created at once (each waits for its health gate)
PROJECT = "com.docker.compose.project"
TOKEN = uuid.uuid4().hex[:6]  # this run's names
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "LC_ALL": "C"}


# ----------------------------------------------------------------- the service
class Bench:
    """The server, a signed-in client, the engine, the git daemon and what was made."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.served = folder / "served"
        self.served.mkdir(parents=True)
        self.engine = docker.from_env(timeout=120)
        self.stacks: list[str] = []  # every stack made, for the clean-up
        self.daemon: GitDaemon | None = None
        self.server: Started | None = None
        self.http: httpx.Client | None = None

    def start(self) -> None:
        self.daemon = git_daemon(self.served)
        env = stackyard_env(self.folder)
        (self.folder / "stacks").mkdir()
        port = free_port()
        self.server = start(
            [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
        )
        token = admin_token(self.folder, env)
        self.http = httpx.Client(
            base_url=self.server.url, timeout=TIMEOUT, headers={"Authorization": f"Bearer {token}"}
        )

    @property
    def api(self) -> httpx.Client:
        assert self.http is not None
        return self.http

    def work(self, name: str) -> Work:
        """A working clone of a new bare repository `name`.git that the daemon serves."""
        return Work.create(self.folder / f"work-{name}", self.served / f"{name}.git")

    def url(self, name: str) -> str:
        assert self.daemon is not None
        return self.daemon.url_for(f"{name}.git")

    def repository(self, name: str, poll_seconds: int = 0) -> str:
        body = {"name": name, "url": self.url(name), "poll_seconds": poll_seconds}
        return str(
            self.api.post("/api/git/repositories", json=body).raise_for_status().json()["id"]
        )

    def create(self, repo_id: str, name: str, path: str, http: httpx.Client | None = None) -> str:
        """A git stack of the folder, deployed; its id."""
        body = {"name": name, "repository": repo_id, "path": path}
        answer = (http or self.api).post("/api/git/stacks", json=body)
        answer.raise_for_status()
        view = answer.json()
        self.stacks.append(view["stack"])
        if view["last_sync"]["outcome"] != "deployed":
            raise RuntimeError(f"{name} not deployed: {view['last_sync']}")
        return str(view["stack"])

    def settled(self, stack: str, sha: str) -> None:
        """Wait until the stack's sync of `sha` has ended (its run, and the commit kept)."""
        deadline = time.perf_counter() + TIMEOUT
        while time.perf_counter() < deadline:
            view = self.api.get(f"/api/git/stacks/{stack}").json()
            run = self.api.get(f"/api/stacks/{stack}/run")
            idle = run.status_code != 200 or run.json()["status"] != "running"
            if idle and view["deployed"] and view["deployed"]["sha"] == sha:
                return
            last = view["last_sync"] or {}
            if idle and last.get("commit") == sha and last.get("outcome") != "deployed":
                raise RuntimeError(f"{stack}: {last}")
            time.sleep(0.1)
        raise RuntimeError(f"{stack}: commit {sha[:12]} not deployed within {TIMEOUT:g} s")

    def running(self, project: str) -> dict[str, str]:
        """The VERSION of each running container of the compose project, by id."""
        found = {}
        for listed in self.engine.api.containers(filters={"label": f"{PROJECT}={project}"}):
            with contextlib.suppress(docker.errors.NotFound):
                attrs = self.engine.api.inspect_container(listed["Id"])
                if attrs["State"]["Running"]:
                    env = dict(e.split("=", 1) for e in attrs["Config"]["Env"] or [] if "=" in e)
                    found[listed["Id"]] = env.get("VERSION", "")
        return found

    def wait_version(self, project: str, version: str) -> float:
        """The moment (perf_counter) a container of the project runs `version`."""
        deadline = time.perf_counter() + TIMEOUT
        while time.perf_counter() < deadline:
            if version in self.running(project).values():
                return time.perf_counter()
            time.sleep(WATCH)
        raise RuntimeError(f"{project} does not run {version} after {TIMEOUT:g} s")

    def close(self) -> None:
        if self.http is not None:
            self.http.close()
        if self.server is not None:
            self.server.stop()
        with ThreadPoolExecutor(CREATORS) as pool:
            list(pool.map(self._down, self.stacks))
        if self.daemon is not None:
            self.daemon.close()
        self.engine.close()

    def _down(self, stack: str) -> None:
        """`docker compose down -v` of the stack's project, and its rollback tag."""
        folder = self.folder / "stacks" / stack
        subprocess.run(
            ["docker", "compose", "-p", stack, "down", "-v", "-t", "0"],
            cwd=folder if folder.exists() else None,
            capture_output=True,
            timeout=300,
        )
        with contextlib.suppress(docker.errors.APIError):
            self.engine.images.remove(keep_tag(stack, "web"), noprune=True)


def _p95(values: list[float]) -> float:
    """The 95th percentile, nearest rank (of 10 values: the largest)."""
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def _shown(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


# ----------------------------------------------------------------- 1. webhook
def _webhook(bench: Bench) -> None:
    work = bench.work("hook")
    work.write("app/compose.yaml", app_compose("v0"))
    work.commit("app")
    work.push()
    repo = bench.repository("hook")
    stack = bench.create(repo, f"hook-{TOKEN}", "app")
    hook = bench.api.post(f"/api/git/repositories/{repo}/webhook").raise_for_status().json()
    secret = hook["secret"].encode()
    assert bench.server is not None
    url = f"{bench.server.url}/api{hook['path']}"
    times = []
    with httpx.Client(timeout=TIMEOUT) as git_host:  # no user: the signature is the proof
        for n in range(1, WEBHOOK_ROUNDS + 1):
            before = work.head()
            version = f"v{n}"
            work.write("app/compose.yaml", app_compose(version))
            sha = work.commit(f"app {version}")
            work.push()
            body = json.dumps({"ref": "refs/heads/main", "before": before, "after": sha}).encode()
            headers = {
                "Content-Type": "application/json",
                "X-GitHub-Event": "push",
                "X-Hub-Signature-256": "sha256="
                + hmac.new(secret, body, hashlib.sha256).hexdigest(),
            }
            began = time.perf_counter()
            answer = git_host.post(url, content=body, headers=headers)
            if answer.status_code != 202 or answer.json() != {"sync": True}:
                raise RuntimeError(f"webhook: {answer.status_code} {answer.text}")
            times.append(bench.wait_version(stack, version) - began)
            bench.settled(stack, sha)
    print(
        f"webhook -> new container running: {_shown(times)} s | median "
        f"{statistics.median(times):.2f} s | p95 {_p95(times):.2f} s (n={len(times)})",
        flush=True,
    )
    goal("webhook -> new container running, p95", [_p95(times)], WEBHOOK_GOAL, " s")


# ----------------------------------------------------------------- 2. poll
def _poll(bench: Bench) -> None:
    work = bench.work("poll")
    work.write("app/compose.yaml", app_compose("v0"))
    work.commit("app")
    work.push()
    repo = bench.repository("poll", poll_seconds=POLL_SECONDS)
    stack = bench.create(repo, f"poll-{TOKEN}", "app")
    times = []
    for n in range(POLL_ROUNDS):
        time.sleep(POLL_SECONDS * n / POLL_ROUNDS)
        version = f"v{n + 1}"
        work.write("app/compose.yaml", app_compose(version))
        sha = work.commit(f"app {version}")
        work.push()
        pushed = time.perf_counter()
        times.append(bench.wait_version(stack, version) - pushed)
        bench.settled(stack, sha)
    # Polled no more: the rest of the bench is not shared with it.
    body = {"name": "poll", "url": bench.url("poll"), "poll_seconds": 0}
    bench.api.put(f"/api/git/repositories/{repo}", json=body).raise_for_status()
    print(
        f"poll every {POLL_SECONDS} s, push -> new container running: {_shown(times)} s "
        f"| median {statistics.median(times):.2f} s | worst {max(times):.2f} s "
        f"(n={len(times)}, goal interval + 2 = {POLL_GOAL:g} s)",
        flush=True,
    )
    goal(f"poll ({POLL_SECONDS} s) -> new container running, worst", [max(times)], POLL_GOAL, " s")


# ----------------------------------------------------------------- 3. redeploys
def _small(version: str) -> str:
    """A stack of the 50: no network of its own (an engine has address pools for about 30
    networks; the lead's and other benches' share them)."""
    return app_compose(version, network_mode="none")


def _monorepo(work: Work, versions: Callable[[int], str]) -> None:
    for n in range(STACKS):
        work.write(f"stacks/s{n:02d}/compose.yaml", _small(versions(n)))


def _redeploys(bench: Bench) -> None:
    work = bench.work("fifty")
    _monorepo(work, lambda n: f"s{n}-1")
    work.commit(f"{STACKS} stacks")
    work.push()
    repo = bench.repository("fifty")
    names = {n: f"s{n:02d}-{TOKEN}" for n in range(STACKS)}
    began = time.perf_counter()

    def create(chunk: list[int]) -> dict[int, str]:
        with httpx.Client(
            base_url=bench.api.base_url, timeout=TIMEOUT, headers=bench.api.headers
        ) as http:
            return {n: bench.create(repo, names[n], f"stacks/s{n:02d}", http) for n in chunk}

    stacks: dict[int, str] = {}
    with ThreadPoolExecutor(CREATORS) as pool:
        for made in pool.map(create, [list(range(STACKS))[i::CREATORS] for i in range(CREATORS)]):
            stacks.update(made)
    print(
        f"setup: {STACKS} git stacks created and deployed in {time.perf_counter() - began:.1f} s",
        flush=True,
    )

    def ids() -> dict[str, set[str]]:
        return {stack: set(bench.running(stack)) for stack in stacks.values()}

    before = ids()
    if any(len(found) != 1 for found in before.values()):
        raise RuntimeError(f"not one container each: {before}")
    changed = stacks[STACKS // 2]
    work.write(f"stacks/s{STACKS // 2:02d}/compose.yaml", _small("changed"))
    work.write("README.md", "50 stacks\n")
    sha = work.commit("one stack changed")
    work.push()
    with ThreadPoolExecutor(1) as pool:
        began = time.perf_counter()
        syncing = pool.submit(bench.api.post, f"/api/git/repositories/{repo}/sync")
        running = bench.wait_version(changed, "changed") - began
        sync = syncing.result().raise_for_status().json()
        took = time.perf_counter() - began
    if sync["commit"] != sha or sync["error"]:
        raise RuntimeError(f"sync: {sync}")
    after = ids()
    outcomes = Counter(o["outcome"] for o in sync["stacks"].values())
    recreated = sorted(s for s in stacks.values() if s != changed and after[s] != before[s])
    if sync["stacks"][changed]["outcome"] != "deployed" or after[changed] == before[changed]:
        raise RuntimeError(f"the changed stack was not redeployed: {sync['stacks'][changed]}")
    if "changed" not in bench.running(changed).values():
        raise RuntimeError("the changed stack does not run its new VERSION")
    print(
        f"a push changing 1 of {STACKS} stacks: sync {took:.2f} s (the changed stack's new "
        f"container running after {running:.2f} s of it) | outcomes "
        f"{dict(sorted(outcomes.items()))} | containers recreated besides the changed one: "
        f"{len(recreated)} {recreated or ''}",
        flush=True,
    )
    goal(f"redeploys of the {STACKS - 1} unchanged stacks", [len(recreated)], 0, "")


# ----------------------------------------------------------------- 4. fetch
def _git_fetch(url: str) -> tuple[float, float]:
    """(seconds of `git init --bare`, seconds of `git fetch` into it) in a new folder."""
    target = Path(tempfile.mkdtemp(prefix="stackyard-bench-fetch-"))
    env = {**os.environ, **GIT_ENV}
    try:
        began = time.perf_counter()
        subprocess.run(["git", "init", "--bare", "-q", str(target)], env=env, check=True)
        initialised = time.perf_counter()
        subprocess.run(
            [
                "git", "--git-dir", str(target), "fetch", "--quiet", "--no-tags",
                url, "+refs/heads/main:refs/x",
            ],
            env=env,
            check=True,
        )  # fmt: skip
        return initialised - began, time.perf_counter() - initialised
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _remote_fetch(url: str) -> float:
    """Seconds of Stackyard's own fetch (`stackyard.git.remote.fetch`) into a new mirror,
    in this process: what the sync's time is beside the API's."""
    target = Path(tempfile.mkdtemp(prefix="stackyard-bench-fetch-"))
    try:
        began = time.perf_counter()
        remote.fetch(target / "mirror.git", remote.Access(url, "main", "none"), target / "scratch")
        return time.perf_counter() - began
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _fetch(bench: Bench) -> None:
    work = bench.work("history")
    _monorepo(work, lambda n: f"s{n}-0")
    work.commit(f"{STACKS} stacks")
    for n in range(COMMITS):
        folder = n % STACKS
        work.write(f"stacks/s{folder:02d}/compose.yaml", _small(f"s{folder}-{n // STACKS + 1}"))
        work.commit(f"s{folder:02d} to {n // STACKS + 1}")
    work.push()
    head = work.head()
    objects = work.git("count-objects", "-v")
    print(
        f"setup: {COMMITS + 1} commits over {STACKS} folders ({' '.join(objects.split())})",
        flush=True,
    )
    url = bench.url("history")
    ours, theirs, inits, inside = [], [], [], []
    for n in range(ROUNDS):
        repo = bench.api.post(
            "/api/git/repositories",
            json={"name": f"history-{n}", "url": url, "poll_seconds": 0},
        )
        repo_id = repo.raise_for_status().json()["id"]
        began = time.perf_counter()
        sync = bench.api.post(f"/api/git/repositories/{repo_id}/sync").raise_for_status().json()
        ours.append(time.perf_counter() - began)
        if sync["commit"] != head or sync["error"]:
            raise RuntimeError(f"sync: {sync}")
        bench.api.delete(f"/api/git/repositories/{repo_id}").raise_for_status()
        init, fetched = _git_fetch(url)
        inits.append(init)
        theirs.append(fetched)
        inside.append(_remote_fetch(url))
    report(
        f"first fetch of {STACKS} stacks, {COMMITS + 1} commits",
        ours,
        theirs,
        "s",
        "git fetch",
    )
    print(
        f"  stackyard (POST .../sync, over HTTP) {_shown(ours)} s | git fetch {_shown(theirs)} s "
        f"| git init --bare before it (untimed) {_shown(inits)} s",
        flush=True,
    )
    print(
        f"  of which Stackyard's fetch in-process (remote.fetch: init, fetch, rev-parse; no "
        f"HTTP, audit or records) {_shown(inside)} s | median ratio to git fetch "
        f"{statistics.median(inside) / statistics.median(theirs):.2f}",
        flush=True,
    )
    goal(
        "first fetch, 50 stacks with history: stackyard / git fetch",
        [o / t for o, t in zip(ours, theirs, strict=True)],
        RATIO_GOAL,
        "x",
    )


def run() -> None:
    folder = workdir()
    bench = Bench(folder)
    try:
        bench.start()
        _webhook(bench)
        _poll(bench)
        _fetch(bench)  # before the 50 stacks run: their healthchecks load the machine
        _redeploys(bench)
    finally:
        bench.close()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    run()
