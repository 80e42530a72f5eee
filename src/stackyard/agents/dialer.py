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
connections it carries are done (no request is cut).

The central speaks first on a new tunnel, and only when it has room for the handshake: a
central restarted has every agent dialing at once and takes their SSH handshakes a few at
a time (`stackyard.agents.tunnels.HANDSHAKES`). The agent waits for its turn, as long as
the central answers its pings (`PING_EVERY`), up to `TURN_WITHIN`; its SSH server starts
then, and the handshake's own time limit (`LOGIN_TIMEOUT`) with it. (Timed from the dial,
handshakes queued behind two thousand others timed out, were dialed again, and queued
again: the herd never settled.)

Keep-alives: the agent asks every `KEEPALIVE` seconds of quiet and redials after three
unanswered; the central waits longer before it asks itself, so on a quiet tunnel only the
agent's ask and the central's answer cross (`stackyard.agents.tunnels.KEEPALIVE`)."""

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

from stackyard.agents.wsbridge import PACKET, SSH_OPTIONS, WINDOW, Tunnel, WebSocketTransport
from stackyard.errors import AgentDenied, AgentUnreachable, Invalid
from stackyard.sshkeys import new_key_pair

if TYPE_CHECKING:
    import asyncssh

log = logging.getLogger(__name__)

FIRST_PAUSE = 0.5
MAX_PAUSE = 30.0
STEADY = 10.0
KEEPALIVE = 15
#: Seconds the WebSocket may take to open, and the SSH handshake once it is the agent's turn.
OPEN_TIMEOUT = 30
LOGIN_TIMEOUT = 15
#: The longest wait for the central's turn, and how often it must answer a ping meanwhile.
TURN_WITHIN = 300
PING_EVERY = 10
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

    def cipher(self) -> str | None:
        """The cipher the tunnel up now runs with (as SSH negotiated it)."""
        conn = self._conn
        return None if conn is None else str(conn.get_extra_info("send_cipher"))

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
                    log.info("The tunnel to %s is up (%s)", self.url, self.cipher())
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
            open_timeout=OPEN_TIMEOUT,
        )
        try:
            first: bytes | None = await _turn(socket)
        except BaseException:
            await socket.close()
            raise

        async def receive() -> bytes | None:
            nonlocal first
            if first is not None:
                said, first = first, None
                return said
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
                login_timeout=LOGIN_TIMEOUT,
                **SSH_OPTIONS,
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
            self.conn: asyncssh.SSHServerConnection | None = None

        def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
            self.conn = conn

        def begin_auth(self, username: str) -> bool:
            return True

        def password_auth_supported(self) -> bool:
            return False

        def public_key_auth_supported(self) -> bool:
            return True

        def connection_requested(
            self, dest_host: str, dest_port: int, orig_host: str, orig_port: int
        ) -> Any:
            if dest_host not in ("127.0.0.1", "localhost") or dest_port != self.port:
                return False
            assert self.conn is not None
            # The channel made here, not by asyncssh, which takes its default window and
            # 32 KiB packets for a forwarded connection whatever the options say.
            channel = self.conn.create_tcp_channel(window=WINDOW, max_pktsize=PACKET)
            return channel, self.conn.forward_connection(dest_host, dest_port)

        def server_requested(self, listen_host: str, listen_port: int) -> bool:
            return False

        def session_requested(self) -> bool:
            return False

    return Server


async def _turn(socket: Any) -> bytes:
    """The central's first bytes (its SSH version line): its turn to handshake with this
    agent. Waited for as long as the central answers pings, up to `TURN_WITHIN`."""
    async with asyncio.timeout(TURN_WITHIN):
        while True:
            try:
                message = await asyncio.wait_for(socket.recv(), PING_EVERY)
            except TimeoutError:  # (queued: the central must still be there)
                await asyncio.wait_for(await socket.ping(), PING_EVERY)
                continue
            return message if isinstance(message, bytes) else message.encode()


def _ws_url(url: str) -> str:
    if url.startswith("https://"):
        return "wss://" + url.removeprefix("https://")
    if url.startswith("http://"):
        return "ws://" + url.removeprefix("http://")
    raise Invalid("The central's URL must be http://... or https://...")


def _said(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


__all__ = ["Dialer", "Identity", "enrol", "identity"]
