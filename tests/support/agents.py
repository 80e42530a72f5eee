"""Real `stackyard agent` processes on loopback, each on a Docker engine of its own.

def test_x(agent_processes, docker_engines):
    engine, = docker_engines(1)
    agent = agent_processes(engine)          # HTTPS with its own certificate
    agent.url, agent.token, agent.fingerprint

Agents are of two kinds: direct (the central connects to the agent's URL with its token)
and tunnel (the agent dials the central and is reached through its tunnel). A test that
starts agents (`agent_processes`, `shared_agents`) runs once with each kind (its id says
`[direct]` or `[tunnel]`), unless it is marked `direct_only("why")`: it is about the
direct kind itself, or its path through a tunnel is another test's. The test is written
once: `tests.agents.helpers.add_agent` adds the agent to the central as a direct agent,
or makes it a tunnel agent there and starts the agent process again as one that dials in
(`AgentProcess.dial`), and the rest of the test goes through the central alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.support.engines import Engine
from tests.support.service import STACKYARD_BIN, ServerProcess, service_env, start_server
from tests.support.waiting import PATIENCE, wait_until

AgentKind = Literal["direct", "tunnel"]

_FINGERPRINT = re.compile(r"fingerprint \(SHA-256\): ([0-9A-F:]+)")


@dataclass
class AgentProcess:
    server: ServerProcess
    token: str
    folder: Path
    engine: Engine | None
    #: The central it dials (a tunnel agent), or None (a direct agent).
    central: str | None = None
    #: Its URL and token as a direct agent (a tunnel agent's are on loopback, and the
    #: token its central gave it).
    direct_url: str = ""
    direct_token: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        self.direct_url = self.direct_url or self.server.url
        self.direct_token = self.direct_token or self.token

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def fingerprint(self) -> str | None:
        found = _FINGERPRINT.search(self.server.log())
        return found[1] if found else None

    @property
    def stacks_dir(self) -> Path:
        return self.folder / "stacks"

    def get(self, path: str, **kwargs) -> httpx.Response:
        """Straight from the agent, with its token."""
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.get(f"{self.url}/agent{path}", headers=headers, verify=False, **kwargs)

    def stop(self) -> None:
        self.server.stop()

    def restart(self, new_certificate: bool = False, new_token: bool = False) -> None:
        """Stop and start again on the same port; with `new_certificate`, the agent
        makes a new one (as after a reinstall); with `new_token`, its token is changed
        (the central still has the old one). A tunnel agent dials its central again
        (enrolled already) and is back once its tunnel is."""
        self.stop()
        if self.central is not None:
            assert not (new_certificate or new_token), "a direct agent's change"
            self.server = _dial(self.folder, self.server.env, self.central, self.port)
            return
        if new_certificate:
            for name in ("agent-tls.crt", "agent-tls.key"):
                (self.folder / "data" / name).unlink()
        if new_token:
            self.token = self.direct_token = secrets.token_urlsafe(32)
            self.server.env["STACKYARD_AGENT_TOKEN"] = self.token
        self.server = _serve(
            self.folder, self.server.env, self.token, self.url.split(":")[0], self.port
        )

    def dial(self, central: str, enrol: str) -> None:
        """Started again (the same folder, engine, port and environment) as an agent
        that dials `central`, enrolled anew with the one-time token `enrol`
        (`stackyard agent --connect CENTRAL --enrol TOKEN`): plain HTTP on loopback, with
        the token the central gave it."""
        self.stop()
        shutil.rmtree(self.folder / "data" / "tunnel", ignore_errors=True)
        self.central = central
        self.server = _dial(self.folder, self.server.env, central, self.port, enrol)
        self.token = _enrolled_token(self.folder)

    def direct(self) -> None:
        """Started again as the direct agent it was (its certificate and token)."""
        if self.central is None:
            return
        self.stop()
        self.central, self.token = None, self.direct_token
        scheme = self.direct_url.split(":")[0]
        self.server = _serve(self.folder, self.server.env, self.token, scheme, self.port)


def start_agent(
    folder: Path, engine: Engine | None = None, tls: bool = True, **extra: str
) -> AgentProcess:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stacks").mkdir(exist_ok=True)
    token = secrets.token_urlsafe(32)
    env = service_env(
        folder,
        STACKYARD_AGENT_TOKEN=token,
        STACKYARD_AGENT_TLS="true" if tls else "false",
        STACKYARD_HOST_NAME=folder.name,
        **extra,
    )
    if engine is not None:
        env["DOCKER_HOST"] = engine.docker_host
    return AgentProcess(
        _serve(folder, env, token, "https" if tls else "http"), token, folder, engine
    )


def _serve(
    folder: Path, env: dict[str, str], token: str, scheme: str, port: int | None = None
) -> ServerProcess:
    return start_server(
        folder,
        "agent",
        env=env,
        wait_path="/agent/health",
        headers={"Authorization": f"Bearer {token}"},
        scheme=scheme,
        port=port,
    )


def _enrolled_token(folder: Path) -> str:
    """The agent token the central gave a tunnel agent when it enrolled."""
    identity = json.loads((folder / "data" / "tunnel" / "identity.json").read_text())
    return str(identity["agent_token"])


#: What a tunnel agent logs each time its tunnel is up (stackyard.agents.dialer).
_TUNNEL_UP = re.compile(r"The tunnel to \S+ is up")


def _dial(
    folder: Path, env: dict[str, str], central: str, port: int, enrol: str | None = None
) -> ServerProcess:
    """`stackyard agent --connect CENTRAL [--enrol TOKEN] --port PORT`, once it answers
    on loopback and its tunnel is up (a log of its own, new at each start)."""
    command = [str(STACKYARD_BIN), "agent", "--connect", central, "--port", str(port)]
    if enrol is not None:
        command += ["--enrol", enrol]
    log_path = folder / f"tunnel-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            env=env,
            cwd=folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    server = ServerProcess(f"http://127.0.0.1:{port}", process, log_path, env)

    def up() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"the agent exited with {process.returncode}:\n{server.log()}")
        if not _TUNNEL_UP.search(server.log()):
            return False
        headers = {"Authorization": f"Bearer {_enrolled_token(folder)}"}
        with contextlib.suppress(httpx.TransportError):
            return httpx.get(f"{server.url}/agent/health", headers=headers).status_code == 200
        return False

    try:
        wait_until(up, PATIENCE, "the agent dialing in")
    except BaseException:
        server.stop()
        raise
    return server


class _Listening:
    """An app under test (started by a TestClient, on its event loop) also on a real
    loopback port, for agents to dial: uvicorn on that loop, without the app's lifespan
    (the TestClient's is the one)."""

    def __init__(self, client: TestClient) -> None:
        import uvicorn

        portal = client.portal
        assert portal is not None, "the app is not started"
        self.portal = portal
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        config = uvicorn.Config(
            client.app, lifespan="off", log_config=None, timeout_graceful_shutdown=1
        )
        self.server = uvicorn.Server(config)
        self.task: asyncio.Task[None] | None = None

        async def start() -> None:
            # A task of the loop's own, not of the portal's: the portal's end does not
            # wait for it (the loop's end cancels it, when the app stopped first).
            self.task = asyncio.get_running_loop().create_task(
                self.server.serve(sockets=[self.socket])
            )
            while not self.server.started:
                if self.task.done():
                    self.task.result()
                await asyncio.sleep(0.01)

        portal.call(start)

    def close(self) -> None:
        async def stop() -> None:
            self.server.should_exit = True
            if self.task is not None:
                await self.task

        with contextlib.suppress(RuntimeError):  # (the loop ended with the app)
            self.portal.call(stop)
        self.socket.close()


class Kind:
    """The kind of agents of the running test, and the central's address it gives the
    tunnel agents."""

    def __init__(self, name: AgentKind) -> None:
        self.name = name
        self._listening: dict[int, _Listening] = {}

    def central_url(self, client: httpx.Client) -> str:
        """Where an agent dials the central `client` talks to."""
        if not isinstance(client, TestClient):
            return str(client.base_url).rstrip("/")
        app = client.app
        if id(app) not in self._listening:
            self._listening[id(app)] = _Listening(client)
        return self._listening[id(app)].url

    def close(self) -> None:
        for listening in self._listening.values():
            listening.close()
        self._listening.clear()


#: The running test's (`agent_kind`); direct outside a test that starts agents.
_kind = Kind("direct")


def current_kind() -> Kind:
    return _kind


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that starts agents runs with each kind, unless it is `direct_only` or
    parametrizes `agent_kind` itself (a kind expected to fail, say: `pytest.param(
    "tunnel", marks=pytest.mark.xfail(strict=True, reason=...))`, indirect)."""
    if not {"agent_processes", "shared_agents"} & set(metafunc.fixturenames):
        return
    for marker in metafunc.definition.iter_markers("parametrize"):
        if "agent_kind" in marker.args[0]:  # (the test names its kinds itself)
            return
    if metafunc.definition.get_closest_marker("direct_only") is None:
        metafunc.parametrize("agent_kind", ["direct", "tunnel"], indirect=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """In each module, the tunnel copies after the rest (the order otherwise kept): the
    module's shared agents are made tunnel agents once, not back and forth."""
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(item.nodeid.split("::")[0], index)

    def tunnel(item: pytest.Item) -> bool:
        callspec = getattr(item, "callspec", None)
        return callspec is not None and callspec.params.get("agent_kind") == "tunnel"

    order = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda i: (first[i.nodeid.split("::")[0]], tunnel(i), order[id(i)]))


@pytest.fixture(autouse=True)
def agent_kind(request: pytest.FixtureRequest) -> Iterator[AgentKind]:
    """The kind of this test's agents (see the module's docstring)."""
    global _kind
    _kind = Kind(getattr(request, "param", "direct"))
    try:
        yield _kind.name
    finally:
        _kind.close()
        _kind = Kind("direct")


@contextlib.contextmanager
def _agents(folder: Path) -> Iterator[Callable[..., AgentProcess]]:
    """A starter of agents in `folder`, each stopped when the context ends."""
    started: list[AgentProcess] = []

    def start(
        engine: Engine | None = None, tls: bool = True, name: str | None = None, **extra: str
    ) -> AgentProcess:
        agent = start_agent(folder / (name or f"agent{len(started) + 1}"), engine, tls, **extra)
        started.append(agent)
        return agent

    try:
        yield start
    finally:
        for agent in started:
            agent.stop()


@pytest.fixture
def agent_processes(tmp_path: Path) -> Iterator[Callable[..., AgentProcess]]:
    """agent_processes(engine=None, tls=True, name=..., **env) -> a new agent, stopped at
    the end of the test: for a test that stops, restarts or misconfigures its agents."""
    with _agents(tmp_path) as start:
        yield start


@pytest.fixture(scope="module")
def shared_agents(tmp_path_factory) -> Iterator[Callable[..., AgentProcess]]:
    """shared_agents(engine=None, tls=True, name=..., **env) -> the module's agent of that
    name, started by the first test that asks (the same arguments each time) and stopped
    after the module: each test names what it makes on it uniquely."""
    agents: dict[str, tuple[tuple[object, ...], AgentProcess]] = {}
    with _agents(tmp_path_factory.mktemp("agents")) as start:

        def shared(
            engine: Engine | None = None, tls: bool = True, name: str = "agent", **extra: str
        ) -> AgentProcess:
            asked = (engine, tls, sorted(extra.items()))
            if name not in agents:
                agents[name] = (asked, start(engine, tls, name, **extra))
            made_with, agent = agents[name]
            assert made_with == asked, f"the shared agent {name} was started otherwise"
            return agent

        yield shared
