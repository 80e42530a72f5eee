"""What a start of the service loads: only what answering needs. The libraries of one
capability load when it is first used (the SFTP and S3 clients with a destination of
their kind, aiohttp with an agent, httpx with a registry or an engine stream, stream-zip
with a folder download, cryptography with a secret), and the Docker SDK with the warm-up
that follows the start: a start does not wait for them."""

import os
import secrets
import subprocess
import sys

from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

import stackyard.root.start
from stackyard.app import create_app
from tests.support.service import ADMIN_PASSWORD, settings_in, sign_in, started

SCRIPT = """
import asyncio, sys
from stackyard.app import create_app
from stackyard.settings import Settings

LAZY = ("aiohttp", "asyncssh", "boto3", "botocore", "cryptography", "docker", "httpx",
        "requests", "stream_zip", "joserfc", "authlib", "segno", "dulwich")
app = create_app(Settings())


def loaded():
    return sorted(name for name in LAZY if name in sys.modules)


async def main():
    async with app.router.lifespan_context(app):
        print(loaded())  # when the service begins to answer
        await app.state.jobs.warm_up
        app.state.services.destinations.all()  # none yet: nothing to load
        print(loaded())


asyncio.run(main())
"""


def _env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STACKYARD_", "STACKS_"))}
    env.update(
        STACKYARD_DATA_DIR=str(tmp_path / "data"),
        STACKS_DIR=str(tmp_path / "stacks"),
        STACKYARD_SECRET_KEY=secrets.token_urlsafe(48),
        STACKYARD_ADMIN_PASSWORD=secrets.token_urlsafe(24),
        STACKYARD_UPDATE_CHECK_INTERVAL="0",
    )
    return env


def test_a_start_loads_no_library_of_a_capability_before_it_is_used(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    at_start, after_warm_up = done.stdout.splitlines()[:2]
    assert at_start == "[]"
    assert after_warm_up == "['docker', 'requests']"  # the warm-up asked the engine


ROUTERS_SCRIPT = """
import sys
from fastapi.testclient import TestClient
import stackyard.root.start
from stackyard.app import create_app
from stackyard.settings import Settings

OTHERS = ("agents", "audit", "destinations", "notifications", "registries", "schedules",
          "users")
stackyard.root.start.WARM_UP_DELAY = 0
app = create_app(Settings())


def loaded():
    return sorted(name for name in OTHERS if f"stackyard.api.{name}" in sys.modules)


async def warmed_up():
    await app.state.jobs.warm_up


with TestClient(app) as client:
    client.portal.call(warmed_up)
    print("stackyard.api.stacks" in sys.modules, loaded())
    client.get("/api/schedules")
    print(loaded())
"""


def test_a_router_the_first_page_does_not_ask_for_loads_when_first_asked(tmp_path):
    """The warm-up loads the first page's routers (the stacks'); another capability's
    router loads with the first request for one of its paths."""
    done = subprocess.run(
        [sys.executable, "-c", ROUTERS_SCRIPT],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[:2] == ["True []", "['schedules']"]


def test_the_first_page_finds_its_routes_built(tmp_path, monkeypatch):
    """FastAPI builds an included router's routes (their validators) when a request first
    reaches it, and a request reaches every router before the one that serves it. The
    warm-up after a start builds those of the UI's first page, so that none of its first
    requests builds one: sign-in, who is signed in, the dashboard, the system, the stacks.
    A router the first page does not use is put in and built when it is first used."""
    monkeypatch.setattr(stackyard.root.start, "WARM_UP_DELAY", 0)
    built: list[str] = []
    build = APIRoute.get_route_handler

    def counted(route: APIRoute):
        built.append(route.path)
        return build(route)

    monkeypatch.setattr(APIRoute, "get_route_handler", counted)
    settings = settings_in(tmp_path)
    with started(create_app(settings), settings) as client:  # (the warm-up awaited)
        built.clear()
        assert client.get("/api/auth/sign-in-options").status_code == 200
        sign_in(client, "admin", ADMIN_PASSWORD)
        for path in ("/api/auth/me", "/api/dashboard/fleet", "/api/system/info", "/api/stacks"):
            assert client.get(path).status_code == 200, path
        assert built == []
        assert client.get("/api/schedules").status_code == 200
        assert "/schedules" in built
        built.clear()  # a router put in later leaves those built before as they are
        assert client.get("/api/stacks").status_code == 200
        assert built == []


def test_a_request_that_comes_before_the_routes_waits_for_them(tmp_path, monkeypatch):
    """The routes go in with the warm-up, after the port is bound: the health check
    answers at once, and a request that comes before them waits for them rather than
    finding no route (a sign-in, then the stack list, with no warm-up yet)."""
    monkeypatch.setattr(stackyard.root.start, "WARM_UP_DELAY", 3600)
    app = create_app(settings_in(tmp_path))
    with TestClient(app) as client:
        assert client.get("/api/health").status_code == 200
        assert not app.state.jobs.warm_up.done()
        sign_in(client, "admin", ADMIN_PASSWORD)
        assert client.get("/api/stacks").json() == []
