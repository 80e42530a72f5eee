"""The SFTP and S3 client libraries load when a destination of their kind is used, not
when the service starts (0.8 s and about 50 MiB a host without them never needs)."""

import os
import secrets
import subprocess
import sys

SCRIPT = """
import sys
from fastapi.testclient import TestClient
from stackyard.app import create_app
from stackyard.settings import Settings

app = create_app(Settings())


async def warmed_up():
    await app.state.warm_up


with TestClient(app) as client:
    client.portal.call(warmed_up)  # start-up, its warm-up included
    assert client.get("/api/health").status_code == 200
    print(sorted(m for m in ("asyncssh", "boto3", "botocore") if m in sys.modules))
    app.state.destinations.all()  # none yet: nothing to load
    print(sorted(m for m in ("asyncssh", "boto3", "botocore") if m in sys.modules))
"""


def test_the_service_starts_without_the_sftp_and_s3_libraries(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STACKYARD_", "STACKS_"))}
    env.update(
        STACKYARD_DATA_DIR=str(tmp_path / "data"),
        STACKS_DIR=str(tmp_path / "stacks"),
        STACKYARD_SECRET_KEY=secrets.token_urlsafe(48),
        STACKYARD_ADMIN_PASSWORD=secrets.token_urlsafe(24),
        STACKYARD_UPDATE_CHECK_INTERVAL="0",
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["[]", "[]"]
