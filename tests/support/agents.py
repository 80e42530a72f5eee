"""Real `stackyard agent` processes on loopback, each on a Docker engine of its own.

def test_x(agent_processes, docker_engines):
    engine, = docker_engines(1)
    agent = agent_processes(engine)          # HTTPS with its own certificate
    agent.url, agent.token, agent.fingerprint
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.engines import Engine
from tests.support.service import ServerProcess, service_env, start_server

_FINGERPRINT = re.compile(r"fingerprint \(SHA-256\): ([0-9A-F:]+)")


@dataclass
class AgentProcess:
    server: ServerProcess
    token: str
    folder: Path
    engine: Engine | None

    @property
    def url(self) -> str:
        return self.server.url

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
        (the central still has the old one)."""
        self.stop()
        if new_certificate:
            for name in ("agent-tls.crt", "agent-tls.key"):
                (self.folder / "data" / name).unlink()
        if new_token:
            self.token = secrets.token_urlsafe(32)
            self.server.env["STACKYARD_AGENT_TOKEN"] = self.token
        self.server = _serve(
            self.folder,
            self.server.env,
            self.token,
            self.url.split(":")[0],
            int(self.url.rsplit(":", 1)[1]),
        )


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
