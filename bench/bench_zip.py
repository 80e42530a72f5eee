"""Folder download as a streamed zip: ~1 GiB in a few thousand files, against Info-ZIP
`zip -r -q -` of the same folder at the same compression level, both into nothing.

Prints, over `BENCH_ROUNDS` rounds (Info-ZIP and the download take turns), the throughput
ratio (goal: at least 1.8, deflate on both cores; issue 43), the time to the first byte
(goal: under 100 ms) and the service's peak RSS growth during the download (goal: flat,
under 32 MiB).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import threading
import time

import httpx

from bench.common import (
    ROUNDS,
    VENV_BIN,
    admin_token,
    free_port,
    goal,
    rss_mib,
    stackyard_env,
    start,
    workdir,
)

FILES = 3000
TOTAL = 1024**3
LEVEL = 6


def _make_folder(folder) -> int:
    """Half incompressible, half text-like bytes: deflate has real work on both."""
    rng = random.Random(7)
    words = b" ".join(
        rng.choice(
            [
                b"stack",
                b"compose",
                b"volume",
                b"image",
                b"service",
                b"network",
                b"backup",
                b"restore",
            ]
        )
        for _ in range(4096)
    )
    per_file = TOTAL // FILES
    written = 0
    for i in range(FILES):
        sub = folder / f"dir{i % 40:02d}" / f"sub{i % 7}"
        sub.mkdir(parents=True, exist_ok=True)
        size = rng.randint(per_file // 2, per_file * 3 // 2)
        half = size // 2
        text = (words * (half // len(words) + 1))[: size - half]
        (sub / f"file{i:05d}.dat").write_bytes(os.urandom(half) + text)
        written += size
    (folder / "empty").mkdir()
    return written


def _zip_cli(parent, name) -> float:
    began = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run(
            ["zip", "-r", "-q", f"-{LEVEL}", "-", name], cwd=parent, stdout=sink, check=True
        )
    return time.perf_counter() - began


def _download(url: str, token: str, name: str, pid: int) -> tuple[float, float, int, float]:
    """(seconds, time to first byte, bytes received, peak RSS growth MiB)."""
    baseline = rss_mib(pid)
    peak = [baseline]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_mib(pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    received, first = 0, None
    # The client is made before the clock starts: making one loads the CA bundle (30-45 ms
    # of this process's CPU), which the first byte used to include.
    client = httpx.Client(timeout=600)
    began = time.perf_counter()
    try:
        with client.stream(
            "GET",
            f"{url}/api/files/download",
            params={"path": name},
            headers={"Authorization": f"Bearer {token}"},
        ) as response:
            response.raise_for_status()
            for chunk in response.iter_raw():  # as it comes: the first bytes are timed
                if first is None:
                    first = time.perf_counter() - began
                received += len(chunk)
    finally:
        client.close()
        done.set()
        sampler.join()
    return time.perf_counter() - began, first or 0.0, received, peak[0] - baseline


def run() -> None:
    folder = workdir()
    server = None
    try:
        stacks = folder / "stacks"
        data = stacks / "bigfolder"
        data.mkdir(parents=True)
        size = _make_folder(data)
        print(f"setup: {FILES} files, {size / 1024**3:.2f} GiB", flush=True)
        _zip_cli(stacks, "bigfolder")  # warm the page cache for both

        env = {**stackyard_env(folder), "STACKYARD_ZIP_LEVEL": str(LEVEL)}
        port = free_port()
        server = start(
            [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
        )
        token = admin_token(folder, env)

        ratios, firsts, growths = [], [], []
        for _ in range(ROUNDS):
            zip_seconds = _zip_cli(stacks, "bigfolder")
            seconds, ttfb, received, growth = _download(
                server.url, token, "bigfolder", server.process.pid
            )
            ours, theirs = size / seconds / 1e6, size / zip_seconds / 1e6
            print(
                f"throughput: stackyard {ours:.1f} MB/s ({seconds:.1f} s, {received / 1e6:.0f} "
                f"MB sent) | zip -r -q -{LEVEL} - {theirs:.1f} MB/s ({zip_seconds:.1f} s) "
                f"| ratio {ours / theirs:.2f} | first byte {ttfb * 1000:.0f} ms "
                f"| peak RSS growth {growth:.1f} MiB",
                flush=True,
            )
            ratios.append(ours / theirs)
            firsts.append(ttfb * 1000)
            growths.append(growth)
        goal(
            f"zip {size / 1024**3:.0f} GiB throughput / Info-ZIP zip -{LEVEL}",
            ratios,
            1.8,
            "x",
            at_least=True,
        )
        goal("zip: time to the first byte", firsts, 100, " ms")
        goal("zip: service RSS peak growth", growths, 32, " MiB")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    run()
