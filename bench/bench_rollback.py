"""Health-gated updates: rollback time per failure kind, and the update check's registry requests.

Against a real `stackyard serve`, the real Docker engine and a real registry
(`docker-registry`, distribution 2.8) on loopback; every image is built here from
`stackyard-test/busybox:1` with `docker commit` (as tests/stacks/test_rollback.py builds
them) and pushed to that registry.

1. Rollback time. A stack runs a good image (a healthcheck that passes, every second) as tag
   1 of a repository; a newer image is pushed under the same tag, failing in one of three
   ways: its healthcheck fails ("unhealthy"), it exits at start ("exits"), or it exits at
   start under compose's `restart: always` ("restart-loop"). The stack's policy is
   {"health_timeout": 60, "settle": 5} (S = 5 s) and `POST .../actions/update` is timed.
   A thread inspects the project's containers every 0.1 s (the engine's API, as
   `docker inspect` asks it): the failure is detectable when the new image's container is
   first unhealthy, restarting (or restarted) or exited with a non-zero code; the rollback
   is complete when a container of the previous image (not the one from before the update)
   is running and healthy. Measured from the one to the other, with nothing subtracted;
   goal (the issue's): within S + 15 s of the failure (the goal line in seconds, the
   detail line also as measured / (S + 15)).
   Also shown: failure -> "Rolling back" in the run's progress (read every 0.1 s), failure
   -> the run's end, and the whole update run (the POST to its end).
   Baseline in the same run, taking turns with stackyard: the same failing service started
   by hand in a compose project of its own, and once its failure shows, the compose file
   edited back to the previous image and `docker compose up -d` run by hand: its start to
   the container running and healthy (same poll); ratio stackyard / by hand.
2. Check efficiency. 30 stacks over 10 images of the registry (each image used by 3
   stacks). A first `POST /api/stacks/updates/check` must make one manifest HEAD per
   distinct image and nothing else; after newer images are pushed for 5 of them (each a
   distinct image with release labels), the next check must also read each new image's
   manifest and config blob once (never a layer blob); a third check only HEADs again.
   Counted from the registry's access log (Registry.requests(), which waits for a marker
   request of its own), only the requests for this part's repositories; with each check's
   wall time. Each check's goal line counts the requests apart from that plan (goal 0):
   those asked beyond it, those of it not asked, and in check 2 each blob read again.

Everything made here (stacks and compose projects with their volumes, containers, the
images built, pushed and tagged, the registry process, the servers, the temp folder) is
removed at the end, also when the bench fails.
"""

from __future__ import annotations

import contextlib
import shutil
import statistics
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import httpx
from tests.support.registry import Registry

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
    wait_succeeded,
    workdir,
)
from stackyard.stacks.guarded import keep_tag

BUSYBOX = "stackyard-test/busybox:1"
SETTLE = 5
POLICY = {"health_timeout": 60, "settle": SETTLE}
GOAL = SETTLE + 15  # the issue's: rollback complete within settle + 15 s of the failure
POLL = 0.1
SECOND = 1_000_000_000  # the engine counts healthcheck times in nanoseconds
HEALTHY = {"Test": ["CMD", "true"], "Interval": SECOND, "Timeout": 10 * SECOND, "Retries": 3}
SICK = {"Test": ["CMD", "false"], "Interval": SECOND, "Timeout": SECOND, "Retries": 1}
SLEEP = "trap 'exit 0' TERM; while true; do sleep 1 & wait $!; done"
PROJECT = "com.docker.compose.project"
#: (kind, the failing version, extra service keys)
KINDS = (
    ("unhealthy", "sick", {}),
    ("exits", "crashing", {}),
    ("restart-loop", "crashing", {"restart": "always"}),
)
CHECK_STACKS = 30
CHECK_IMAGES = 10
CHECK_NEWER = 5
TOKEN = uuid.uuid4().hex[:6]  # this run's names: the tests build images of their own


# ----------------------------------------------------------------- images
class Images:
    """The images this bench builds (each a commit of the busybox image): removed after."""

    def __init__(self, client: docker.DockerClient) -> None:
        self.client = client
        self.tags: list[str] = []

    def build(self, name: str, script: str, health: dict | None, labels: dict | None = None):
        """`stackyard-bench/<name>-<token>:1` running `script`: (its tag, its id)."""
        repo = f"stackyard-bench/{name}-{TOKEN}"
        container = self.client.containers.create(BUSYBOX)
        try:
            conf: dict[str, Any] = {"Cmd": ["sh", "-c", script], "Labels": labels or {}}
            if health:
                conf["Healthcheck"] = health
            image = container.commit(repo, "1", conf=conf)
        finally:
            container.remove(force=True)
        self.tags.append(f"{repo}:1")
        return f"{repo}:1", image.id

    def remove(self) -> None:
        for tag in self.tags:
            with contextlib.suppress(docker.errors.APIError):
                self.client.images.remove(tag, force=True)


# ----------------------------------------------------------------- the engine
def _failing(attrs: dict) -> bool:
    """Whether a container that was just created fails, as the health gate judges it."""
    state = attrs.get("State") or {}
    return (
        (state.get("Health") or {}).get("Status") == "unhealthy"
        or state.get("Status") == "restarting"
        or int(attrs.get("RestartCount") or 0) > 0
        or (state.get("Status") in ("exited", "dead") and state.get("ExitCode") != 0)
    )


def _healthy(attrs: dict) -> bool:
    state = attrs.get("State") or {}
    return bool(state.get("Running")) and (state.get("Health") or {}).get("Status") == "healthy"


class Watch:
    """A compose project's containers, inspected every 0.1 s in a thread: when a container of
    the `new` image was first seen, when one first failed, and when, after that, a container
    of the `old` image (not one of `before`) first ran healthy."""

    def __init__(self, client: docker.DockerClient, project: str, new: str, old: str) -> None:
        self.client, self.project, self.new, self.old = client, project, new, old
        self.before = {c["Id"] for c in self._containers()}
        self.seen: float | None = None
        self.failed: float | None = None
        self.back: float | None = None
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _containers(self) -> list[dict]:
        return self.client.api.containers(all=True, filters={"label": f"{PROJECT}={self.project}"})

    def _run(self) -> None:
        try:
            while not self._stop.is_set() and self.back is None:
                for listed in self._containers():
                    try:
                        attrs = self.client.api.inspect_container(listed["Id"])
                    except docker.errors.NotFound:
                        continue
                    now = time.perf_counter()
                    if attrs["Image"] == self.new:
                        self.seen = self.seen or now
                        if self.failed is None and _failing(attrs):
                            self.failed = now
                    elif (
                        attrs["Image"] == self.old
                        and self.failed is not None
                        and attrs["Id"] not in self.before
                        and _healthy(attrs)
                    ):
                        self.back = now
                self._stop.wait(POLL)
        except BaseException as exc:  # seen by whoever waits for it
            self.error = exc

    def wait(self, what: Callable[[], float | None], timeout: float = 120) -> float:
        deadline = time.perf_counter() + timeout
        while (found := what()) is None:
            if self.error is not None:
                raise RuntimeError(f"watching {self.project}: {self.error}")
            if time.perf_counter() > deadline:
                raise RuntimeError(f"{self.project}: not seen within {timeout} s")
            time.sleep(0.02)
        return found

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _wait_healthy(client: docker.DockerClient, project: str, timeout: float = 60) -> None:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        listed = client.api.containers(filters={"label": f"{PROJECT}={project}"})
        if listed and all(_healthy(client.api.inspect_container(c["Id"])) for c in listed):
            return
        time.sleep(POLL)
    raise RuntimeError(f"{project} not healthy within {timeout} s")


def _compose_file(image: str, extra: dict[str, str]) -> str:
    keys = "".join(f"    {key}: {value}\n" for key, value in extra.items())
    return (
        f'services:\n  web:\n    image: {image}\n    volumes: ["data:/data"]\n{keys}'
        "volumes:\n  data:\n"
    )


def _compose(folder: Path, project: str, *args: str) -> None:
    subprocess.run(
        ["docker", "compose", "-p", project, *args],
        cwd=folder,
        check=True,
        capture_output=True,
        timeout=300,
    )


def _down(folder: Path, project: str) -> None:
    """`docker compose down -v` of a project (nothing when it is gone already)."""
    subprocess.run(
        ["docker", "compose", "-p", project, "down", "-v", "-t", "0"],
        cwd=folder if folder.exists() else None,
        capture_output=True,
        timeout=300,
    )


# ----------------------------------------------------------------- 1. rollback
@dataclass
class Rollback:
    back: float  # failure -> the previous image running and healthy
    said: float  # failure -> "Rolling back" in the run's progress
    ended: float  # failure -> the run's end
    total: float  # the POST to the run's end


def _publish(client: docker.DockerClient, registry: Registry, name: str, local: str) -> None:
    """Push `local` as tag 1 of `name`; the local tag stays on what this host runs."""
    running = client.images.get(f"{registry.host}/{name}:1").id
    registry.push(local, name, "1")
    client.api.tag(running, f"{registry.host}/{name}", "1")


def _stackyard_round(
    client: docker.DockerClient,
    registry: Registry,
    http: httpx.Client,
    stack: str,
    name: str,
    failing: tuple[str, str],
    good: str,
) -> Rollback:
    assert http.put(f"/api/stacks/{stack}/update-policy", json=POLICY).status_code == 204
    http.post(f"/api/stacks/{stack}/actions/start").raise_for_status()
    wait_succeeded(http, stack)
    _wait_healthy(client, stack)
    _publish(client, registry, name, failing[0])
    summary = http.post("/api/stacks/updates/check").raise_for_status().json()
    (mine,) = [s for s in summary["stacks"] if s["stack"] == stack]
    if not mine["has_update"]:
        raise RuntimeError(f"{stack}: the check found no update: {mine}")

    watch = Watch(client, stack, new=failing[1], old=good)
    try:
        began = time.perf_counter()
        http.post(f"/api/stacks/{stack}/actions/update").raise_for_status()
        said = None
        while True:
            run = http.get(f"/api/stacks/{stack}/run").json()
            now = time.perf_counter()
            texts = [line["text"] for line in run["progress"]["lines"]]
            if said is None and any(t.startswith("Rolling back") for t in texts):
                said = now
            if run["status"] != "running":
                ended = now
                break
            time.sleep(POLL)
        if run["status"] != "failed" or run["rollback"] != "done" or said is None:
            raise RuntimeError(
                f"{stack}: no rollback ({run['status']}, {run['rollback']}): {run['progress']}"
            )
        failed = watch.wait(lambda: watch.failed)
        back = watch.wait(lambda: watch.back)
    finally:
        watch.stop()
    return Rollback(back - failed, said - failed, ended - failed, ended - began)


def _by_hand_round(
    client: docker.DockerClient,
    folder: Path,
    project: str,
    failing: tuple[str, str],
    good: tuple[str, str],
    extra: dict[str, str],
) -> float:
    """The failing service up by hand; once it fails, the compose file names the previous
    image again and `docker compose up -d` runs: its start to running and healthy."""
    folder.mkdir(parents=True)
    compose = folder / "compose.yaml"
    compose.write_text(_compose_file(failing[0], extra))
    try:
        _compose(folder, project, "up", "-d")
        watch = Watch(client, project, new=failing[1], old=good[1])
        try:
            watch.wait(lambda: watch.failed)
            compose.write_text(_compose_file(good[0], extra))
            began = time.perf_counter()
            _compose(folder, project, "up", "-d")
            back = watch.wait(lambda: watch.back)
        finally:
            watch.stop()
        return back - began
    finally:
        _down(folder, project)


def _rollbacks(
    client: docker.DockerClient, registry: Registry, images: Images, folder: Path
) -> None:
    good = images.build("good", f"echo good starts; {SLEEP}", HEALTHY)
    versions = {
        "sick": images.build("sick", f"echo sick starts; echo cannot reach db; {SLEEP}", SICK),
        "crashing": images.build("crashing", "echo bad config: no such key >&2; exit 3", None),
    }
    stacks: list[tuple[str, str, str, dict]] = []  # (kind, stack, repository, extra) per round
    for kind, _version, extra in KINDS:
        for n in range(ROUNDS):
            stack = f"roll-{kind}-{n}-{TOKEN}"
            name = f"bench-roll-{TOKEN}/{kind}-{n}"
            registry.push(good[0], name, "1")
            (folder / "stacks" / stack).mkdir(parents=True)
            (folder / "stacks" / stack / "compose.yaml").write_text(
                _compose_file(f"{registry.host}/{name}:1", extra)
            )
            stacks.append((kind, stack, name, extra))

    server: Started | None = None
    try:
        server, http = _serve(folder)
        for kind, version, extra in KINDS:
            ours: list[Rollback] = []
            by_hand: list[float] = []
            mine = [(s, r) for k, s, r, _ in stacks if k == kind]
            for n, (stack, name) in enumerate(mine):
                turns = ("stackyard", "by hand") if n % 2 == 0 else ("by hand", "stackyard")
                for turn in turns:
                    if turn == "stackyard":
                        try:
                            ours.append(
                                _stackyard_round(
                                    client, registry, http, stack, name, versions[version], good[1]
                                )
                            )
                        finally:
                            _down(folder / "stacks" / stack, stack)
                    else:
                        by_hand.append(
                            _by_hand_round(
                                client,
                                folder / "byhand" / f"{kind}-{n}",
                                f"byhand-{kind}-{n}-{TOKEN}",
                                versions[version],
                                good,
                                extra,
                            )
                        )
                last = ours[-1]
                print(
                    f"  {kind} round {n + 1}: failure -> previous image healthy "
                    f"{last.back:.2f} s, -> 'Rolling back' {last.said:.2f} s, -> run ended "
                    f"{last.ended:.2f} s; update run {last.total:.2f} s | by hand "
                    f"`docker compose up -d` -> healthy {by_hand[-1]:.2f} s",
                    flush=True,
                )
            back = statistics.median(r.back for r in ours)
            print(
                f"rollback, {kind} (S = {SETTLE} s): failure -> previous image running and "
                f"healthy {back:.2f} s | S + 15 = {GOAL} s | ratio {back / GOAL:.2f}; "
                f"failure -> 'Rolling back' {statistics.median(r.said for r in ours):.2f} s, "
                f"-> run ended (rolled back) {statistics.median(r.ended for r in ours):.2f} s "
                f"(ratio {statistics.median(r.ended for r in ours) / GOAL:.2f}); total update "
                f"run {statistics.median(r.total for r in ours):.2f} s (medians of {len(ours)})",
                flush=True,
            )
            report(
                f"rollback, {kind}: back to running and healthy",
                [r.back for r in ours],
                by_hand,
                "s",
                "by hand `docker compose up -d` of the previous image",
            )
            goal(
                f"rollback, {kind}: failure to previous image healthy",
                [r.back for r in ours],
                GOAL,
                " s",
            )
    finally:
        if server is not None:
            server.stop()
        for _kind, stack, _name, _extra in stacks:
            _down(folder / "stacks" / stack, stack)
            with contextlib.suppress(docker.errors.APIError):
                client.images.remove(keep_tag(stack, "web"), noprune=True)


def _serve(folder: Path) -> tuple[Started, httpx.Client]:
    """A real `stackyard serve` working in `folder`, and a client signed in to it."""
    env = stackyard_env(folder)
    port = free_port()
    server = start(
        [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
    )
    try:
        token = admin_token(folder, env)
    except BaseException:
        server.stop()
        raise
    headers = {"Authorization": f"Bearer {token}"}
    return server, httpx.Client(base_url=server.url, timeout=120, headers=headers)


# ----------------------------------------------------------------- 2. check efficiency
def _tally(asked: list[tuple[str, str]], configs: set[str]) -> Counter:
    counts: Counter = Counter()
    for method, path in asked:
        if "/manifests/" in path:
            counts[f"{method} manifest"] += 1
        elif "/blobs/" in path:
            kind = "config" if path.rsplit("/", 1)[1] in configs else "layer"
            counts[f"{method} {kind} blob"] += 1
        else:
            counts[f"{method} other"] += 1
    return counts


def _apart(asked: Counter, planned: Counter) -> int:
    """Requests asked beyond `planned`, and planned ones not asked."""
    return sum((asked - planned).values()) + sum((planned - asked).values())


def _checks(client: docker.DockerClient, registry: Registry, images: Images, folder: Path) -> None:
    prefix = f"bench-check-{TOKEN}"
    names = [f"{prefix}/img{i}" for i in range(CHECK_IMAGES)]
    for name in names:
        registry.push(BUSYBOX, name, "1")
    for n in range(CHECK_STACKS):
        stack = folder / "stacks" / f"check{n:02d}"
        stack.mkdir(parents=True)
        image = f"{registry.host}/{names[n % CHECK_IMAGES]}:1"
        (stack / "compose.yaml").write_text(f"services:\n  web:\n    image: {image}\n")
    newer = {}  # repository -> (local tag, config digest)
    for i, name in enumerate(names[:CHECK_NEWER]):
        labels = {
            "org.opencontainers.image.version": f"1.1.{i}",
            "org.opencontainers.image.source": f"https://github.com/team/img{i}",
        }
        newer[name] = images.build(f"check{i}", SLEEP, None, labels)
    configs = {config for _, config in newer.values()}

    server: Started | None = None
    try:
        server, http = _serve(folder)
        heads = {f"/v2/{name}/manifests/1" for name in names}
        plans = [  # (the detail line's label, the figure's, the requests expected)
            (
                "check 1 (nothing new; cold: resolves 30 compose files)",
                "update check 1 (cold, nothing new)",
                {"HEAD manifest": CHECK_IMAGES},
            ),
            (
                f"check 2 (newer images for {CHECK_NEWER})",
                f"update check 2 ({CHECK_NEWER} newer images)",
                {
                    "HEAD manifest": CHECK_IMAGES,
                    "GET manifest": CHECK_NEWER,
                    "GET config blob": CHECK_NEWER,
                },
            ),
            (
                "check 3 (nothing new since)",
                "update check 3 (nothing new since)",
                {"HEAD manifest": CHECK_IMAGES},
            ),
        ]
        for n, (label, figure, expected) in enumerate(plans):
            if n == 1:
                for name, (local, _) in newer.items():
                    _publish(client, registry, name, local)
            since = len(registry.requests())
            began = time.perf_counter()
            summary = http.post("/api/stacks/updates/check").raise_for_status().json()
            wall = time.perf_counter() - began
            asked = [
                (m, p) for m, p in registry.requests()[since:] if p.startswith(f"/v2/{prefix}/")
            ]
            counts = _tally(asked, configs)
            each_once = Counter(p for m, p in asked if m == "HEAD") == Counter(heads)
            blobs = Counter(p for m, p in asked if "/blobs/" in p)
            blobs_once = all(v == 1 for v in blobs.values())
            updates = sum(1 for s in summary["stacks"] if s["has_update"])
            releases = sum(
                1
                for s in summary["stacks"]
                for i in s["images"]
                if (i["release"] or {}).get("version")
            )
            shown = ", ".join(
                f"{key} {counts.get(key, 0)} (expected {expected.get(key, 0)})"
                for key in ("HEAD manifest", "GET manifest", "GET config blob", "GET layer blob")
            )
            others = {k: v for k, v in counts.items() if k not in expected and "layer" not in k}
            ok = counts == Counter(expected) and each_once and (blobs_once or n != 1)
            # The same as one figure: the HEADs apart from one per image (path by path),
            # the other requests apart from the plan (kind by kind), and in check 2 every
            # blob read more than once; 0 exactly when `ok`.
            off = (
                _apart(Counter(p for m, p in asked if m == "HEAD"), Counter(heads))
                + _apart(
                    Counter({k: v for k, v in counts.items() if not k.startswith("HEAD ")}),
                    Counter({k: v for k, v in expected.items() if not k.startswith("HEAD ")}),
                )
                + (sum(v - 1 for v in blobs.values()) if n == 1 else 0)
            )
            print(
                f"{label}: {wall:.2f} s wall | {shown}"
                + (f", other {dict(others)}" if others else "")
                + f" | one HEAD per image: {'yes' if each_once else 'NO'}"
                + (f" | each config blob once: {'yes' if blobs_once else 'NO'}" if n == 1 else "")
                + f" | {'as expected' if ok else 'NOT as expected'}"
                + f" | {updates} of {CHECK_STACKS} stacks with an update, "
                f"{releases} with a release read",
                flush=True,
            )
            goal(f"{figure}: requests apart from the plan", [off], 0, "")
    finally:
        if server is not None:
            server.stop()


def run() -> None:
    folder = workdir()
    client = docker.from_env()
    images = Images(client)
    (folder / "registry").mkdir()
    registry = Registry(folder / "registry", client)
    try:
        registry.start()
        _rollbacks(client, registry, images, folder / "rollback")
        _checks(client, registry, images, folder / "check")
    finally:
        registry.stop()
        registry.untag_pushed()
        images.remove()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    run()
