"""Image updates with 300 stacks of 3 images: the cached summary against /api/health, and a
full background check against a real registry on loopback (requests per distinct image).

Baselines in the same run: `GET /api/health` on the same server for the summary's latency;
the number of distinct image references for the check's request count. Goals (issue 3): no
registry request while the summary answers, and one manifest HEAD per distinct reference
in a full check (at most 1.0 of them; fewer would leave images unchecked, which the count
of images up to date shows).
"""

from __future__ import annotations

import shutil
import time

import docker
import httpx
from tests.support.registry import Registry

from bench.common import (
    VENV_BIN,
    admin_token,
    free_port,
    goal,
    median_latency,
    stackyard_env,
    start,
    workdir,
)

STACKS = 300
GROUPS = 30
CALLS = 1000
BUSYBOX = "stackyard-test/busybox:1"


def _images(registry: Registry, n: int) -> list[str]:
    """Three images per stack: one all stacks share, one of 30 groups, one of its own."""
    return [
        f"{registry.host}/bench/shared:1",
        f"{registry.host}/bench/group{n % GROUPS}:1",
        f"{registry.host}/bench/app{n}:1",
    ]


def _manifest_heads(registry: Registry, since: int) -> int:
    time.sleep(0.5)  # the access log is written just after each answer
    return sum(
        1
        for method, path in registry.requests()[since:]
        if method == "HEAD" and "/manifests/" in path
    )


def run() -> None:
    folder = workdir()
    client = docker.from_env()
    (folder / "registry").mkdir()
    registry = Registry(folder / "registry", client)
    registry.start()
    server = None
    try:
        refs = sorted({ref for n in range(STACKS) for ref in _images(registry, n)})
        began = time.perf_counter()
        for ref in refs:
            repo, tag = ref.split("/", 1)[1].rsplit(":", 1)
            registry.push(BUSYBOX, repo, tag)
        print(
            f"setup: pushed {len(refs)} distinct references in {time.perf_counter() - began:.1f} s",
            flush=True,
        )
        stacks = folder / "stacks"
        for n in range(STACKS):
            stack = stacks / f"stack{n:03d}"
            stack.mkdir(parents=True)
            services = "".join(
                f"  s{i}:\n    image: {image}\n" for i, image in enumerate(_images(registry, n))
            )
            (stack / "compose.yaml").write_text(f"services:\n{services}")

        env = stackyard_env(folder)
        port = free_port()
        server = start(
            [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
        )
        token = admin_token(folder, env)  # the first start made the admin
        http = httpx.Client(
            base_url=server.url, timeout=600, headers={"Authorization": f"Bearer {token}"}
        )

        for label, figure in (
            ("cold (resolves 300 compose files)", "full check, cold"),
            ("warm (projects cached)", "full check, warm"),
        ):
            since = len(registry.requests())
            began = time.perf_counter()
            summary = http.post("/api/stacks/updates/check").raise_for_status().json()
            wall = time.perf_counter() - began
            heads = _manifest_heads(registry, since)
            up_to_date = sum(
                1 for s in summary["stacks"] for i in s["images"] if i["state"] == "up_to_date"
            )
            print(
                f"full check, {label}: {wall:.2f} s wall | manifest HEADs {heads} for "
                f"{len(refs)} distinct references | ratio {heads / len(refs):.2f} "
                f"| {up_to_date} of {STACKS * 3} images up to date",
                flush=True,
            )
            goal(f"{figure}: manifest HEADs per distinct reference", [heads / len(refs)], 1, "x")

        since = len(registry.requests())
        health = median_latency(http, "/api/health", CALLS)
        me = median_latency(http, "/api/auth/me", CALLS)  # signed-in, nothing else
        updates = median_latency(http, "/api/stacks/updates", CALLS)
        time.sleep(0.5)
        during = len(registry.requests()[since:])
        print(
            f"GET /api/stacks/updates: median {updates * 1000:.2f} ms | GET /api/health "
            f"{health * 1000:.2f} ms | ratio {updates / health:.2f} (n={CALLS}); "
            f"of which sign-in: GET /api/auth/me {me * 1000:.2f} ms, ratio to it "
            f"{updates / me:.2f}",
            flush=True,
        )
        print(f"registry requests during {CALLS} summary calls: {during}", flush=True)
        goal(f"registry requests during {CALLS} GET /api/stacks/updates", [during], 0, "")
    finally:
        if server is not None:
            server.stop()
        registry.stop()
        registry.untag_pushed()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    run()
