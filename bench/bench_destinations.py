"""Pushing and pulling a 2 GiB archive to and from SFTP and S3 destinations.

The archive is a real backup (of a volume of random files) made by the service. Peers on
loopback: OpenSSH's sshd, and moto's S3 server. Baselines in the same run, moving the
same file to the same server: the OpenSSH `sftp` client (`put`, `get`), and boto3's own
`upload_file` / `download_file`. Ours: the whole push and pull
through the API (each a run, from its start to its end as the run records them, the pulled
archive's manifest read before it is kept; the run is looked at twice a second). Goals:
SFTP at least 0.8 of `sftp`, S3 at least 0.9 of boto3; the service's peak RSS growth flat
(under 64 MiB).

Sizes: `BENCH_DESTINATION_MIB` (default 2048) for SFTP; `BENCH_S3_MIB` (default 256) for
S3, because moto reads an object's whole value for every ranged GET (both boto3 and the
service download in 8 MiB ranges): a 2 GiB download there runs at about 4 MiB/s on both
sides and measures moto, not the client. The `sftp` client picks ChaCha20-Poly1305 by
default and the service AES-GCM; a second baseline runs `sftp -c aes128-gcm@openssh.com`
so that the client is also compared like for like. For S3 the goal is judged against
boto3 under the issue's own rule for the service, checksum headers only when required
(`client_config`: the same requests on the wire); boto3 with its defaults runs too, for
reference: it declares CRC32 on every part, and moto completes an upload that declares no
algorithm by copying the whole object twice more to compute a whole-object checksum (py-spy
on moto: the extra time is there, not in the client). Each figure is the median of
`BENCH_ROUNDS` (default 3) rounds, ours and the baselines taking turns; the goal lines give
the best and the median of the ratios round by round. The RSS growth is measured per round
(a push and a pull) after a test of the destination (which loads its client library).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from statistics import median
from typing import TYPE_CHECKING

import boto3
import httpx
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from tests.support.peers import running_moto, running_sshd

from bench.common import (
    ROUNDS,
    VENV_BIN,
    RssPeak,
    Started,
    admin_token,
    free_port,
    goal,
    stackyard_env,
    start,
    wait_succeeded,
    workdir,
)
from stackyard.destinations.s3 import client_config

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

SFTP_MIB = int(os.environ.get("BENCH_DESTINATION_MIB", "2048"))
S3_MIB = int(os.environ.get("BENCH_S3_MIB", "256"))
HELPER = "stackyard-test/busybox:1"
#: The goals: our rate at least this part of the baseline's; the service's RSS growth.
SFTP_GOAL, S3_GOAL, RSS_GOAL = 0.8, 0.9, 64
HELPER_RUN = ["docker", "run", "--rm", "-v"]
FILL = """
cd /data
rm -f r*
i=0
while [ $i -lt {files} ]; do head -c 16777216 /dev/urandom > r$i; i=$((i+1)); done
"""


def timed(work: Callable[[], object]) -> float:
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


class Bench:
    """One service, one stack with a volume of random files; `archive(mib)` backs it up."""

    def __init__(self, root: Path, client: httpx.Client, server: Started, stack: str) -> None:
        self.root, self.client, self.server, self.stack = root, client, server, stack
        self.growths: dict[str, list[float]] = {}  # per kind, one a round

    def archive(self, mib: int) -> Path:
        for old in self.client.get("/api/backups").json():
            self.client.delete(f"/api/backups/{old['name']}")
        fill = FILL.format(files=mib // 16)
        subprocess.run(
            [*HELPER_RUN, f"{self.stack}_data:/data", HELPER, "sh", "-c", fill],
            check=True,
            capture_output=True,
        )
        assert self.client.post(f"/api/stacks/{self.stack}/backups", json={}).status_code == 202
        wait_succeeded(self.client, self.stack)
        (name,) = [a["name"] for a in self.client.get("/api/backups").json()]
        local = self.root / "data" / "backups" / name
        print(f"archive: {local.stat().st_size / 2**20:.0f} MiB", flush=True)
        return local

    def run_seconds(self, path: str, body: dict | None = None) -> float:
        """A push or pull from its run's start to its end (as the run records them):
        asked for twice a second, so that watching it costs the service next to nothing."""
        self.client.post(path, json=body).raise_for_status()
        state = wait_succeeded(self.client, self.stack, every=0.5)
        ended, began = (datetime.fromisoformat(state[k]) for k in ("finished_at", "started_at"))
        return (ended - began).total_seconds()

    def ours(self, local: Path, dest_id: int, kind: str) -> tuple[float, float]:
        """The service's push and pull of `local`, each a whole run."""
        name = local.name
        rss = RssPeak(self.server.process.pid)
        push = self.run_seconds(f"/api/backups/{name}/push", {"destination_id": dest_id})
        aside = local.with_name(".aside")
        local.rename(aside)
        pull = self.run_seconds(f"/api/destinations/{dest_id}/archives/{name}/pull")
        local.unlink()
        aside.rename(local)
        self.growths.setdefault(kind, []).append(rss.growth())
        return push, pull


Seconds = tuple[float, float]  # a push and a pull


def compare(
    kind: str,
    size: int,
    ours: Callable[[], Seconds],
    baselines: dict[str, Callable[[], Seconds]],
    judged: str,
    limit: float,
) -> None:
    """Rounds of ours and each baseline in turn; the median of each, and their ratio. Our
    rate over the `judged` baseline's, round by round, is the goal's figure (at least
    `limit`)."""
    mine: list[Seconds] = []
    theirs: dict[str, list[Seconds]] = {label: [] for label in baselines}
    for _ in range(ROUNDS):
        mine.append(ours())
        for label, work in baselines.items():
            theirs[label].append(work())
    rate = lambda seconds: size / 2**20 / seconds  # noqa: E731
    for label, pairs in theirs.items():
        for verb, at in ("push", 0), ("pull", 1):
            a, b = median(p[at] for p in mine), median(p[at] for p in pairs)
            print(
                f"{kind} {verb}: stackyard {rate(a):.0f} MiB/s ({a:.1f} s) | "
                f"{label.split('/')[at]} {rate(b):.0f} MiB/s ({b:.1f} s) | ratio {b / a:.2f}",
                flush=True,
            )
    for verb, at in ("push", 0), ("pull", 1):
        goal(
            f"{kind} {verb} MiB/s / {judged.split('/')[at]}",
            [t[at] / m[at] for m, t in zip(mine, theirs[judged], strict=True)],
            limit,
            "x",
            at_least=True,
        )


def bench_sftp(bench: Bench) -> None:
    local = bench.archive(SFTP_MIB)
    name = local.name
    with running_sshd("bench") as sshd:
        folder = sshd.home / "backups"
        made = bench.client.post(
            "/api/destinations",
            json={
                "name": "sftp",
                "settings": {
                    "type": "sftp",
                    "host": sshd.host,
                    "port": sshd.port,
                    "username": sshd.user,
                    "folder": "backups",
                },
                "secrets": {"private_key": sshd.key},
            },
        ).json()
        assert bench.client.post(f"/api/destinations/{made['id']}/test").status_code == 200
        known = bench.root / "known_hosts"
        known.write_text(f"[{sshd.host}]:{sshd.port} {sshd.host_key()}\n")
        back = bench.root / "back.tar"
        client = ["sftp", "-q", "-i", str(sshd.key_file), "-P", str(sshd.port), "-b", "-"]
        client += ["-o", f"UserKnownHostsFile={known}", "-o", "BatchMode=yes"]

        def ours() -> Seconds:
            seconds = bench.ours(local, made["id"], "sftp")
            (folder / name).unlink()
            return seconds

        def theirs(*options: str) -> Callable[[], Seconds]:
            def sftp(command: str) -> float:
                return timed(
                    lambda: subprocess.run(
                        [*client, *options, f"{sshd.user}@{sshd.host}"],
                        input=command,
                        text=True,
                        check=True,
                        stdout=subprocess.DEVNULL,
                    )
                )

            def both() -> Seconds:
                push = sftp(f"put {local} backups/{name}\n")
                pull = sftp(f"get backups/{name} {back}\n")
                back.unlink()
                (folder / name).unlink()
                return push, pull

            return both

        compare(
            "sftp",
            local.stat().st_size,
            ours,
            {
                "sftp put/sftp get": theirs(),
                "sftp -c aes-gcm put/sftp -c aes-gcm get": theirs("-c", "aes128-gcm@openssh.com"),
            },
            judged="sftp put/sftp get",
            limit=SFTP_GOAL,
        )


def bench_s3(bench: Bench) -> None:
    local = bench.archive(S3_MIB)
    name = local.name
    with running_moto(signed=False) as moto:

        def client(config: Config | None = None) -> S3Client:
            return boto3.client(
                "s3",
                endpoint_url=moto.url,
                region_name="us-east-1",
                aws_access_key_id="any",
                aws_secret_access_key="any",
                config=config,
            )

        s3 = client()
        s3.create_bucket(Bucket="bench")
        # boto3 with the service's own client settings (checksums only when required, as
        # the issue asks of the service): the same requests on the wire, the goal's baseline.
        same = client(client_config(moto.url, path_style=True))
        made = bench.client.post("/api/destinations", json=moto.destination("bench", "s3")).json()
        assert bench.client.post(f"/api/destinations/{made['id']}/test").status_code == 200
        back = bench.root / "back.tar"
        config = TransferConfig()

        def ours() -> Seconds:
            seconds = bench.ours(local, made["id"], "s3")
            s3.delete_object(Bucket="bench", Key=name)
            return seconds

        def theirs(s3: S3Client) -> Callable[[], Seconds]:
            def work() -> Seconds:
                push = timed(lambda: s3.upload_file(str(local), "bench", name, Config=config))
                pull = timed(lambda: s3.download_file("bench", name, str(back), Config=config))
                back.unlink()
                s3.delete_object(Bucket="bench", Key=name)
                return push, pull

            return work

        compare(
            "s3",
            local.stat().st_size,
            ours,
            {
                "boto3 upload_file/boto3 download_file": theirs(same),
                "boto3 defaults upload_file/boto3 defaults download_file": theirs(s3),
            },
            judged="boto3 upload_file/boto3 download_file",
            limit=S3_GOAL,
        )


def run() -> None:
    root = workdir()
    stack = f"dest-{uuid.uuid4().hex[:6]}"
    volume = f"{stack}_data"
    (root / "stacks" / stack).mkdir(parents=True)
    (root / "stacks" / stack / "compose.yaml").write_text(
        f"services:\n  app:\n    image: {HELPER}\n    volumes: ['data:/data']\nvolumes:\n  data:\n"
    )
    subprocess.run(["docker", "volume", "create", volume], check=True, capture_output=True)
    env = stackyard_env(root)
    env["BACKUP_HELPER_IMAGE"] = HELPER
    env["STACKYARD_BACKUP_LEVEL"] = "0"
    port = free_port()
    server = start(
        [str(VENV_BIN / "stackyard"), "serve", "--port", str(port)], env, "/api/health", port
    )
    token = admin_token(root, env)
    client = httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60
    )
    try:
        bench = Bench(root, client, server, stack)
        bench_sftp(bench)
        bench_s3(bench)
        for kind, growths in bench.growths.items():
            print(
                f"{kind}: service RSS peak growth {max(growths):.1f} MiB at most "
                f"({', '.join(f'{g:.1f}' for g in growths)})",
                flush=True,
            )
            goal(f"{kind} push and pull: service RSS peak growth", growths, RSS_GOAL, " MiB")
    finally:
        client.close()
        server.stop()
        subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
