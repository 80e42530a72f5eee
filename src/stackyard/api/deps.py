"""Request dependencies: the services (one typed read of what the start built,
stackyard.root), settings, database, the signed-in principal, roles, CSRF."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractContextManager
from typing import Annotated, Protocol, TypeVar, cast
from urllib.parse import urlsplit

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer
from starlette.applications import Starlette
from starlette.requests import HTTPConnection

from stackyard.auth import sessions
from stackyard.auth.audit import AuditAction, AuditNote, Recorder, audited_by, record, relay
from stackyard.auth.principal import AGENT_ROLE_HEADER, AGENT_USER_HEADER, Principal, Role
from stackyard.auth.streams import STREAM_ENDS, STREAM_NAME, current_role, while_valid
from stackyard.auth.throttle import LoginThrottle
from stackyard.auth.tokens import csrf_token, same
from stackyard.auth.totp import Totp
from stackyard.db import Database
from stackyard.errors import Forbidden, Invalid, Unauthorized
from stackyard.identity.service import IdentityService
from stackyard.root.services import AgentServices, CentralServices, Jobs, Services
from stackyard.settings import Settings
from stackyard.stacks.service import StackService

SESSION_COOKIE = "stackyard_session"
CSRF_COOKIE = "stackyard_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: What a session may reach while the two-factor sign-in an admin requires is not set up
#: (not the API tokens: one made then would never need the second factor).
_BEFORE_TWO_FACTOR = ("/api/auth/me", "/api/auth/logout", "/api/auth/two-factor/")

_bearer = HTTPBearer(auto_error=False, description="An API token from `stackyard token create`")
_cookie = APIKeyCookie(
    name=SESSION_COOKIE,
    auto_error=False,
    description=f"Set by sign-in; writes also need the {CSRF_HEADER} header",
)


def services_of(app: Starlette) -> Services:
    """The services `app` was started with (stackyard.app's lifespan puts them there)."""
    started: Services = app.state.services
    return started


def services(connection: HTTPConnection) -> Services:
    """The services of the app that serves `connection`; each dependency on one service
    below is derived from it."""
    return services_of(connection.app)


def central_services(connection: HTTPConnection) -> CentralServices:
    """The central's services (its own routes are never mounted on an agent)."""
    started = services(connection)
    if not isinstance(started, CentralServices):
        raise RuntimeError("Asked for a service of the central on an agent")
    return started


def agent_services(connection: HTTPConnection) -> AgentServices:
    """An agent's services (its own routes are never mounted on the central)."""
    started = services(connection)
    if not isinstance(started, AgentServices):
        raise RuntimeError("Asked for a service of an agent on the central")
    return started


def jobs(connection: HTTPConnection) -> Jobs:
    """What the start of the app that serves `connection` began (stackyard.root.start)."""
    started: Jobs = connection.app.state.jobs
    return started


def get_settings(request: HTTPConnection) -> Settings:
    return services(request).settings


def get_db(request: HTTPConnection) -> Database:
    return central_services(request).db


def get_throttle(request: Request) -> LoginThrottle:
    return central_services(request).throttle


async def first_admin_made(request: Request) -> None:
    """Sign-in waits for the first admin, whose password a first start hashes while the
    service already answers (stackyard.root.start)."""
    await jobs(request).first_admin


def _trusted(peer: str, proxies: Iterable[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> bool:
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    return any(address in network for network in proxies)


def client_ip(request: HTTPConnection) -> str | None:
    """The client's address. `X-Forwarded-For` counts only when the peer is one of the
    proxies named in STACKYARD_TRUSTED_PROXIES; then the nearest address that is not a
    trusted proxy is the client."""
    peer = request.client.host if request.client else None
    proxies = get_settings(request).trusted_proxy_networks
    if peer is None or not proxies or not _trusted(peer, proxies):
        return peer
    hops = [h.strip() for h in ",".join(request.headers.getlist("x-forwarded-for")).split(",")]
    for hop in reversed([h for h in hops if h]):
        if not _trusted(hop, proxies):
            return hop
    return peer


def request_scheme(request: HTTPConnection) -> str:
    """`https` or `http`; `X-Forwarded-Proto` counts only when a trusted proxy sent it."""
    peer = request.client.host if request.client else None
    proxies = get_settings(request).trusted_proxy_networks
    if peer is not None and proxies and _trusted(peer, proxies):
        forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
        if forwarded in ("http", "https"):
            return forwarded
    return request.url.scheme


SettingsDep = Annotated[Settings, Depends(get_settings)]
DbDep = Annotated[Database, Depends(get_db)]
ThrottleDep = Annotated[LoginThrottle, Depends(get_throttle)]


def get_totp(request: Request) -> Totp:
    return central_services(request).totp


def get_identity(request: Request) -> IdentityService:
    return central_services(request).identity


TotpDep = Annotated[Totp, Depends(get_totp)]
IdentityDep = Annotated[IdentityService, Depends(get_identity)]


def is_agent(connection: HTTPConnection) -> bool:
    return isinstance(services(connection), AgentServices)


def authenticate(request: HTTPConnection, method: str) -> Principal:
    """The principal of a request, by API token (bearer) or session cookie (+ CSRF on
    writes); on an agent, the central's user, vouched for by the agent token. Used by
    `AuthenticatedBoundedBody` (before a body is read) and by the dependency."""
    known = request.scope.get("state", {}).get("principal")
    if known is not None:
        return cast(Principal, known)
    if is_agent(request):
        principal = agent_principal(request)
        request.scope.setdefault("state", {})["principal"] = principal
        return principal
    db, settings = get_db(request), get_settings(request)
    authorization = request.headers.get("authorization")
    if authorization:
        scheme, _, credentials = authorization.partition(" ")
        if scheme.lower() != "bearer" or not credentials.strip():
            raise Unauthorized("Malformed Authorization header; expected 'Bearer <token>'")
        with db.session() as session:
            principal = sessions.principal_from_token(session, credentials.strip())
    else:
        cookie = request.cookies.get(SESSION_COOKIE)
        if not cookie:
            raise Unauthorized("Not signed in")
        with db.session() as session:
            principal = sessions.principal_from_session(session, cookie)
        if method not in SAFE_METHODS:
            sent = request.headers.get(CSRF_HEADER, "")
            if not same(sent, csrf_token(settings.effective_secret_key, cookie)):
                raise Forbidden(f"Missing or invalid {CSRF_HEADER} header")
    if principal.two_factor_due and not request.url.path.startswith(_BEFORE_TWO_FACTOR):
        raise Forbidden("Set up two-factor sign-in first (Account): an admin requires it")
    request.scope.setdefault("state", {})["principal"] = principal
    return principal


def authenticate_websocket(websocket: HTTPConnection) -> Principal:
    """A WebSocket's principal: an API token (bearer header), or the session cookie with
    the CSRF token as the `csrf` query parameter (a browser's WebSocket carries no header
    of ours) from a page of this service's own origin."""
    if websocket.headers.get("authorization"):
        return authenticate(websocket, "GET")
    origin = websocket.headers.get("origin")
    host = websocket.headers.get("host")
    if origin is None or host is None or urlsplit(origin).netloc != host:
        raise Forbidden("A WebSocket signed in by cookie must come from this service's pages")
    cookie = websocket.cookies.get(SESSION_COOKIE, "")
    sent = websocket.query_params.get("csrf", "")
    principal = authenticate(websocket, "GET")
    if not same(sent, csrf_token(get_settings(websocket).effective_secret_key, cookie)):
        raise Forbidden("Missing or invalid csrf parameter")
    return principal


def current_principal(
    request: Request,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    _cookie: Annotated[str | None, Security(_cookie)],
) -> Principal:
    """The signed-in user (the security schemes are declared for the OpenAPI schema)."""
    return authenticate(request, request.method)


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def _require(role: Role) -> Callable[[Principal], Principal]:
    def dependency(principal: PrincipalDep) -> Principal:
        if not principal.has(role):
            raise Forbidden(f"This action needs the {role} role")
        return principal

    dependency.__name__ = f"require_{role}"
    return dependency


require_operator = _require(Role.operator)
require_admin = _require(Role.admin)
OperatorDep = Annotated[Principal, Depends(require_operator)]
AdminDep = Annotated[Principal, Depends(require_admin)]

T = TypeVar("T")


def signed_in_stream(
    request: Request, principal: Principal, events: AsyncIterator[T]
) -> AsyncIterator[T]:
    """A long stream that ends when the credential that opened it is revoked (an agent's
    token cannot be: it is set when the agent starts), or when the client that named it
    (`?stream=`) asks for its end (`POST /streams/{name}/end`)."""
    name = request.query_params.get("stream")
    if name is not None and STREAM_NAME.fullmatch(name):
        events = STREAM_ENDS.follow(name, principal.username, events)
    if is_agent(request):
        return events
    return while_valid(get_db(request), principal, events)


def role_now(connection: HTTPConnection, principal: Principal) -> Role | None:
    """The role the user behind `principal` has now (blocking); None once the credential
    that proved them no longer works. On an agent, the role its central named: its token
    cannot be revoked while it runs, and the central watches its own users."""
    if is_agent(connection):
        return principal.role
    return current_role(get_db(connection), principal)


class Audit(Protocol):
    def __call__(
        self, principal: Principal, action: AuditAction, target: str | None = None
    ) -> AbstractContextManager[AuditNote]: ...


def audit_recorder(connection: HTTPConnection) -> Recorder:
    """Where this request's audit entries go: the database, or (on an agent) the
    response, for the central to record."""
    if is_agent(connection):
        return functools.partial(relay, connection.scope)
    return functools.partial(record, get_db(connection))


def get_audit(request: Request) -> Audit:
    recorder = audit_recorder(request)

    def audit(
        principal: Principal, action: AuditAction, target: str | None = None
    ) -> AbstractContextManager[AuditNote]:
        return audited_by(recorder, principal.username, action, target)

    return audit


AuditDep = Annotated[Audit, Depends(get_audit)]


_agent_bearer = HTTPBearer(
    auto_error=False, description="The agent's token (STACKYARD_AGENT_TOKEN)"
)


def check_agent_token(request: HTTPConnection) -> None:
    expected = get_settings(request).agent_token
    scheme, _, sent = request.headers.get("authorization", "").partition(" ")
    if not expected or scheme.lower() != "bearer" or not same(sent.strip(), expected):
        raise Unauthorized("Missing or invalid agent token")


def agent_principal(request: HTTPConnection) -> Principal:
    """On an agent: whoever holds the agent token (its central) acts as an admin, or as
    the user and role the central names in `X-Stackyard-User` and `X-Stackyard-Role`
    (the central's proxy does, so that the agent's routes apply that user's role)."""
    check_agent_token(request)
    try:
        role = Role(request.headers.get(AGENT_ROLE_HEADER, Role.admin))
    except ValueError as exc:
        raise Invalid(f"{AGENT_ROLE_HEADER} must be one of: {', '.join(Role)}") from exc
    username = request.headers.get(AGENT_USER_HEADER) or "central"
    return Principal(user_id=0, username=username, role=role, via="agent", credential_hash="")


def require_agent_token(
    request: Request,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_agent_bearer)],
) -> None:
    check_agent_token(request)


def get_stacks(request: Request) -> StackService:
    return services(request).stacks


StacksDep = Annotated[StackService, Depends(get_stacks)]


def existing_stack(stack_id: str, stacks: StacksDep) -> str:
    """Checked before a streamed response starts, so a bad id is a 404, not a broken stream."""
    stacks.require(stack_id)
    return stack_id
