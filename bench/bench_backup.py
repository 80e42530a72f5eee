"""Backing up and restoring a volume of about 2 GiB in 2,000 files (half random, half text).

Baselines in the same run, through the same helper image and the same compressor (gzip
by zlib-ng at the service's level): capture, a plain `tar -c` of the volume in a helper
piped through the compressor to nothing; restore, the volume's compressed tar piped into a
plain `tar -xz` in a helper. Ours: the whole backup through the API (stack folder, the
volume, the archive written and checked) and the whole restore of it as a clone (checked
through, then extracted). Goals: throughput ratio at least 0.9; the service's peak RSS
growth flat (under 64 MiB). `BENCH_BACKUP_FILES` (default 2000, 1 MiB each) scales it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid

import httpx
from zlib_ng import zlib_ng

from bench.common import (
    VENV_BIN,
    RssPeak,
    admin_token,
    free_port,
    stackyard_env,
    start,
    wait_run,
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


def run() -> None:
    folder = workdir()
    stack = f"bkbench-{uuid.uuid4().hex[:6]}"
    (folder / "stacks" / stack).mkdir(parents=True)
    (folder / "stacks" / stack / "compose.yaml").write_text(
        f"services:\n  app:\n    image: {HELPER}\n    volumes: ['data:/data']\nvolumes:\n  data:\n"
    )
    volume, clone = f"{stack}_data", f"{stack}-clone"
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

        base_seconds, tar_bytes = baseline_capture(volume)
        rss = RssPeak(server.process.pid)
        began = time.perf_counter()
        http.post(f"/api/stacks/{stack}/backups", json={}).raise_for_status()
        outcome = wait_run(http, stack)
        ours = time.perf_counter() - began
        growth = rss.growth()
        assert outcome["status"] == "succeeded", outcome["progress"]["errors"]
        mib = tar_bytes / 2**20
        print(
            f"capture: stackyard {mib / ours:.1f} MiB/s ({ours:.1f} s, archive written and "
            f"checked) | plain tar | gzip in a helper {mib / base_seconds:.1f} MiB/s "
            f"({base_seconds:.1f} s) | ratio {base_seconds / ours:.2f} (goal >= 0.9) | "
            f"service RSS growth {growth:.1f} MiB (goal < 64)",
            flush=True,
        )

        (archive,) = http.get("/api/backups").json()
        path = folder / "data" / "backups" / archive["name"]
        base_restore = baseline_restore(str(path), f"{stack}-plain")
        began = time.perf_counter()
        assert http.post(f"/api/backups/{archive['name']}/verify").json()["ok"]
        checked = time.perf_counter() - began
        rss = RssPeak(server.process.pid)
        began = time.perf_counter()
        http.post(
            f"/api/backups/{archive['name']}/restore", json={"stack": clone}
        ).raise_for_status()
        outcome = wait_run(http, clone)
        ours = time.perf_counter() - began
        growth = rss.growth()
        assert outcome["status"] == "succeeded", outcome["progress"]["errors"]
        print(
            f"restore: stackyard {mib / ours:.1f} MiB/s ({ours:.1f} s, checked through, then "
            f"extracted) | plain tar -xz in a helper {mib / base_restore:.1f} MiB/s "
            f"({base_restore:.1f} s) | ratio {base_restore / ours:.2f} (goal >= 0.9) | "
            f"service RSS growth {growth:.1f} MiB (goal < 64) | the check pass alone (verify) "
            f"{checked:.1f} s",
            flush=True,
        )
    finally:
        if server is not None:
            server.stop()
        for name in (volume, f"{clone}_data", f"{stack}-plain"):
            subprocess.run(["docker", "volume", "rm", "-f", name], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    run()
