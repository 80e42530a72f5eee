"""An agent that dials its central: enrolled once with a one-time token, then one
outbound WebSocket to the central's own port (`--connect URL`; through the proxy
`HTTPS_PROXY` or `HTTP_PROXY` names, with HTTP CONNECT), kept up.

Enrolling, the agent makes its own SSH key pair (the private half never leaves its data
folder) and sends the public half with the token; the central answers with the agent's
id, the token it will use on the agent's routes, and its own SSH key, which the agent
pins. Then the tunnel: over the WebSocket the agent is the SSH server (its key the host
key the central pinned; only the central's key may sign in) and lets the central open
channels to its own HTTP port on loopback, nothing else (`stackyard.agents.tunnels`).

A tunnel that ends is dialed again after a pause that doubles from `FIRST_PAUSE` up to
`MAX_PAUSE`, each drawn at random within half of it either way (a central restarted does
not get every agent in the same instant), and starts again from the first once a tunnel
has held for `STEADY`. A rotation (`rotate`) makes a new key, dials a second tunnel with
it, and once that one is up keeps the new key; the central ends the old tunnel once the
connections it carries are done (no request is cut)."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from stackyard.agents.wsbridge import Tunnel, WebSocketTransport
from stackyard.errors import AgentDenied, AgentUnreachable, Invalid
from stackyard.sshkeys import new_key_pair

if TYPE_CHECKING:
    import asyncssh

log = logging.getLogger(__name__)

FIRST_PAUSE = 0.5
MAX_PAUSE = 30.0
STEADY = 10.0
KEEPALIVE = 15
AGENT_HEADER = "X-Stackyard-Agent"
PORT_HEADER = "X-Stackyard-Agent-Port"
TUNNEL_PATH = "/api/agents/tunnel/connect"
ENROL_PATH = "/api/enrol"


@dataclass(frozen=True)
class Identity:
    """What enrolling gave: kept in the agent's data folder."""

    agent_id: int
    agent_token: str
    central_key: str


def _folder(data_dir: Path) -> Path:
    folder = data_dir / "tunnel"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def _write_private(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.new")
    temporary.unlink(missing_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(path)


def identity(data_dir: Path) -> Identity | None:
    path = _folder(data_dir) / "identity.json"
    if not path.exists():
        return None
    try:
        return Identity(**json.loads(path.read_text()))
    except (ValueError, TypeError) as exc:
        raise Invalid(f"{path} cannot be read: enrol the agent again") from exc


def enrol(data_dir: Path, url: str, token: str, timeout: float = 30.0) -> Identity:
    """Enrol with the central at `url` using the one-time `token` (blocking)."""
    folder = _folder(data_dir)
    private, public = new_key_pair("stackyard-agent")
    try:
        answer = httpx.post(
            url.rstrip("/") + ENROL_PATH,
            json={"token": token, "public_key": public},
            timeout=timeout,
        )
    except httpx.HTTPError as exc:
        raise AgentUnreachable(f"The central at {url} cannot be reached: {exc}") from exc
    if answer.status_code >= 400:
        try:
            detail = str(answer.json().get("detail"))
        except ValueError:
            detail = answer.text[:200]
        raise AgentDenied(f"The central refused the enrolment ({answer.status_code}): {detail}")
    found = answer.json()
    made = Identity(int(found["agent_id"]), str(found["agent_token"]), str(found["central_key"]))
    _write_private(folder / "agent_key", private)
    _write_private(folder / "identity.json", json.dumps(asdict(made)))
    return made


class Dialer:
    """The agent's tunnel to its central, kept up (`run`)."""

    def __init__(self, data_dir: Path, url: str, port: int) -> None:
        self.folder = _folder(data_dir)
        self.url = url.rstrip("/")
        self.port = port
        found = identity(data_dir)
        if found is None:
            raise Invalid("The agent is not enrolled: run it once with --enrol TOKEN")
        self.identity = found
        self.connected = asyncio.Event()
        self._conn: asyncssh.SSHServerConnection | None = None
        self._switching: asyncio.Future[None] | None = None

    @property
    def _key_path(self) -> Path:
        return self.folder / "agent_key"

    async def run(self) -> None:
        pause = FIRST_PAUSE
        while True:
            began = asyncio.get_running_loop().time()
            try:
                conn = self._conn
                if conn is None or conn.is_closed():
                    conn = self._conn = await self._open(self._key_path)
                    log.info("The tunnel to %s is up", self.url)
                self.connected.set()
                await conn.wait_closed()
                if self._conn is not conn:  # (a rotation's tunnel took over: hold it)
                    continue
            except Exception as exc:  # (the network, the central: dialed again)
                log.warning("The tunnel to %s failed: %s", self.url, _said(exc))
            self._conn = None
            self.connected.clear()
            if asyncio.get_running_loop().time() - began > STEADY:
                pause = FIRST_PAUSE
            await asyncio.sleep(pause * random.uniform(0.5, 1.5))
            pause = min(pause * 2, MAX_PAUSE)

    async def _open(self, key_path: Path) -> asyncssh.SSHServerConnection:
        import asyncssh
        from websockets.asyncio.client import connect

        headers = {AGENT_HEADER: str(self.identity.agent_id), PORT_HEADER: str(self.port)}
        socket = await connect(
            _ws_url(self.url) + TUNNEL_PATH,
            additional_headers=headers,
            max_size=None,
            compression=None,
            ping_interval=None,  # (SSH's keep-alives)
            open_timeout=15,
        )

        async def receive() -> bytes | None:
            try:
                message = await socket.recv()
            except Exception:  # (closed: the end of the stream)
                return None
            return message if isinstance(message, bytes) else message.encode()

        transport = WebSocketTransport(socket.send, receive, socket.close)
        port = self.port
        try:
            return await asyncssh.connect_reverse(
                "central",
                0,
                tunnel=Tunnel(transport),
                server_host_keys=[asyncssh.read_private_key(str(key_path))],
                authorized_client_keys=asyncssh.import_authorized_keys(
                    self.identity.central_key + "\n"
                ),
                server_factory=lambda: _server_class()(port),
                config=None,
                keepalive_interval=KEEPALIVE,
                keepalive_count_max=3,
                login_timeout=15,
            )
        except BaseException:
            transport.abort()
            raise

    async def rotate(self) -> str:
        """A new key: dialed with in a second tunnel, kept once that one is up (the old
        tunnel then ends); its public line, for the central to expect."""
        private, public = new_key_pair("stackyard-agent")
        pending = self.folder / "agent_key.new"
        _write_private(pending, private)
        asyncio.get_running_loop().call_soon(self._switch, pending)
        return public

    def _switch(self, pending: Path) -> None:
        async def switch() -> None:
            for _ in range(20):  # (the central saves the new key as this answer arrives)
                try:
                    conn = await self._open(pending)
                    break
                except Exception as exc:
                    log.info("The tunnel with the new key is not up yet: %s", _said(exc))
                    await asyncio.sleep(0.5)
            else:
                log.warning("The new key was not taken: the old one stays")
                return
            pending.replace(self._key_path)
            # The central ends the old tunnel once its connections are done; `run` then
            # holds this one.
            self._conn = conn

        self._switching = asyncio.ensure_future(switch())


@functools.cache
def _server_class() -> Any:
    import asyncssh

    class Server(asyncssh.SSHServer):
        """The agent's SSH server side: the central signs in with its key and may open
        channels to the agent's own HTTP port on loopback, nothing else."""

        def __init__(self, port: int) -> None:
            self.port = port

        def begin_auth(self, username: str) -> bool:
            return True

        def password_auth_supported(self) -> bool:
            return False

        def public_key_auth_supported(self) -> bool:
            return True

        def connection_requested(
            self, dest_host: str, dest_port: int, orig_host: str, orig_port: int
        ) -> bool:
            return dest_host in ("127.0.0.1", "localhost") and dest_port == self.port

        def server_requested(self, listen_host: str, listen_port: int) -> bool:
            return False

        def session_requested(self) -> bool:
            return False

    return Server


def _ws_url(url: str) -> str:
    if url.startswith("https://"):
        return "wss://" + url.removeprefix("https://")
    if url.startswith("http://"):
        return "ws://" + url.removeprefix("http://")
    raise Invalid("The central's URL must be http://... or https://...")


def _said(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


__all__ = ["Dialer", "Identity", "enrol", "identity"]
