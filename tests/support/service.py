"""The service under test: in-process (TestClient) and as a real `stackyard serve`."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import stackyard.root.start
from stackyard.app import create_app
from stackyard.settings import Settings
from tests.support.processes import free_port, stop_process
from tests.support.stacks import HELPER
from tests.support.waiting import PATIENCE

ADMIN_PASSWORD = "admin-password-for-tests"
USER_PASSWORD = "user-password-for-tests"
REPO_ROOT = Path(__file__).resolve().parents[2]
STACKYARD_BIN = Path(sys.executable).parent / "stackyard"
DROP_DAC = ("setpriv", "--bounding-set=-dac_override,-dac_read_search", "--")
#: Seconds a test's HTTP client gives a real server (or a test's CLI command) to answer
#: one request. httpx's own limit is 5 s, which a sign-in overran on a machine at load 30
#: on two cores. Bounded all the same, within pytest's 300 s, so that a server that hangs
#: fails the test at the request that hung.
ANSWER_WITHIN = 120.0


def sign_in(client: httpx.Client | TestClient, username: str, password: str) -> None:
    """Sign in with the session cookie and send its CSRF token on every request."""
    response = client.post("/api/auth/login", json={"username": username, "password": password})
    assert response.status_code == 200, response.text
    client.headers["X-CSRF-Token"] = client.cookies["stackyard_csrf"]


def sqlite_url(folder: Path) -> str:
    """The embedded database of a service working in `folder` (in its data folder)."""
    return f"sqlite:///{folder / 'data' / 'stackyard.db'}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path: Path) -> str:
    """Each database-backed test runs on the embedded default and on PostgreSQL."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path)
    return request.getfixturevalue("postgres_database")


@pytest.fixture
def embedded_database_url(tmp_path: Path) -> str:
    """The embedded default alone. A folder whose tests are about Docker, files or compose
    rather than the database makes this its `database_url` (in its conftest:
    `database_url = embedded_database_url`); the database layer is tested on both in
    tests/api and tests/db."""
    return sqlite_url(tmp_path)


@pytest.fixture
def stacks_dir(tmp_path: Path) -> Path:
    path = tmp_path / "stacks"
    path.mkdir()
    return path


def settings_in(folder: Path, **changes: Any) -> Settings:
    """Settings of a service working in `folder` (its data and stacks folders there)."""
    values: dict[str, Any] = {
        "data_dir": folder / "data",
        "stacks_dir": folder / "stacks",
        "secret_key": secrets.token_urlsafe(48),
        "admin_password": ADMIN_PASSWORD,
        "backup_helper_image": HELPER,
        "update_check_interval": 0,  # tests ask for checks; nothing reaches out on its own
        "test_cheap_password_hashes": True,
    }
    return Settings(**(values | changes))


@pytest.fixture
def settings(tmp_path: Path, stacks_dir: Path, database_url: str) -> Settings:
    return settings_in(tmp_path, database_url=database_url)


@pytest.fixture(scope="session")
def central_app(tmp_path_factory) -> Iterator[FastAPI]:
    """The central app, its routes and their validators built once per worker (about two
    seconds); each test starts it anew on settings of its own (`started`), its warm-up at
    once (no client is there to answer first)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stackyard.root.start, "WARM_UP_DELAY", 0)
        yield create_app(settings_in(tmp_path_factory.mktemp("central")))


@contextmanager
def started(app: FastAPI, settings: Settings, **client: Any) -> Iterator[TestClient]:
    """`app` started on `settings` (a new data folder: schema, first admin, the warm-up
    that follows in a thread, each awaited, so that what a test makes after this is new to
    the service), stopped at the end. `client`: TestClient's arguments."""
    settings.check_safe(app.state.mode)
    app.state.settings = settings

    async def warmed_up() -> None:
        await app.state.jobs.first_admin
        await app.state.jobs.warm_up

    with TestClient(app, **client) as running:
        running.portal.call(warmed_up)
        app.state.test_portal = running.portal
        yield running


@pytest.fixture
def app(central_app: FastAPI, settings: Settings) -> Iterator[FastAPI]:
    """The central app started on this test's settings."""
    with started(central_app, settings):
        yield central_app


def new_client(app: FastAPI) -> TestClient:
    """A client with its own cookies on the app's one event loop (as in a real server,
    work an action starts in the background outlives the request)."""
    client = TestClient(app, raise_server_exceptions=False)
    client.portal = app.state.test_portal
    return client


@pytest.fixture
def client(app: FastAPI) -> TestClient:
    """Not signed in."""
    return new_client(app)


@pytest.fixture
def admin_client(app: FastAPI) -> TestClient:
    client = new_client(app)
    sign_in(client, "admin", ADMIN_PASSWORD)
    return client


def client_with_role(app: FastAPI, admin_client: TestClient, username: str, role: str):
    """A new account with `role`, signed in on a client of its own."""
    created = admin_client.post(
        "/api/users", json={"username": username, "password": USER_PASSWORD, "role": role}
    )
    assert created.status_code == 201, created.text
    client = new_client(app)
    sign_in(client, username, USER_PASSWORD)
    return client


@pytest.fixture
def user_client(app: FastAPI, admin_client: TestClient) -> TestClient:
    """A signed-in `operator` (runs actions, edits nothing)."""
    return client_with_role(app, admin_client, "alice", "operator")


@pytest.fixture
def viewer_client(app: FastAPI, admin_client: TestClient) -> TestClient:
    """A signed-in `viewer` (reads only)."""
    return client_with_role(app, admin_client, "victor", "viewer")


@dataclass
class ServerProcess:
    """A real `stackyard serve` (or `agent`) subprocess on a free loopback port."""

    url: str
    process: subprocess.Popen
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        stop_process(self.process)


def service_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STACKYARD_", "STACKS_"))}
    env.update(
        STACKYARD_DATA_DIR=str(tmp_path / "data"),
        STACKS_DIR=str(tmp_path / "stacks"),
        STACKYARD_ADMIN_PASSWORD=ADMIN_PASSWORD,
        STACKYARD_SECRET_KEY=secrets.token_urlsafe(48),
        BACKUP_HELPER_IMAGE=HELPER,
        STACKYARD_UPDATE_CHECK_INTERVAL="0",
        STACKYARD_TEST_CHEAP_PASSWORD_HASHES="true",
    )
    env.pop("DATABASE_URL", None)
    env.update(extra)
    return env


#: For a health check that answers from the start: a path served once the routes are in
#: too (they go in right after, stackyard.api.routes: a request meanwhile waits for them).
_ROUTED = {"/api/health": "/api/auth/sign-in-options"}


def _routed(server: ServerProcess, wait_path: str, timeout: float) -> bool:
    routed = _ROUTED.get(wait_path)
    if routed is None:
        return True
    return httpx.get(server.url + routed, timeout=timeout, verify=False).status_code == 200


def start_server(
    tmp_path: Path,
    *args: str,
    env: dict[str, str] | None = None,
    wait_path: str = "/api/health",
    headers: dict[str, str] | None = None,
    timeout: float = PATIENCE,
    honour_permissions: bool = False,
    scheme: str = "http",
    port: int | None = None,
    host: str = "127.0.0.1",
) -> ServerProcess:
    """Start `stackyard serve` (or ARGS) and wait until it answers (on `host`). With
    honour_permissions, the service (still root) runs without the capabilities that let
    root ignore file permissions, as a service running as an ordinary user would."""
    port = port or free_port()
    env = env if env is not None else service_env(tmp_path)
    log_path = tmp_path / f"server-{port}.log"
    command = [
        *(DROP_DAC if honour_permissions else ()),
        str(STACKYARD_BIN),
        *(args or ("serve",)),
        "--host",
        host,
        "--port",
        str(port),
    ]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            env=env,
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    server = ServerProcess(f"{scheme}://{host}:{port}", process, log_path, env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{server.log()}")
        try:
            # The whole time left for one answer: a loaded machine takes seconds to answer
            # a first request, and one given up on is only asked again. (Refused at once
            # while the server does not listen yet.)
            left = max(1.0, deadline - time.monotonic())
            answer = httpx.get(server.url + wait_path, headers=headers, timeout=left, verify=False)
            if answer.status_code == 200 and _routed(server, wait_path, left):
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"server did not answer within {timeout}s:\n{server.log()}")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A real `stackyard serve` subprocess, SQLite in a temporary data folder."""
    (tmp_path / "stacks").mkdir(exist_ok=True)
    process = start_server(tmp_path)
    yield process
    process.stop()


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory) -> Iterator[ServerProcess]:
    """A real `stackyard serve` shared by the tests of a module (each names what it makes
    uniquely): a start costs seconds of CPU, which a loaded machine does not have."""
    tmp_path = tmp_path_factory.mktemp("server")
    (tmp_path / "stacks").mkdir()
    process = start_server(tmp_path)
    yield process
    process.stop()


@pytest.fixture(scope="session")
def live_server(tmp_path_factory) -> Iterator[ServerProcess]:
    """One real server shared by the browser tests of a session."""
    tmp_path = tmp_path_factory.mktemp("live")
    (tmp_path / "stacks").mkdir()
    process = start_server(tmp_path)
    yield process
    process.stop()


@pytest.fixture
def postgres_database(postgres_url: str) -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    name = f"t_{secrets.token_hex(6)}"
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()
