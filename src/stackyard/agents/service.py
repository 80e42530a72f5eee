"""The agents a central keeps: records (the token sealed, the certificate pinned), tests,
and one client per agent, made once and reused (its connections with it). The API serves
`AgentView` and `Probe` as they are (the schema's descriptions are on their fields)."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import secrets
import ssl
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, cast
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, TypeAdapter, computed_field, with_config
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackyard.agents import tls
from stackyard.agents.compat import Capabilities, Capability, incompatibility
from stackyard.agents.health import AgentHealth
from stackyard.agents.target import AgentTarget
from stackyard.agents.tunnels import Tunnels, TunnelState
from stackyard.clock import utcnow
from stackyard.db.engine import Database
from stackyard.db.models import Agent as Row
from stackyard.db.rows import row_of
from stackyard.errors import (
    AgentDenied,
    AgentError,
    AgentIncompatible,
    AgentUnreachable,
    Conflict,
    Invalid,
    StackyardError,
    Unauthorized,
)
from stackyard.sealing import Sealer
from stackyard.sshkeys import fingerprint_of

if TYPE_CHECKING:
    from stackyard.agents.client import AgentClient


@dataclass(frozen=True)
class _Rotated:
    public_key: str


_ROTATED = TypeAdapter(_Rotated)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _blob(line: str) -> str:
    """An OpenSSH public key line without its comment (SSH does not carry one)."""
    return " ".join(line.split()[:2])


@functools.lru_cache(maxsize=64)  # (every agent's, at every list: a few sets in all)
def _capabilities(stored: str) -> tuple[Capability, ...]:
    return tuple(json.loads(stored))


#: How stale `last_seen_at` may get before a contact that changed nothing writes it.
SEEN_EVERY = timedelta(seconds=60)
_UNREADABLE = "The agent's token cannot be decrypted (the secret key changed): set it again"
_HEALTH = TypeAdapter(AgentHealth)


@dataclass(frozen=True)
class AgentView:
    """An agent this central keeps, with what it last reported."""

    id: int
    name: str
    url: str
    enabled: bool
    fingerprint: Annotated[str | None, Field(description="Of the pinned TLS certificate")]
    trusts_ca: bool
    version: Annotated[str | None, Field(description="As the agent last reported it")]
    capabilities: Capabilities
    incompatibility: str | None
    last_seen_at: datetime | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime | None
    kind: Annotated[
        AgentKind, Field(description="direct: the central connects; tunnel: the agent dials in")
    ] = "direct"
    tunnel: Annotated[
        TunnelState | None,
        Field(description="A tunnel agent's tunnel: connected, reconnecting, never (since start)"),
    ] = None
    tunnel_since: Annotated[
        datetime | None, Field(description="Connected since, or down since (reconnecting)")
    ] = None
    enrolled: Annotated[bool, Field(description="A tunnel agent has used its token")] = True
    key_fingerprint: Annotated[
        str | None, Field(description="Of a tunnel agent's pinned SSH key")
    ] = None
    rotating: Annotated[bool, Field(description="A new key of the agent waits to be used")] = False

    @computed_field  # type: ignore[prop-decorator]
    @property
    def compatible(self) -> bool:
        return self.incompatibility is None


@dataclass(frozen=True)
class Contact:
    """What a fleet contact with an agent found: its version and capabilities when it
    answered, its error when not."""

    view: AgentView
    version: str | None
    error: str | None
    capabilities: Capabilities | None = None

    def news(self) -> bool:
        """Whether the agent's record should be written: something changed, or it answered
        and was last seen over `SEEN_EVERY` ago."""
        view = self.view
        fresh = view.last_seen_at is not None and utcnow() - view.last_seen_at < SEEN_EVERY
        same = view.version == self.version and (
            self.capabilities is None or view.capabilities == self.capabilities
        )
        return not (view.last_error == self.error and (self.version is None or (same and fresh)))


@dataclass(frozen=True)
class AgentSpec:
    """What a user gives. `token` None keeps the stored one (on an update); for HTTPS,
    `fingerprint` is the one the user confirmed (the certificate presented now must have
    it), unless `ca_certificate` is given."""

    name: str
    url: str
    token: str | None = None
    fingerprint: str | None = None
    ca_certificate: str | None = None
    enabled: bool = True


#: Every field is in each answer, so the schema says each is there (most have defaults).
@with_config(ConfigDict(json_schema_serialization_defaults_required=True))
@dataclass(frozen=True)
class Probe:
    """What reaching an agent found."""

    ok: bool
    detail: str
    version: str | None = None
    capabilities: Capabilities = field(default_factory=list)
    incompatibility: str | None = None
    #: HTTPS only.
    fingerprint: Annotated[
        str | None, Field(description="Of the certificate the agent presents")
    ] = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def compatible(self) -> bool:
        """The agent answered, with a version this central talks to."""
        return self.version is not None and self.incompatibility is None


AgentKind = Literal["direct", "tunnel"]
#: How long a tunnel agent's enrolment token is good for.
ENROL_FOR = timedelta(minutes=15)


@dataclass(frozen=True)
class NewTunnelAgent:
    """A tunnel agent made: its one-time enrolment token, shown once, and how to use it."""

    agent: AgentView
    token: Annotated[str, Field(description="Single use; shown this once")]
    expires_at: datetime
    command: Annotated[str, Field(description="What to run on the agent's host")]
    compose: Annotated[str, Field(description="The same as a compose service")]


@dataclass(frozen=True)
class Enrolled:
    """What an agent gets for its token: its id, the token the central will use with it,
    and the central's SSH key (which it pins)."""

    agent_id: int
    agent_token: str
    central_key: str


def _connect(target: AgentTarget, start_timeout: float) -> AgentClient:
    """A client for `target`. Its module (aiohttp with it) loads with the first client: a
    central without agents never needs it, and a start does not wait for it."""
    from stackyard.agents.client import AgentClient

    return AgentClient(target, start_timeout)


def check_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Invalid("The agent's URL must be http://HOST:PORT or https://HOST:PORT")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise Invalid("The agent's URL takes no user, query or fragment")
    try:
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError as exc:
        raise Invalid(f"The agent's URL has a bad port: {exc}") from exc
    return url.strip().rstrip("/")


def _check_ca(pem: str) -> str:
    from cryptography import x509  # (loaded when a CA is given, not at every start)

    try:
        x509.load_pem_x509_certificates(pem.encode())
    except ValueError as exc:
        raise Invalid("The CA certificate is not a PEM certificate") from exc
    return pem


def _name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 100:
        raise Invalid("An agent's name is 1 to 100 characters")
    return name


class Agents:
    def __init__(
        self,
        db: Database,
        secret_key: str,
        version: str,
        timeout: float,
        tunnels: Tunnels | None = None,
    ) -> None:
        self.db = db
        #: The tunnels of the agents that dial in (their keys kept in the data folder).
        self.tunnels = tunnels or Tunnels(Path(tempfile.gettempdir()) / "stackyard-tunnels")
        self.version = version
        self.timeout = timeout
        #: How long a proxied answer may take to start: six times the fleet's limit.
        self.start_timeout = timeout * 6
        self._sealer = Sealer(secret_key, "agent-tokens")
        self._clients: dict[int, tuple[datetime | None, AgentClient]] = {}
        #: Told when an agent was added, changed or removed (its event stream is followed).
        self.changed: list[Callable[[], None]] = []
        self.tunnels.came_up.append(self._tunnel_up)
        self._asking: set[asyncio.Task[None]] = set()  # (held: the loop keeps weak ones)

    # -- records ------------------------------------------------------------------------
    def _view(self, row: Row) -> AgentView:
        tunnel, since = self.tunnels.state(row.id) if row.kind == "tunnel" else (None, None)
        return AgentView(
            kind="tunnel" if row.kind == "tunnel" else "direct",
            tunnel=tunnel,
            tunnel_since=since,
            enrolled=row.kind != "tunnel" or row.public_key is not None,
            key_fingerprint=fingerprint_of(row.public_key) if row.public_key else None,
            rotating=row.pending_key is not None,
            id=row.id,
            name=row.name,
            url=row.url,
            enabled=row.enabled,
            fingerprint=tls.pem_fingerprint(row.certificate) if row.certificate else None,
            trusts_ca=bool(row.ca_certificate),
            version=row.version,
            capabilities=list(_capabilities(row.capabilities)) if row.capabilities else [],
            incompatibility=incompatibility(self.version, row.version) if row.version else None,
            last_seen_at=row.last_seen_at,
            last_error=row.last_error,
            created_at=row.created_at,
            updated_at=row.updated_at,
        )

    def _row(self, session: Session, agent_id: int) -> Row:
        return row_of(session, Row, agent_id, "agent")

    def _target(self, row: Row) -> AgentTarget:
        try:
            token = self._sealer.decode(row.token_encrypted.encode()).decode()
        except ValueError as exc:
            raise Invalid(_UNREADABLE) from exc
        if row.kind == "tunnel":
            return AgentTarget(row.name, self._endpoint(row.id, row.name), token)
        return AgentTarget(row.name, row.url, token, row.certificate, row.ca_certificate)

    def _endpoint(self, agent_id: int, name: str) -> str:
        """A tunnel agent's loopback endpoint; AgentUnreachable while its tunnel is down."""
        found = self.tunnels.endpoint(agent_id)
        if found is not None:
            return found
        state, since = self.tunnels.state(agent_id)
        if state == "reconnecting" and since is not None:
            raise AgentUnreachable(
                f"Agent {name!r} is reconnecting: its tunnel has been down since "
                f"{since:%Y-%m-%d %H:%M:%S} UTC"
            )
        raise AgentUnreachable(
            f"Agent {name!r} has not connected its tunnel to this process (an agent that "
            "dials in is reached through the running service it dials, not from a command "
            "run beside it)"
        )

    # -- agents that dial in ----------------------------------------------------------
    def create_tunnel(self, name: str, central_url: str) -> NewTunnelAgent:
        """A tunnel agent, waiting for its host to enrol with the one-time token."""
        name = _name(name)
        enrol = secrets.token_urlsafe(32)
        row = Row(
            name=name,
            url="tunnel",
            kind="tunnel",
            token_encrypted=self._sealer.encode(secrets.token_urlsafe(32).encode()).decode(),
            enrol_token_hash=_hash(enrol),
            enrol_expires_at=utcnow() + ENROL_FOR,
        )
        with self.db.session() as session:
            session.add(row)
            try:
                session.flush()
            except IntegrityError as exc:
                raise Conflict(f"An agent named {name!r} exists") from exc
            view, expires = self._view(row), row.enrol_expires_at
        for listener in self.changed:
            listener()
        command = f"stackyard agent --connect {central_url} --enrol {enrol}"
        compose = (
            "services:\n  agent:\n    image: stackyard/stackyard:latest\n"
            f"    command: [stackyard, agent, --connect, {central_url}, --enrol, {enrol}]\n"
            "    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n"
            "      - agent-data:/data\n    restart: unless-stopped\nvolumes:\n  agent-data:\n"
        )
        assert expires is not None
        return NewTunnelAgent(view, enrol, expires, command, compose)

    def enrol(self, token: str, public_key: str) -> Enrolled:
        """The agent whose one-time token this is, enrolled with `public_key` (the token
        used up); Unauthorized for a token unknown, used or expired, all alike."""
        fingerprint_of(public_key)  # Invalid: not a key
        central = self.tunnels.central_public_key()  # (before the token is used up)
        with self.db.session() as session:
            row = session.scalar(
                select(Row).where(
                    Row.enrol_token_hash == _hash(token), Row.enrol_expires_at > utcnow()
                )
            )
            if row is None:
                raise Unauthorized("The enrolment token is unknown, used or expired")
            row.enrol_token_hash = row.enrol_expires_at = None
            row.public_key, row.updated_at = public_key.strip(), utcnow()
            agent_id, sealed = row.id, row.token_encrypted
        for listener in self.changed:
            listener()
        return Enrolled(agent_id, self._sealer.decode(sealed.encode()).decode(), central)

    def tunnel_keys(self, agent_id: int) -> list[str]:
        """The keys a tunnel of the agent may present (none: it may not connect)."""
        with self.db.session() as session:
            row = session.get(Row, agent_id)
            if row is None or row.kind != "tunnel" or not row.enabled or not row.public_key:
                return []
            return [k for k in (row.public_key, row.pending_key) if k]

    def key_presented(self, agent_id: int, key: str) -> None:
        """A tunnel came up with `key`: a rotation's new key is the agent's from now on."""
        with self.db.session() as session:
            row = session.get(Row, agent_id)
            if row is not None and row.pending_key and _blob(row.pending_key) == _blob(key):
                # (`updated_at` stays: the agent's client, and what it streams, go on)
                row.public_key, row.pending_key = key, None

    def _tunnel_up(self, agent_id: int) -> None:
        """A tunnel came up: the agent is asked what it is (its version and what it serves,
        as a direct agent is when it is added)."""
        task = asyncio.ensure_future(self._ask_health(agent_id))
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _ask_health(self, agent_id: int) -> None:
        try:
            health = await self.health(await self.client(agent_id, usable=False))
        except StackyardError as exc:
            await asyncio.to_thread(self.record_contact, agent_id, None, exc.detail)
        else:
            await asyncio.to_thread(self.record_contact, agent_id, health, None)

    async def rotate_key(self, agent_id: int) -> AgentView:
        """The agent makes a new key and dials again with it; its old tunnel ends once
        the new one is up and its own connections are done."""
        view = await asyncio.to_thread(self.get, agent_id)
        if view.kind != "tunnel":
            raise Invalid("Only an agent that dials in has a key to rotate")
        client = await self.client(agent_id)
        answer = await client.read(await client.request("POST", "/tunnel/rotate"), _ROTATED)
        fingerprint_of(answer.public_key)
        with self.db.session() as session:
            row = self._row(session, agent_id)
            row.pending_key = answer.public_key.strip()
        return await asyncio.to_thread(self.get, agent_id)

    def all(self) -> list[AgentView]:
        """Every agent, by name: read as plain rows, not as records (every dashboard over
        thousands of agents reads them all; made records cost most of its time)."""
        with self.db.session() as session:
            rows = session.execute(select(*Row.__table__.columns).order_by(Row.name))
            return [self._view(cast(Row, r)) for r in rows]

    def get(self, agent_id: int) -> AgentView:
        with self.db.session() as session:
            return self._view(self._row(session, agent_id))

    async def _trust(self, spec: AgentSpec) -> tuple[str | None, str | None]:
        """(pinned certificate, CA certificate) for `spec`: the certificate presented now
        is pinned when it has the fingerprint the user confirmed."""
        if not spec.url.lower().startswith("https://"):
            return None, None
        if spec.ca_certificate:
            return None, _check_ca(spec.ca_certificate)
        if not spec.fingerprint:
            raise Invalid(
                "An HTTPS agent's certificate must be confirmed: test the agent and give "
                "the fingerprint it shows (or give a CA certificate)"
            )
        presented = await tls.presented_certificate(spec.url, self.timeout)
        shown = tls.pem_fingerprint(presented)
        if shown.replace(":", "").upper() != spec.fingerprint.replace(":", "").strip().upper():
            raise Invalid(
                f"The agent presents a certificate with fingerprint {shown}, not the "
                f"{spec.fingerprint} given: check which certificate the agent logged at start"
            )
        return presented, None

    async def create(self, spec: AgentSpec) -> AgentView:
        """Save an agent after reaching it once, so that its record shows what it is from
        the start. An agent that answers and refuses what it is given (a wrong token) is
        not saved; one that does not answer is (offline, with why, until it answers)."""
        url = check_url(spec.url)
        if not spec.token:
            raise Invalid("An agent needs its token (STACKYARD_AGENT_TOKEN on the agent)")
        name = _name(spec.name)
        certificate, ca = await self._trust(spec)
        probe = await self._before_saving(AgentTarget(name, url, spec.token, certificate, ca))
        row = Row(
            name=name,
            url=url,
            token_encrypted=self._sealer.encode(spec.token.encode()).decode(),
            certificate=certificate,
            ca_certificate=ca,
            enabled=spec.enabled,
        )
        with self.db.session() as session:
            session.add(row)
            try:
                session.flush()
            except IntegrityError as exc:
                raise Conflict(f"An agent named {spec.name!r} exists") from exc
            agent_id = row.id
        self._record(agent_id, probe)
        for listener in self.changed:
            listener()
        return await asyncio.to_thread(self.get, agent_id)

    async def update(self, agent_id: int, spec: AgentSpec) -> AgentView:
        """Change the agent: a token left out is kept; the certificate is pinned anew
        from what is given (the URL, a fingerprint or a CA). An agent that dials in
        takes a new name and `enabled` only (disabled, its tunnel is closed)."""
        with self.db.session() as session:
            tunnel = self._row(session, agent_id).kind == "tunnel"
        if tunnel:
            return await self._update_tunnel(agent_id, _name(spec.name), spec.enabled)
        url, name = check_url(spec.url), _name(spec.name)
        with self.db.session() as session:
            row = self._row(session, agent_id)
            same_trust = url == row.url and not spec.fingerprint and not spec.ca_certificate
            certificate, ca = row.certificate, row.ca_certificate
        if not same_trust:
            certificate, ca = await self._trust(spec)
        probe = None
        if not same_trust or spec.token:
            token = spec.token or self._load_target(agent_id).token
            probe = await self._before_saving(AgentTarget(name, url, token, certificate, ca))
        with self.db.session() as session:
            row = self._row(session, agent_id)
            row.name, row.url, row.enabled = name, url, spec.enabled
            row.certificate, row.ca_certificate = certificate, ca
            if spec.token:
                row.token_encrypted = self._sealer.encode(spec.token.encode()).decode()
            row.updated_at = utcnow()
            try:
                session.flush()
            except IntegrityError as exc:
                raise Conflict(f"An agent named {spec.name!r} exists") from exc
            view = self._view(row)
        await self._forget(agent_id)
        if probe is not None:
            self._record(agent_id, probe)
            view = await asyncio.to_thread(self.get, agent_id)
        return view

    async def _update_tunnel(self, agent_id: int, name: str, enabled: bool) -> AgentView:
        with self.db.session() as session:
            row = self._row(session, agent_id)
            row.name, row.enabled, row.updated_at = name, enabled, utcnow()
            try:
                session.flush()
            except IntegrityError as exc:
                raise Conflict(f"An agent named {name!r} exists") from exc
        if not enabled:
            await self.tunnels.drop(agent_id)
        await self._forget(agent_id)
        return await asyncio.to_thread(self.get, agent_id)

    async def delete(self, agent_id: int) -> str:
        """Forget the agent (its schedules go with it; a tunnel agent's tunnel is closed
        at once and its key forgotten: it cannot come back); its name."""
        with self.db.session() as session:
            row = self._row(session, agent_id)
            name = row.name
            session.delete(row)
        await self.tunnels.drop(agent_id)
        await self._forget(agent_id)
        return name

    def record_contact(self, agent_id: int, health: AgentHealth | None, error: str | None) -> None:
        """What the last contact found: the version and capabilities, or the error."""
        with self.db.session() as session:
            row = session.get(Row, agent_id)
            if row is None:
                return
            if health is not None:
                row.version, row.last_seen_at = health.version, utcnow()
                row.capabilities = json.dumps(health.capabilities)
            row.last_error = error

    async def record_report(
        self,
        view: AgentView,
        version: str | None,
        error: str | None,
        capabilities: Capabilities | None = None,
    ) -> None:
        """What a fleet contact found (its version and capabilities, or its error),
        written in a thread only when it changed or `last_seen_at` is over a minute old: a
        dashboard refreshed every few seconds over hundreds of agents writes almost nothing
        (and leaves the event loop almost never)."""
        await self.record_reports([Contact(view, version, error, capabilities)])

    async def record_reports(self, contacts: list[Contact]) -> None:
        """`record_report` of many agents: those that changed written in one thread, each
        agent in a database session of its own (one agent's record never holds up or
        undoes another's)."""
        changed = [contact for contact in contacts if contact.news()]
        if changed:
            await asyncio.to_thread(self._write_reports, changed)

    def _write_reports(self, contacts: list[Contact]) -> None:
        for contact in contacts:
            with self.db.session() as session:
                row = session.get(Row, contact.view.id)
                if row is None:
                    continue
                if contact.version is not None:
                    row.version, row.last_seen_at = contact.version, utcnow()
                if contact.capabilities is not None:
                    row.capabilities = json.dumps(contact.capabilities)
                row.last_error = contact.error

    # -- reaching agents -----------------------------------------------------------------
    async def client(self, agent_id: int, usable: bool = True) -> AgentClient:
        """The agent's client (made once per record version). `usable`: refuse a disabled
        agent and one whose last known version this central cannot talk to."""
        return await self.client_for(await asyncio.to_thread(self.get, agent_id), usable)

    async def deliver(
        self, agent_id: int, path: str, headers: Mapping[str, str], body: bytes
    ) -> bytes:
        """A delivery for the agent (a git host's webhook for one of its repositories)
        passed on as it came, `headers` and `body`; the agent's whole (short) answer."""
        client = await self.client(agent_id)
        answer = await client.request("POST", path, headers=headers, content=body)
        return await client.read_bytes(answer)

    async def client_for(self, view: AgentView, usable: bool = True) -> AgentClient:
        """`client` for an agent whose record is read already (the fleet reads them all
        at once): the database is asked only when a client is made."""
        if usable and not view.enabled:
            raise Conflict(f"Agent {view.name!r} is disabled")
        if usable and view.incompatibility:
            raise AgentIncompatible(view.incompatibility)
        cached = self._clients.get(view.id)
        if view.kind == "tunnel":
            self._endpoint(view.id, view.name)  # (AgentUnreachable while it is down)
        if cached is not None and cached[0] == view.updated_at and cached[1].current:
            return cached[1]
        target = await asyncio.to_thread(self._load_target, view.id)
        made = _connect(target, self.start_timeout)
        self._clients[view.id] = (view.updated_at, made)
        if cached is not None:
            await cached[1].aclose()
        return made

    def _load_target(self, agent_id: int) -> AgentTarget:
        with self.db.session() as session:
            return self._target(self._row(session, agent_id))

    async def _forget(self, agent_id: int) -> None:
        cached = self._clients.pop(agent_id, None)
        if cached is not None:
            await cached[1].aclose()
        for listener in self.changed:
            listener()

    async def health(self, client: AgentClient) -> AgentHealth:
        return await asyncio.wait_for(client.get("/health", _HEALTH), self.timeout)

    async def probe(self, spec: AgentSpec) -> Probe:
        """Reach an agent that is not saved yet: for HTTPS, the certificate it presents
        (to confirm), trusted for this one call only when no CA is given."""
        url = check_url(spec.url)
        if not spec.token:
            raise Invalid("An agent needs its token (STACKYARD_AGENT_TOKEN on the agent)")
        shown: str | None = None
        certificate: str | None = None
        try:
            if url.lower().startswith("https://") and not spec.ca_certificate:
                certificate = await tls.presented_certificate(url, self.timeout)
                shown = tls.pem_fingerprint(certificate)
            target = AgentTarget(
                spec.name or url, url, spec.token, certificate, spec.ca_certificate
            )
        except StackyardError as exc:
            return Probe(ok=False, detail=exc.detail)
        return await self._probe(_connect(target, self.start_timeout), shown, close=True)

    async def test(self, agent_id: int) -> Probe:
        client = await self.client(agent_id, usable=False)
        view = self.get(agent_id)
        probe = await self._probe(client, await self._presented(view.url))
        self._record(agent_id, probe)
        return probe

    def _record(self, agent_id: int, probe: Probe) -> None:
        health = (
            AgentHealth(version=probe.version, capabilities=probe.capabilities)
            if probe.version
            else None
        )
        self.record_contact(agent_id, health, None if probe.ok else probe.detail)

    async def _before_saving(self, target: AgentTarget) -> Probe:
        """Reach an agent about to be saved with `target` (Invalid when it refuses it)."""
        client = _connect(target, self.start_timeout)
        return await self._probe(client, None, close=True, saving=True)

    async def _presented(self, url: str) -> str | None:
        """The fingerprint of the certificate an HTTPS agent presents now (the pinned one
        or not: a test shows what is there), None when it cannot be had."""
        if not url.lower().startswith("https://"):
            return None
        try:
            return tls.pem_fingerprint(await tls.presented_certificate(url, self.timeout))
        except StackyardError:
            return None

    async def _probe(
        self, client: AgentClient, shown: str | None, close: bool = False, saving: bool = False
    ) -> Probe:
        """What reaching the agent found; `saving`: Invalid when it refuses the token or
        the certificate it is about to be saved with."""
        try:
            health = await self.health(client)
        except TimeoutError:
            return Probe(ok=False, detail=f"No answer within {self.timeout:g} s", fingerprint=shown)
        except AgentDenied as exc:
            if saving:
                raise Invalid(f"{exc.detail}: nothing was saved") from exc
            return Probe(ok=False, detail=exc.detail, fingerprint=shown)
        except (StackyardError, ssl.SSLError) as exc:
            detail = exc.detail if isinstance(exc, StackyardError) else str(exc)
            return Probe(ok=False, detail=detail, fingerprint=shown)
        finally:
            if close:
                await client.aclose()
        reason = incompatibility(self.version, health.version)
        return Probe(
            ok=reason is None,
            detail=reason or f"Agent {health.version} answered",
            version=health.version,
            capabilities=health.capabilities,
            incompatibility=reason,
            fingerprint=shown,
        )

    async def aclose(self) -> None:
        for agent_id in list(self._clients):
            await self._forget(agent_id)
        await self.tunnels.aclose()


__all__ = ["AgentError", "AgentSpec", "AgentView", "Agents", "Probe"]
