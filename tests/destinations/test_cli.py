"""`stackyard destination`, `backup push|pull` and `schedule` on the command line."""

from __future__ import annotations

import subprocess
import uuid

import httpx
import pytest
from tests.support.service import (
    ADMIN_PASSWORD,
    ANSWER_WITHIN,
    STACKYARD_BIN,
    service_env,
    sign_in,
    start_server,
)
from tests.support.stacks import compose_text, service

pytestmark = pytest.mark.docker


def test_destinations_pushes_pulls_and_schedules_from_the_command_line(
    tmp_path, s3_server, docker_cleanup
):
    stack = f"cli-{uuid.uuid4().hex[:6]}"
    (tmp_path / "stacks" / stack).mkdir(parents=True)
    (tmp_path / "stacks" / stack / "compose.yaml").write_text(compose_text(app=service()))
    docker_cleanup.compose_project(stack)
    env = service_env(tmp_path)
    bucket = s3_server.bucket()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(STACKYARD_BIN), *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=180,
        )

    server = start_server(tmp_path, env=env)
    try:
        with httpx.Client(base_url=server.url, timeout=ANSWER_WITHIN) as client:
            sign_in(client, "admin", ADMIN_PASSWORD)
            made = client.post(
                "/api/destinations",
                json=s3_server.destination(bucket, "offsite"),
            )
            assert made.status_code == 201, made.text
            scheduled = client.post(
                "/api/schedules",
                json={
                    "name": "nightly",
                    "stacks": [stack],
                    "cron": "daily",
                    "destination_id": made.json()["id"],
                    "keep_last": 1,
                },
            )
            assert scheduled.status_code == 201, scheduled.text
            # A schedule on an agent that is not reached (disabled): nothing runs.
            body = {"name": "away", "url": "http://127.0.0.1:9", "token": "t" * 32}
            away = client.post("/api/agents", json=body).json()
            off = client.put(f"/api/agents/{away['id']}", json={**body, "enabled": False})
            assert off.status_code == 200, off.text
            elsewhere = client.post(
                "/api/schedules",
                json={"name": "away", "stacks": [stack], "cron": "daily", "agent_id": away["id"]},
            )
            assert elsewhere.status_code == 201, elsewhere.text
    finally:
        server.stop()

    listed = cli("destination", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(f"{made.json()['id']}\toffsite\ts3\t{s3_server.url}")
    tested = cli("destination", "test", "offsite")
    assert tested.returncode == 0 and "writable" in tested.stdout, tested.stderr

    created = cli("backup", "create", stack)
    assert created.returncode == 0, created.stderr
    name = cli("backup", "list").stdout.split("\t")[0]
    pushed = cli("backup", "push", name, "--to", "offsite")
    assert pushed.returncode == 0, pushed.stderr
    assert "━" in pushed.stderr  # drawn with the progress bar
    assert cli("destination", "archives", "offsite").stdout.startswith(f"{name}\t")
    local = tmp_path / "data" / "backups" / name
    original = local.read_bytes()
    local.unlink()
    pulled = cli("backup", "pull", "offsite", name)
    assert pulled.returncode == 0, pulled.stderr
    assert local.read_bytes() == original
    drilled = cli("backup", "drill", name, "--settle", "1")
    assert drilled.returncode == 0, drilled.stderr
    assert "Starting the clone without network or published ports" in drilled.stderr
    assert drilled.stdout.startswith("restore verified: 0 volumes and folders")
    missing = cli("backup", "pull", "offsite", name.replace(".tar", "-9.tar"))
    assert missing.returncode == 1 and "already" not in missing.stderr

    schedules = cli("schedule", "list")
    assert "\tnightly\t0 3 * * * UTC\t" in schedules.stdout
    ran = cli("schedule", "run", "nightly")
    assert ran.returncode == 0, ran.stderr
    line = ran.stdout.strip()
    assert line.startswith(f"{stack}\tsucceeded\t{stack}--") and "2 pruned" in line
    keys = [o["Key"] for o in s3_server.client().list_objects_v2(Bucket=bucket)["Contents"]]
    # The newest kept, the older one pruned here and at the destination.
    assert len(keys) == 1 and keys[0] != name
    assert [p.name for p in local.parent.glob("*.tar")] == keys

    # Its host not reached, no stack ran: a failure, said (it was an exit 0 saying nothing).
    failed = cli("schedule", "run", "away")
    assert failed.returncode == 1 and failed.stdout == "", failed.stdout
    assert "error: schedule 'away' failed before it ran any stack" in failed.stderr

    unknown = cli("destination", "test", "nowhere")
    assert unknown.returncode != 0 and "No destination 'nowhere'" in unknown.stderr
