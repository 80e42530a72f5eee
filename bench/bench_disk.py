"""The disk page of a host with 1,000 images and 1,000 volumes against `docker system df -v`.

On a Docker engine of the bench's own (`tests.support.engines.start_engine`: a separate
`dockerd` with its own data root, socket and bridge; the machine's main engine is never
filled or pruned), stopped and removed at the end with everything on it, also when the
bench fails. On it:

- `BENCH_DISK_IMAGES` (default 1,000) images with distinct ids, loaded with `docker
  load` from tars made here (no registry, no build): each of two layers, one of 10 base
  layers of 256 KiB of random bytes that the images share, and a layer of its own of
  1-16 KiB; one in 10 untagged (dangling), one in 50 labelled `stackyard.protect=true`.
- `BENCH_DISK_VOLUMES` (default 1,000) volumes: one in 5 with data (8 files of 16 KiB,
  written into its folder on the engine's data root), one in 10 anonymous (an unnamed
  volume's 64 hex digits), one in 50 protected.
- 5 stacks (folders in the server's own `STACKS_DIR`), each a running busybox service
  with a named volume of its own and one of the volumes above (external), and a service
  whose image is one of the images above (created, not started); the last stack stopped.
  10 containers of no stack (created) on images and volumes above.

Then a real `stackyard serve` with `DOCKER_HOST` pointed at that engine, signed in with
an admin's API token. Measured:

1. The first `GET /api/disk` after the start (what the images page asks), against the
   median of 3 `DOCKER_HOST=... docker system df -v` run just before it against the same
   engine (the CLI's own table of images, containers, volumes and build cache with their
   sizes: the engine's `/system/df`, formatted). Goal (issue 41): at most 2x.
2. Warm: `max(BENCH_ROUNDS, 5)` rounds, each a `docker system df -v` then a `GET
   /api/disk`; the ratio round by round. Goal: at most 2x.
3. Shown, not judged: `POST /api/disk/prune/preview` with images "unused" (every image
   no container uses: each candidate's layers are read to count what it frees), its
   median of `BENCH_ROUNDS` against the same `docker system df -v` median.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import tarfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from tests.support.engines import Engine, start_engine

from bench.common import (
    ROUNDS,
    VENV_BIN,
    admin_token,
    free_port,
    goal,
    stackyard_env,
    start,
    workdir,
)

IMAGES = int(os.environ.get("BENCH_DISK_IMAGES", "1000"))
VOLUMES = int(os.environ.get("BENCH_DISK_VOLUMES", "1000"))
BUSYBOX = "stackyard-test/busybox:1"
BASES = 10
STACKS = 5
LOOSE_CONTAINERS = 10
WARM_ROUNDS = max(ROUNDS, 5)
#: Images per `docker load` (the first alone, then the others two at a time).
CHUNK = 250


def _tar_of(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _layer(name: str, data: bytes) -> tuple[str, bytes]:
    """A layer's tar and its diff id."""
    tar = _tar_of({name: data})
    return f"sha256:{hashlib.sha256(tar).hexdigest()}", tar


def _image_tars(count: int, arch: str) -> Iterator[bytes]:
    """`docker save` tars of `count` images, `CHUNK` a tar: what `docker load` reads."""
    rng = random.Random(41)
    bases = [_layer(f"base{b}", rng.randbytes(256 * 1024)) for b in range(BASES)]
    for first in range(0, count, CHUNK):
        members: dict[str, bytes] = {}
        manifest = []
        for b, (_diff, tar) in enumerate(bases):
            members[f"base{b}/layer.tar"] = tar
        for i in range(first, min(first + CHUNK, count)):
            diff, tar = _layer(f"app{i}", rng.randbytes(rng.randint(1024, 16 * 1024)))
            members[f"own{i}/layer.tar"] = tar
            created = f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}T12:00:00Z"
            labels = {"bench.n": str(i)}
            if i % 50 == 7:
                labels["stackyard.protect"] = "true"
            config = json.dumps(
                {
                    "architecture": arch,
                    "os": "linux",
                    "created": created,
                    "config": {"Labels": labels, "Cmd": ["/app"]},
                    "rootfs": {"type": "layers", "diff_ids": [bases[i % BASES][0], diff]},
                    "history": [
                        {"created": created, "created_by": f"base {i % BASES}"},
                        {"created": created, "created_by": f"app {i}"},
                    ],
                }
            ).encode()
            name = f"{hashlib.sha256(config).hexdigest()}.json"
            members[name] = config
            tags = None if i % 10 == 9 else [f"bench/app{i % 50}:v{i}"]
            layers = [f"base{i % BASES}/layer.tar", f"own{i}/layer.tar"]
            manifest.append({"Config": name, "RepoTags": tags, "Layers": layers})
        members["manifest.json"] = json.dumps(manifest).encode()
        yield _tar_of(members)


def _load(engine: Engine, tar: bytes) -> None:
    done = subprocess.run(
        ["docker", "load", "-q"], input=tar, env=engine.env(), capture_output=True, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(f"docker load: {done.stderr.decode(errors='replace')}")


def _images(engine: Engine) -> None:
    arch = engine.docker("version", "--format", "{{.Server.Arch}}").stdout.strip()
    tars = list(_image_tars(IMAGES, arch))
    _load(engine, tars[0])  # the shared bases once, before loads side by side
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda t: _load(engine, t), tars[1:]))


def _volume_name(i: int) -> str:
    if i % 10 == 3:  # anonymous: what the engine names an unnamed mount's volume
        return hashlib.sha256(f"bench-anonymous-{i}".encode()).hexdigest()
    return f"bench-vol-{i:04d}"


def _volumes(engine: Engine) -> None:
    assert engine.client is not None
    api = engine.client.api
    payload = os.urandom(16 * 1024)

    def make(i: int) -> None:
        labels = {"stackyard.protect": "true"} if i % 50 == 11 else None
        made = api.create_volume(_volume_name(i), labels=labels)
        if i % 5 == 0:
            folder = Path(made["Mountpoint"])
            for n in range(8):
                (folder / f"f{n}.bin").write_bytes(payload[n:] + payload[:n])

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(make, range(VOLUMES)))


def _stacks(engine: Engine, stacks_dir: Path) -> None:
    for k in range(STACKS):
        folder = stacks_dir / f"site{k}"
        folder.mkdir(parents=True)
        (folder / "compose.yaml").write_text(
            "services:\n"
            f"  web:\n    image: {BUSYBOX}\n    command: [sleep, '86400']\n"
            "    volumes: [data:/data, shared:/shared]\n"
            f"  job:\n    image: bench/app{k}:v{k}\n    command: [/app]\n"
            "volumes:\n  data:\n  shared:\n    external: true\n"
            f"    name: {_volume_name(k * 10 + 1)}\n"
        )
        engine.compose(folder, "up", "-d", "--no-start")
        if k < STACKS - 1:
            engine.compose(folder, "start", "web")
    assert engine.client is not None
    api = engine.client.api
    for n in range(LOOSE_CONTAINERS):
        i = IMAGES // 20 * 10 + 2 * n  # (tagged: i % 10 != 9)
        image = f"bench/app{i % 50}:v{i}"
        binds = {_volume_name(VOLUMES // 2 + n): {"bind": "/data", "mode": "rw"}}
        api.create_container(
            image,
            command=["/app"],
            name=f"loose-{n}",
            host_config=api.create_host_config(binds=binds),
        )


def _df(engine: Engine) -> float:
    """Seconds of one `docker system df -v` against the engine."""
    began = time.perf_counter()
    engine.docker("system", "df", "-v")
    return time.perf_counter() - began


def _timed(http: httpx.Client, method: str, path: str, **kwargs) -> tuple[float, dict]:
    began = time.perf_counter()
    answer = http.request(method, path, **kwargs)
    seconds = time.perf_counter() - began
    if answer.status_code != 200:
        raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
    return seconds, answer.json()


def run() -> None:
    folder = workdir()
    engine: Engine | None = None
    server = None
    try:
        began = time.perf_counter()
        engine = start_engine((BUSYBOX,))
        _images(engine)
        _volumes(engine)
        _stacks(engine, folder / "stacks")
        print(
            f"engine of its own with {IMAGES} images, {VOLUMES} volumes, {STACKS} stacks and "
            f"{LOOSE_CONTAINERS} containers of no stack made in "
            f"{time.perf_counter() - began:.0f} s",
            flush=True,
        )
        env = stackyard_env(folder)
        env = {k: v for k, v in env.items() if not k.startswith("DOCKER_")}
        env["DOCKER_HOST"] = engine.docker_host
        port = free_port()
        server = start(
            [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
        )
        token = admin_token(folder, env)
        with httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=600
        ) as http:
            http.get("/api/auth/me").raise_for_status()  # the page's first question
            df_first = statistics.median(_df(engine) for _ in range(3))
            first, page = _timed(http, "GET", "/api/disk")
            size = len(json.dumps(page)) / 1024
            print(
                f"disk page, first after the start: {first:.3f} s | docker system df -v "
                f"{df_first:.3f} s (median of 3 just before) | ratio {first / df_first:.2f} "
                f"| {len(page['images'])} images, {len(page['volumes'])} volumes, "
                f"{len(page['containers'])} containers of no stack, {size:.0f} KiB of JSON",
                flush=True,
            )
            goal("disk page first / docker system df -v", [first / df_first], 2.0, "x")
            ours, theirs = [], []
            for _ in range(WARM_ROUNDS):
                theirs.append(_df(engine))
                ours.append(_timed(http, "GET", "/api/disk")[0])
            mine, base = statistics.median(ours), statistics.median(theirs)
            print(
                f"disk page, warm: {mine:.3f} s | docker system df -v {base:.3f} s | ratio "
                f"{mine / base:.2f} (medians of {WARM_ROUNDS}, taking turns)",
                flush=True,
            )
            ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
            goal("disk page / docker system df -v", ratios, 2.0, "x")
            previews = []
            for _ in range(ROUNDS):
                seconds, preview = _timed(
                    http, "POST", "/api/disk/prune/preview", json={"images": "unused"}
                )
                previews.append(seconds)
            images = sum(1 for item in preview["items"] if item["kind"] == "image")
            print(
                f"prune preview, images unused (shown, not judged): "
                f"{statistics.median(previews):.3f} s (median of {ROUNDS}) for {images} images "
                f"of {len(preview['items'])} objects, {preview['total'] / 1024**2:.1f} MiB, "
                f"{len(preview['kept'])} kept with why | docker system df -v {base:.3f} s "
                f"| ratio {statistics.median(previews) / base:.2f}",
                flush=True,
            )
    finally:
        if server is not None:
            server.stop()
        if engine is not None:
            engine.stop()
        shutil.rmtree(folder, ignore_errors=True)
