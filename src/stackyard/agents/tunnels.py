"""The central's end of the tunnels of agents that dial in: an agent behind NAT opens one
WebSocket to the central's own port (`/api/agents/tunnel`, through any reverse proxy or
HTTP CONNECT proxy), and SSH runs over it with the roles turned round: the central is the
SSH client and opens a channel to the agent's own HTTP port on loopback for each
connection it makes to the agent. SSH gives each channel its own flow-control window (a
100 MiB download never stalls a shell beside it), keep-alives (`KEEPALIVE` seconds, three
missed end it), and both ends' keys: the agent presents the key pinned when it enrolled
(or the new one of a rotation), the central its own (`central_key`, which the agent
pinned).

Each tunnel agent has a loopback endpoint on the central (`endpoint`), which its client
talks to as to a direct agent: every capability works the same. A connection made there
rides the agent's live tunnel; when there is none it is closed at once (the client says
the agent is unreachable). A tunnel replaced by a newer one of the same agent (a
reconnect, a key rotation) takes no new connection and is closed once its own are done
(`RETIRE_AFTER` at most).

At most `HANDSHAKES` SSH handshakes are in progress at once; a tunnel beyond them waits
for a slot, its WebSocket open and the agent waiting for the central to speak first
(`stackyard.agents.dialer`), and its handshake's time limit starts with its slot. A
central restarted under a fleet has every agent dialing in the same second: all their
handshakes at once each took as long as all of them together, past their time limit, and
the agents dialed again into the same crowd (2,000 agents never all connected). A slot at
a time, each takes only its own time and the herd is in within what the handshakes cost.
`HANDSHAKES` still covers a far agent's round trips (the handshake's few exchanges).

The central's keep-alives (`KEEPALIVE`) wait longer than the agent's: the agent's ask, and
any other bytes, reset the central's timer, so on a quiet tunnel the central only answers
(one exchange every `dialer.KEEPALIVE` seconds, not two), and it still ends a tunnel that
has been silent for `KEEPALIVE * (KEEPALIVE_COUNT + 1)` seconds."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from stackyard.agents.wsbridge import PACKET, SSH_OPTIONS, WINDOW, Tunnel, WebSocketTransport
from stackyard.clock import utcnow
from stackyard.sshkeys import new_key_pair

if TYPE_CHECKING:
    import asyncssh

log = logging.getLogger(__name__)

KEEPALIVE = 20
KEEPALIVE_COUNT = 2
RETIRE_AFTER = 600.0
LOGIN_TIMEOUT = 15
HANDSHAKES = 64
CHUNK = 256 * 1024
TunnelState = Literal["connected", "reconnecting", "never"]


@dataclass
class _Live:
    conn: asyncssh.SSHClientConnection
    agent_port: int
    since: datetime
    key: str  # the key the agent presented
    channels: int = 0
    retired: bool = False
    #: The connections it carries (ended with it).
    carried: set[asyncio.Task[None]] = field(default_factory=set)

    def end(self) -> None:
        """Closed at once, and every connection it carries with it."""
        self.conn.abort()
        for task in self.carried:
            task.cancel()


@dataclass
class _Agent:
    listener: asyncio.Server | None = None
    live: _Live | None = None
    down_since: datetime | None = None
    connected_before: bool = False
    watchers: list[asyncio.Future[None]] = field(default_factory=list)


class Tunnels:
    def __init__(self, folder: Path) -> None:
        """`folder`: where the central's own key is kept (made on first use)."""
        self.folder = folder
        self._agents: dict[int, _Agent] = {}
        self._key: asyncssh.SSHKey | None = None
        self._key_lock = threading.Lock()
        self._handshakes = asyncio.Semaphore(HANDSHAKES)
        #: Told the id of each agent whose tunnel came up (its endpoint ready).
        self.came_up: list[Callable[[int], None]] = []

    # -- the central's key --------------------------------------------------------------
    def central_key(self) -> asyncssh.SSHKey:
        import asyncssh

        with self._key_lock:  # (two first enrolments at once make one key)
            if self._key is None:
                path = self.folder / "central_key"
                if not path.exists():
                    self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                    private, _ = new_key_pair("stackyard-central")
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(fd, "w") as out:
                        out.write(private)
                self._key = asyncssh.read_private_key(str(path))
            return self._key

    def central_public_key(self) -> str:
        return self.central_key().export_public_key("openssh").decode().strip()

    # -- serving a tunnel ----------------------------------------------------------------
    async def serve(
        self,
        agent_id: int,
        keys: list[str],
        agent_port: int,
        transport: WebSocketTransport,
        presented: Callable[[str], None],
    ) -> None:
        """Run the agent's tunnel over `transport` until it ends: SSH with the agent
        presenting one of `keys` (when there are two, a rotation's, told to `presented`
        once it has: the new key becomes the agent's). Raises what asyncssh raises when
        the handshake fails."""
        import asyncssh

        trusted = [asyncssh.import_public_key(k) for k in keys]
        async with self._handshakes:
            conn = await asyncssh.connect(
                f"agent-{agent_id}",
                0,
                tunnel=Tunnel(transport),
                known_hosts=(trusted, [], []),
                client_keys=[self.central_key()],
                username="stackyard",
                config=None,
                agent_path=None,
                keepalive_interval=KEEPALIVE,
                keepalive_count_max=KEEPALIVE_COUNT,
                login_timeout=LOGIN_TIMEOUT,
                **SSH_OPTIONS,
            )
        shown = conn.get_server_host_key()
        key = shown.export_public_key("openssh").decode().strip() if shown else ""
        if len(keys) > 1:  # (a rotation under way: the key it came with decides)
            try:
                await asyncio.to_thread(presented, key)
            except BaseException:
                conn.abort()
                raise
        live = _Live(conn, agent_port, utcnow(), key)
        agent = self._agents.setdefault(agent_id, _Agent())
        await self._listen(agent_id, agent)
        previous, agent.live = agent.live, live
        agent.down_since, agent.connected_before = None, True
        if previous is not None:
            self._retire(previous)
        for watcher in agent.watchers:
            if not watcher.done():
                watcher.set_result(None)
        for listener in self.came_up:
            listener(agent_id)
        log.info("Agent %s connected its tunnel", agent_id)
        try:
            await conn.wait_closed()
        finally:
            live.end()
            if agent.live is live:
                agent.live, agent.down_since = None, utcnow()
                log.info("Agent %s's tunnel ended", agent_id)

    def _retire(self, live: _Live) -> None:
        live.retired = True
        if live.channels == 0:
            live.conn.close()
            return
        asyncio.get_running_loop().call_later(RETIRE_AFTER, live.conn.close)

    # -- the endpoint ------------------------------------------------------------------
    async def _listen(self, agent_id: int, agent: _Agent) -> None:
        if agent.listener is None:
            agent.listener = await asyncio.start_server(
                lambda r, w: self._carry(agent_id, r, w), "127.0.0.1", 0
            )

    def endpoint(self, agent_id: int) -> str | None:
        """The agent's loopback URL on the central, while its tunnel is up."""
        agent = self._agents.get(agent_id)
        if agent is None or agent.live is None or agent.listener is None:
            return None
        port = agent.listener.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def state(self, agent_id: int) -> tuple[TunnelState, datetime | None]:
        """Connected (since when), reconnecting (down since when), or never connected
        since this central started."""
        agent = self._agents.get(agent_id)
        if agent is None or not agent.connected_before:
            return "never", None
        if agent.live is not None:
            return "connected", agent.live.since
        return "reconnecting", agent.down_since

    async def connected(self, agent_id: int, timeout: float) -> bool:
        """Whether the agent's tunnel is up within `timeout` seconds."""
        if self.endpoint(agent_id) is not None:
            return True
        waiter = asyncio.get_running_loop().create_future()
        self._agents.setdefault(agent_id, _Agent()).watchers.append(waiter)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waiter, timeout)
        return self.endpoint(agent_id) is not None

    async def _carry(
        self, agent_id: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """A connection to the endpoint, carried over the tunnel's own channel."""
        agent = self._agents.get(agent_id)
        live = agent.live if agent is not None else None
        if live is None:
            writer.close()
            return
        live.channels += 1
        task = asyncio.current_task()
        if task is not None:
            live.carried.add(task)
        ended = False
        try:
            remote_reader, remote_writer = await live.conn.open_connection(
                "127.0.0.1", live.agent_port, window=WINDOW, max_pktsize=PACKET
            )
            up = asyncio.ensure_future(_pipe(reader, remote_writer))
            try:
                # The answer's end (or the tunnel's) ends the connection; the request's
                # end only says so to the agent (a client may half-close).
                await _pipe(remote_reader, writer)
                ended = True
            finally:
                up.cancel()
                remote_writer.close()
        except Exception as exc:  # (the tunnel went in between: the client says so)
            log.debug("A connection over agent %s's tunnel failed: %s", agent_id, exc)
        except asyncio.CancelledError:
            # Cut with its tunnel (`_Live.end`: revoked, or the central stopping): ended
            # here, not raised, for asyncio's stream server (3.11) asks the task for its
            # exception when it is done, and a cancelled one logged an error each time.
            pass
        finally:
            if task is not None:
                live.carried.discard(task)
            if ended:
                writer.close()
            else:  # (cut: the client learns it at once, not after its read time-out)
                writer.transport.abort()
            live.channels -= 1
            if live.retired and live.channels == 0:
                live.conn.close()

    # -- ending ------------------------------------------------------------------------
    async def drop(self, agent_id: int) -> None:
        """The agent's tunnel closed and its endpoint gone (the agent was revoked)."""
        agent = self._agents.pop(agent_id, None)
        if agent is None:
            return
        if agent.listener is not None:
            agent.listener.close()
        if agent.live is not None:
            agent.live.end()
        for watcher in agent.watchers:
            if not watcher.done():
                watcher.cancel()

    async def aclose(self) -> None:
        for agent_id in list(self._agents):
            await self.drop(agent_id)


async def _pipe(reader: asyncio.StreamReader | asyncssh.SSHReader[bytes], writer: object) -> None:
    """Bytes from `reader` to `writer` until the end, then the writer's end written."""
    try:
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)  # type: ignore[attr-defined]
            await writer.drain()  # type: ignore[attr-defined]
    finally:
        with contextlib.suppress(Exception):
            if writer.can_write_eof():  # type: ignore[attr-defined]
                writer.write_eof()  # type: ignore[attr-defined]
