"""Backing up and restoring a volume of about 2 GiB in 2,000 files (half random, half text).

Baselines in the same run: busybox `tar -czf -` of the volume in a helper (read to
nothing), and the volume's compressed tar piped into busybox `tar -xzf -` in a helper.
Ours, with full fidelity (GNU tar in the helper image `stackyard-test/helper:1`): the whole
backup through the API (stack folder, the volume, the archive written and checked) and the
whole restore of it as a clone (checked through, then extracted). Goals (issue 20): our
time at most 0.6x the baseline's for a backup and 1.0x for a restore; the service's peak
RSS growth under 64 MiB; a 1 GiB sparse file with 8 KiB of data backed up and restored
in under 2 s each, and restored sparse. `BENCH_BACKUP_FILES` (default 2000, 1 MiB each)
scales it.

Each figure is measured in `BENCH_ROUNDS` (default 3) rounds (the sparse file's once); the
goal lines give the best and the median, the ratios per round. Every timed run starts
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

from bench.common import (
    ROUNDS,
    VENV_BIN,
    RssPeak,
    admin_token,
    free_port,
    goal,
    stackyard_env,
    start,
    wait_succeeded,
    workdir,
)

FILES = int(os.environ.get("BENCH_BACKUP_FILES", "2000"))
HELPER = "stackyard-test/helper:1"
BUSYBOX = "stackyard-test/busybox:1"
LEVEL = 1
#: The goals (issue 20): our time / the baseline's, the service's RSS growth, the sparse file.
CAPTURE_GOAL, RESTORE_GOAL, RSS_GOAL, SPARSE_GOAL = 0.6, 1.0, 64, 2
FILL = f"""
cd /data
i=0
while [ $i -lt {FILES // 2} ]; do
  head -c 1048576 /dev/urandom > r$i
  yes "a line of text for a compressible file, number $i" | head -c 1048576 > t$i
  i=$((i+1))
done
"""


def _helper(volume: str, *command: str, stdin: bool = False) -> subprocess.Popen:
    mount = ["-v", f"{volume}:/data", "--log-driver", "none"]
    interactive = ["-i"] if stdin else []
    return subprocess.Popen(
        ["docker", "run", "--rm", *interactive, *mount, BUSYBOX, *command],
        stdin=subprocess.PIPE if stdin else None,
        stdout=None if stdin else subprocess.PIPE,
    )


def baseline_capture(volume: str) -> tuple[float, int]:
    """busybox `tar -czf -` of the volume in a helper, read to nothing."""
    began = time.perf_counter()
    process = _helper(volume, "tar", "-czf", "-", "-C", "/", "data")
    assert process.stdout is not None
    size = 0
    while chunk := process.stdout.read(1 << 20):
        size += len(chunk)
    assert process.wait() == 0
    return time.perf_counter() - began, size


def baseline_restore(archive: str, volume: str) -> float:
    """The volume's compressed tar (read out of the archive) into busybox `tar -xzf -`."""
    import tarfile

    subprocess.run(["docker", "volume", "create", volume], check=True, capture_output=True)
    began = time.perf_counter()
    process = _helper(volume, "tar", "-xzf", "-", "-C", "/", stdin=True)
    with tarfile.open(archive) as outer:
        handle = outer.extractfile("volumes/0.tar.gz")
        assert handle is not None and process.stdin is not None
        shutil.copyfileobj(handle, process.stdin, 1 << 20)
    process.stdin.close()
    assert process.wait() == 0
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


def sparse(folder, service: Service) -> list[str]:
    """A 1 GiB sparse file with 8 KiB of data: backed up and restored (as a clone), each
    timed; the volumes made."""
    stack = f"sparse-{uuid.uuid4().hex[:6]}"
    (folder / "stacks" / stack).mkdir(parents=True)
    (folder / "stacks" / stack / "compose.yaml").write_text(
        f"services:\n  app:\n    image: {BUSYBOX}\n    volumes: ['data:/data']\nvolumes:\n  data:\n"
    )
    volume, clone = f"{stack}_data", f"{stack}-clone"
    subprocess.run(["docker", "volume", "create", volume], check=True, capture_output=True)
    fill = "head -c 8192 /dev/urandom > /data/f && truncate -s 1G /data/f"
    assert _helper(volume, "sh", "-c", fill).wait() == 0
    backup, _, name = service.capture(stack)
    restore, _ = service.restore(name, clone)
    service.http.delete(f"/api/backups/{name}").raise_for_status()
    check = "stat -c '%s %b %B' /data/f"
    out = subprocess.run(
        ["docker", "run", "--rm", "-v", f"{clone}_data:/data", BUSYBOX, "sh", "-c", check],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    size, blocks, unit = map(int, out)
    print(
        f"sparse: 1 GiB file with 8 KiB of data: backup {backup:.2f} s, restore {restore:.2f} s "
        f"| restored {size} bytes in {blocks * unit // 1024} KiB on disk",
        flush=True,
    )
    goal("backup of a 1 GiB sparse file (8 KiB of data)", [backup], SPARSE_GOAL, " s")
    goal("restore of a 1 GiB sparse file (8 KiB of data)", [restore], SPARSE_GOAL, " s")
    return [volume, f"{clone}_data"]


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
            f"capture: stackyard {ours:.1f} s (archive written and checked, everything kept) "
            f"| busybox tar -czf in a helper {plain:.1f} s ({mib:.0f} MiB compressed) | "
            f"time ratio {ours / plain:.2f} | service RSS growth "
            f"{max(c[2] for c in captures):.1f} MiB at most | "
            f"ratios {', '.join(f'{c[0] / c[1]:.2f}' for c in captures)}",
            flush=True,
        )
        ours, plain = median(r[0] for r in restores), median(r[1] for r in restores)
        print(
            f"restore: stackyard {ours:.1f} s (checked through, then extracted) | busybox "
            f"tar -xzf in a helper {plain:.1f} s | time ratio {ours / plain:.2f} "
            f"| service RSS growth {max(r[2] for r in restores):.1f} MiB at most "
            f"| ratios {', '.join(f'{r[0] / r[1]:.2f}' for r in restores)} | "
            f"the check pass alone (verify) {median(checks):.1f} s",
            flush=True,
        )
        goal(
            f"backup {FILES} MiB / busybox tar -czf in a helper",
            [c[0] / c[1] for c in captures],
            CAPTURE_GOAL,
            "x",
        )
        goal("backup: service RSS peak growth", [c[2] for c in captures], RSS_GOAL, " MiB")
        goal(
            f"restore {FILES} MiB / busybox tar -xzf in a helper",
            [r[0] / r[1] for r in restores],
            RESTORE_GOAL,
            "x",
        )
        goal("restore: service RSS peak growth", [r[2] for r in restores], RSS_GOAL, " MiB")
        made += sparse(folder, service)
    finally:
        if server is not None:
            server.stop()
        _remove_volumes(*made)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    run()
