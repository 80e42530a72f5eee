"""Downtime of a self-update: the service deployed with deploy/compose.yaml from release
1.0.0 on a loopback registry updates itself to 1.1.0. Prints the time from the POST to
the new version answering `/api/health`, and the unavailability: from the last answer
of the old version to the first of the new (goal: at most 3 s, issue 21; Dockmesh
documents 30 to 60 s). Then the same to a 1.1.0 whose entrypoint exits: the time until
1.0.0, rolled back, answers again (goal: within 30 s of the failure; judged on the time
unavailable, which begins before the failure, with the old version's last answer). Health
is asked every 50 ms.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import time
import uuid
from pathlib import Path

import docker
import httpx
from tests.deploy.conftest import DEPLOY, HOST_NETWORK
from tests.deploy.test_self_update import build_release
from tests.support.registry import Registry, _running
from tests.support.service import ADMIN_PASSWORD, sign_in

from bench.common import ROUNDS, free_port, goal, workdir

BASE_IMAGE = os.environ.get("STACKYARD_TEST_IMAGE", "stackyard/stackyard:test")


def _health(client: httpx.Client, url: str) -> str | None:
    with contextlib.suppress(httpx.TransportError, ValueError):
        return str(client.get(f"{url}/api/health", timeout=0.5).json()["version"])
    return None


def _one(folder: Path, repository: str, expected: str) -> tuple[float, float]:
    """(from the POST to `expected` answering, from the old version's last answer to
    that)."""
    project = f"sy-bench-update-{uuid.uuid4().hex[:6]}"
    port = free_port()
    override = folder / f"{project}.yaml"
    override.write_text(HOST_NETWORK.format(port=port))
    env_file = folder / f"{project}.env"
    (folder / "stacks").mkdir(exist_ok=True)
    env_file.write_text(
        f"STACKYARD_IMAGE={repository}\nSTACKYARD_VERSION=1.0.0\n"
        f"STACKYARD_ADMIN_PASSWORD={ADMIN_PASSWORD}\nSTACKS_DIR={folder / 'stacks'}\n"
    )
    compose = [
        "docker",
        "compose",
        "-p",
        project,
        "-f",
        str(DEPLOY / "compose.yaml"),
        "-f",
        str(override),
        "--env-file",
        str(env_file),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STACKYARD_", "STACKS_"))}
    subprocess.run(
        [*compose, "up", "-d", "--no-build", "--pull", "never"],
        env=env,
        check=True,
        capture_output=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client() as probe:
            while _health(probe, url) != "1.0.0":
                time.sleep(0.1)
            with httpx.Client(base_url=url, timeout=60) as client:
                sign_in(client, "admin", ADMIN_PASSWORD)
                client.get("/api/system/update").raise_for_status()  # the check, cached
                began = time.perf_counter()
                client.post("/api/system/update").raise_for_status()
            last_old, gone = began, False
            while True:
                version = _health(probe, url)
                now = time.perf_counter()
                if version is None:
                    gone = True
                elif not gone:
                    last_old = now
                elif version == expected:
                    return now - began, now - last_old
                time.sleep(0.05)
    finally:
        subprocess.run([*compose, "down", "-v", "-t", "5"], env=env, capture_output=True)


def _releases(client: docker.DockerClient, registry: Registry, broken: str | None) -> str:
    """A repository with 1.0.0 and 1.1.0 (`broken` as the tests break it, or not)."""
    name = f"sy-bench/{uuid.uuid4().hex[:6]}"
    for version in ("1.0.0", "1.1.0"):
        tag = build_release(client, BASE_IMAGE, version, broken if version == "1.1.0" else None)
        registry.push(tag, name, version)
        client.images.remove(tag)  # (a tag of its own per run; the pushed one stays)
    return f"{registry.host}/{name}"


def run() -> None:
    client = docker.from_env()
    folder = workdir()
    with _running(Registry, "stackyard-bench-registry-", client) as registry:
        for broken, expected, said, figure, limit in (
            (
                None,
                "1.1.0",
                "self-update 1.0.0 -> 1.1.0: POST to the new version answering",
                "self-update 1.0.0 -> 1.1.0: unavailable",
                3,
            ),
            (
                "exits",
                "1.0.0",
                "rolled back (1.1.0 exits): POST to 1.0.0 answering again",
                "self-update to a 1.1.0 that exits: unavailable until 1.0.0 is back",
                30,
            ),
        ):
            repository = _releases(client, registry, broken)
            totals, gaps = [], []
            for _ in range(ROUNDS):
                with contextlib.suppress(docker.errors.APIError):
                    client.images.remove(f"{repository}:1.1.0")  # pulled by each update
                total, gap = _one(folder, repository, expected)
                totals.append(total)
                gaps.append(gap)
                print(f"  round: POST to {expected} {total:.2f} s, unavailable {gap:.2f} s")
            print(
                f"{said} {statistics.median(totals):.2f} s, unavailable "
                f"{statistics.median(gaps):.2f} s (medians of {ROUNDS})",
                flush=True,
            )
            goal(figure, gaps, limit, " s")
