"""Pushing and pulling a 2 GiB archive to and from SFTP and S3 destinations.

The archive is a real backup (of a volume of random files) made by the service. Peers on
loopback: OpenSSH's sshd, and moto's S3 server. Baselines in the same run, moving the
same file to the same server: the OpenSSH `sftp` client (`put`, `get`), and boto3's own
`upload_file` / `download_file` with its default settings. Ours: the whole push and pull
through the API (each a run, from its start to its end, the pulled archive's manifest
read before it is kept). Goals: SFTP at least 0.8 of `sftp`, S3 at least 0.9 of boto3;
the service's peak RSS growth flat (under 64 MiB). `BENCH_DESTINATION_MIB` (default 2048)
scales it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable

import boto3
import httpx
from boto3.s3.transfer import TransferConfig
from tests.support.peers import running_moto, running_sshd

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

MIB_TOTAL = int(os.environ.get("BENCH_DESTINATION_MIB", "2048"))
HELPER = "stackyard-test/busybox:1"
FILL = f"""
cd /data
i=0
while [ $i -lt {MIB_TOTAL // 16} ]; do head -c 16777216 /dev/urandom > r$i; i=$((i+1)); done
"""


def timed(work: Callable[[], None]) -> float:
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


def finished(client: httpx.Client, stack: str) -> None:
    state = wait_run(client, stack)
    if state["status"] != "succeeded":
        raise RuntimeError(f"run failed: {state['progress']['errors']}")


def run() -> None:
    root = workdir()
    stack = f"dest-{uuid.uuid4().hex[:6]}"
    volume = f"{stack}_data"
    (root / "stacks" / stack).mkdir(parents=True)
    (root / "stacks" / stack / "compose.yaml").write_text(
        f"services:\n  app:\n    image: {HELPER}\n    volumes: ['data:/data']\nvolumes:\n  data:\n"
    )
    subprocess.run(["docker", "volume", "create", volume], check=True, capture_output=True)
    subprocess.run(
        ["docker", "run", "--rm", "-v", f"{volume}:/data", HELPER, "sh", "-c", FILL],
        check=True,
        capture_output=True,
    )
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
        assert client.post(f"/api/stacks/{stack}/backups", json={}).status_code == 202
        finished(client, stack)
        (name,) = [a["name"] for a in client.get("/api/backups").json()]
        local = root / "data" / "backups" / name
        size = local.stat().st_size
        print(f"archive: {size / 2**20:.0f} MiB", flush=True)
        growths: list[float] = []

        def ours(dest_id: int) -> tuple[float, float]:
            rss = RssPeak(server.process.pid)
            push = timed(
                lambda: (
                    client.post(f"/api/backups/{name}/push", json={"destination_id": dest_id}),
                    finished(client, stack),
                )
            )
            aside = local.with_name(".aside")
            local.rename(aside)
            pull = timed(
                lambda: (
                    client.post(f"/api/destinations/{dest_id}/archives/{name}/pull"),
                    finished(client, stack),
                )
            )
            local.unlink()
            aside.rename(local)
            growths.append(rss.growth())
            return push, pull

        def line(kind: str, mine: float, theirs: float, baseline: str) -> None:
            rate = lambda seconds: size / 2**20 / seconds  # noqa: E731
            print(
                f"{kind}: stackyard {rate(mine):.0f} MiB/s ({mine:.1f} s) | {baseline} "
                f"{rate(theirs):.0f} MiB/s ({theirs:.1f} s) | ratio {theirs / mine:.2f}",
                flush=True,
            )

        with running_sshd("bench") as sshd:
            folder = sshd.home / "backups"
            made = client.post(
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
            assert client.post(f"/api/destinations/{made['id']}/test").status_code == 200
            push, pull = ours(made["id"])
            (folder / name).unlink()
            known = root / "known_hosts"
            known.write_text(f"[{sshd.host}]:{sshd.port} {sshd.host_key()}\n")
            sftp = [
                "sftp",
                "-q",
                "-i",
                str(sshd.key_file),
                "-P",
                str(sshd.port),
                "-o",
                f"UserKnownHostsFile={known}",
                "-o",
                "BatchMode=yes",
                "-b",
                "-",
                f"{sshd.user}@{sshd.host}",
            ]
            back = root / "back.tar"
            their_push = timed(
                lambda: subprocess.run(
                    sftp, input=f"put {local} backups/{name}\n", text=True, check=True
                )
            )
            their_pull = timed(
                lambda: subprocess.run(
                    sftp, input=f"get backups/{name} {back}\n", text=True, check=True
                )
            )
            back.unlink()
            line("sftp push", push, their_push, "sftp put")
            line("sftp pull", pull, their_pull, "sftp get")

        with running_moto(signed=False) as moto:
            s3 = boto3.client(
                "s3",
                endpoint_url=moto.url,
                region_name="us-east-1",
                aws_access_key_id="any",
                aws_secret_access_key="any",
            )
            s3.create_bucket(Bucket="bench")
            made = client.post("/api/destinations", json=moto.destination("bench", "s3")).json()
            push, pull = ours(made["id"])
            s3.delete_object(Bucket="bench", Key=name)
            back = root / "back.tar"
            config = TransferConfig()
            their_push = timed(lambda: s3.upload_file(str(local), "bench", name, Config=config))
            their_pull = timed(lambda: s3.download_file("bench", name, str(back), Config=config))
            back.unlink()
            line("s3 push", push, their_push, "boto3 upload_file")
            line("s3 pull", pull, their_pull, "boto3 download_file")

        print(f"service RSS peak growth: {max(growths):.1f} MiB (goal under 64)", flush=True)
    finally:
        client.close()
        server.stop()
        subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
