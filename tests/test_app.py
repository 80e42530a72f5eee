"""What a start of the service loads: only what answering needs. The libraries of one
capability load when it is first used (the SFTP and S3 clients with a destination of
their kind, aiohttp with an agent, httpx with a registry or an engine stream, stream-zip
with a folder download, cryptography with a secret), and the Docker SDK with the warm-up
that follows the start: a start does not wait for them."""

import os
import secrets
import subprocess
import sys

SCRIPT = """
import asyncio, sys
from stackyard.app import create_app
from stackyard.settings import Settings

LAZY = ("aiohttp", "asyncssh", "boto3", "botocore", "cryptography", "docker", "httpx",
        "requests", "stream_zip", "joserfc", "authlib", "segno")
app = create_app(Settings())


def loaded():
    return sorted(name for name in LAZY if name in sys.modules)


async def main():
    async with app.router.lifespan_context(app):
        print(loaded())  # when the service begins to answer
        await app.state.warm_up
        app.state.destinations.all()  # none yet: nothing to load
        print(loaded())


asyncio.run(main())
"""


def test_a_start_loads_no_library_of_a_capability_before_it_is_used(tmp_path):
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
    at_start, after_warm_up = done.stdout.splitlines()[:2]
    assert at_start == "[]"
    assert after_warm_up == "['docker', 'requests']"  # the warm-up asked the engine
