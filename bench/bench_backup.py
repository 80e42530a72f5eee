"""Backing up and restoring a volume of about 2 GiB in 2,000 files (half random, half text).

Baselines in the same run, through the same helper image and the same compressor (gzip
by zlib-ng at the service's level): capture, a plain `tar -c` of the volume in a helper
piped through the compressor to nothing; restore, the volume's compressed tar piped into a
plain `tar -xz` in a helper. Ours: the whole backup through the API (stack folder, the
volume, the archive written and checked) and the whole restore of it as a clone (checked
through, then extracted). Goals: throughput ratio at least 0.9; the service's peak RSS
growth flat (under 64 MiB). `BENCH_BACKUP_FILES` (default 2000, 1 MiB each) scales it.

Each figure is the median of `BENCH_ROUNDS` (default 3) rounds. Every timed run starts
after a `sync`: a restore writes 2 GiB, and the next run would otherwise pay for writing
back what the one before it left in the page cache (single runs varied from 0.77 to 0.96).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from statistics import median

import httpx
from zlib_ng import zlib_ng

from bench.common import (
    ROUNDS,
    VENV_BIN,
    RssPeak,
    admin_token,
    free_port,
    stackyard_env,
    start,
    wait_succeeded,
    workdir,
)

FILES = int(os.environ.get("BENCH_BACKUP_FILES", "2000"))
HELPER = "stackyard-test/busybox:1"
LEVEL = 1
FILL = f"""
cd /data
i=0
while [ $i -lt {FILES // 2} ]; do
  head -c 1048576 /dev/urandom > r$i
  yes "a line of text for a compressible file, number $i" | head -c 1048576 > t$i
  i=$((i+1))
done
"""


def _compress_to_nothing(stream) -> int:
    compressor = zlib_ng.compressobj(LEVEL, zlib_ng.DEFLATED, 31)
    total = 0
    while chunk := stream.read(1 << 20):
        total += len(chunk)
        compressor.compress(chunk)
    compressor.flush()
    return total


def baseline_capture(volume: str) -> tuple[float, int]:
    began = time.perf_counter()
    process = subprocess.Popen(
        [
            "docker",
            "run",
            "--rm",
            "--log-driver",
            "none",
            "-v",
            f"{volume}:/data",
            HELPER,
            "tar",
            "-cf",
            "-",
            "-C",
            "/data",
            ".",
        ],
        stdout=subprocess.PIPE,
    )
    size = _compress_to_nothing(process.stdout)
    process.wait()
    return time.perf_counter() - began, size


def baseline_restore(archive: str, volume: str) -> float:
    """The volume's compressed tar (read out of the archive) into a plain `tar -xz`."""
    import tarfile

    subprocess.run(["docker", "volume", "create", volume], check=True, capture_output=True)
    began = time.perf_counter()
    process = subprocess.Popen(
        [
            "docker",
            "run",
            "--rm",
            "-i",
            "--log-driver",
            "none",
            "-v",
            f"{volume}:/data",
            HELPER,
            "tar",
            "-xzf",
            "-",
            "-C",
            "/",
        ],
        stdin=subprocess.PIPE,
    )
    with tarfile.open(archive) as outer:
        handle = outer.extractfile("volumes/0.tar.gz")
        assert handle is not None and process.stdin is not None
        shutil.copyfileobj(handle, process.stdin, 1 << 20)
    process.stdin.close()
    process.wait()
    return time.perf_counter() - began


Seconds = float


def _sync() -> None:
    """Dirty pages written back before a timed run, so that it pays only for its own."""
    subprocess.run(["sync"], check=True)


def _remove_volumes(*names: str) -> None:
    subprocess.run(["docker", "volume", "rm", "-f", *names], capture_output=True)


class Service:
    def __init__(self, http: httpx.Client, pid: int) -> None:
        self.http = http
        self.pid = pid

    def capture(self, stack: str) -> tuple[Seconds, float, str]:
        """A backup of `stack` through the API: seconds, RSS growth, the archive's name."""
        _sync()
        rss = RssPeak(self.pid)
        began = time.perf_counter()
        self.http.post(f"/api/stacks/{stack}/backups", json={}).raise_for_status()
        wait_succeeded(self.http, stack)
        seconds = time.perf_counter() - began
        growth = rss.growth()
        (archive,) = self.http.get("/api/backups").json()  # each round deletes its own
        return seconds, growth, archive["name"]

    def restore(self, name: str, clone: str) -> tuple[Seconds, float]:
        """A restore of archive `name` as the new stack `clone`: seconds, RSS growth."""
        _sync()
        rss = RssPeak(self.pid)
        began = time.perf_counter()
        self.http.post(f"/api/backups/{name}/restore", json={"stack": clone}).raise_for_status()
        wait_succeeded(self.http, clone)
        seconds = time.perf_counter() - began
        return seconds, rss.growth()


def run() -> None:
    folder = workdir()
    stack = f"bkbench-{uuid.uuid4().hex[:6]}"
    (folder / "stacks" / stack).mkdir(parents=True)
    (folder / "stacks" / stack / "compose.yaml").write_text(
        f"services:\n  app:\n    image: {HELPER}\n    volumes: ['data:/data']\nvolumes:\n  data:\n"
    )
    volume = f"{stack}_data"
    made = [volume]
    server = None
    try:
        subprocess.run(["docker", "volume", "create", volume], check=True, capture_output=True)
        began = time.perf_counter()
        subprocess.run(
            ["docker", "run", "--rm", "-v", f"{volume}:/data", HELPER, "sh", "-c", FILL],
            check=True,
            capture_output=True,
        )
        print(
            f"setup: {FILES} files of 1 MiB in {volume} in {time.perf_counter() - began:.1f} s",
            flush=True,
        )
        env = stackyard_env(folder)
        env["BACKUP_HELPER_IMAGE"] = HELPER
        env["STACKYARD_BACKUP_LEVEL"] = str(LEVEL)
        port = free_port()
        server = start(
            [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
        )
        token = admin_token(folder, env)
        http = httpx.Client(
            base_url=server.url, timeout=600, headers={"Authorization": f"Bearer {token}"}
        )
        http.get("/api/stacks").raise_for_status()
        service = Service(http, server.process.pid)

        captures: list[tuple[Seconds, Seconds, float]] = []  # ours, plain, RSS growth
        restores: list[tuple[Seconds, Seconds, float]] = []
        checks: list[Seconds] = []
        tar_bytes = 0
        for n in range(ROUNDS):
            _sync()
            plain, tar_bytes = baseline_capture(volume)
            ours, growth, name = service.capture(stack)
            captures.append((ours, plain, growth))

            plain_volume, clone = f"{stack}-plain{n}", f"{stack}-clone{n}"
            made += [plain_volume, f"{clone}_data"]
            _sync()
            plain = baseline_restore(str(folder / "data" / "backups" / name), plain_volume)
            began = time.perf_counter()
            assert http.post(f"/api/backups/{name}/verify").json()["ok"]
            checks.append(time.perf_counter() - began)
            ours, growth = service.restore(name, clone)
            restores.append((ours, plain, growth))
            # Room for the next round: its volumes and archive go.
            http.delete(f"/api/backups/{name}").raise_for_status()
            _remove_volumes(plain_volume, f"{clone}_data")

        mib = tar_bytes / 2**20
        ours, plain = median(c[0] for c in captures), median(c[1] for c in captures)
        print(
            f"capture: stackyard {mib / ours:.1f} MiB/s ({ours:.1f} s, archive written and "
            f"checked) | plain tar | gzip in a helper {mib / plain:.1f} MiB/s "
            f"({plain:.1f} s) | ratio {plain / ours:.2f} (goal >= 0.9) | service RSS growth "
            f"{max(c[2] for c in captures):.1f} MiB at most (goal < 64) | "
            f"ratios {', '.join(f'{c[1] / c[0]:.2f}' for c in captures)}",
            flush=True,
        )
        ours, plain = median(r[0] for r in restores), median(r[1] for r in restores)
        print(
            f"restore: stackyard {mib / ours:.1f} MiB/s ({ours:.1f} s, checked through, then "
            f"extracted) | plain tar -xz in a helper {mib / plain:.1f} MiB/s "
            f"({plain:.1f} s) | ratio {plain / ours:.2f} (goal >= 0.9) | service RSS growth "
            f"{max(r[2] for r in restores):.1f} MiB at most (goal < 64) | "
            f"ratios {', '.join(f'{r[1] / r[0]:.2f}' for r in restores)} | "
            f"the check pass alone (verify) {median(checks):.1f} s",
            flush=True,
        )
    finally:
        if server is not None:
            server.stop()
        _remove_volumes(*made)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    run()
