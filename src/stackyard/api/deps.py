"""Request dependencies: settings, database, the signed-in principal, roles, CSRF."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer

from stackyard.auth import sessions
from stackyard.auth.principal import Principal
from stackyard.auth.throttle import LoginThrottle
from stackyard.auth.tokens import csrf_token, same
from stackyard.db import Database
from stackyard.errors import Forbidden, Unauthorized
from stackyard.settings import Settings
from stackyard.stacks.service import StackService

SESSION_COOKIE = "stackyard_session"
CSRF_COOKIE = "stackyard_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

_bearer = HTTPBearer(auto_error=False, description="An API token from `stackyard token create`")
_cookie = APIKeyCookie(
    name=SESSION_COOKIE,
    auto_error=False,
    description=f"Set by sign-in; writes also need the {CSRF_HEADER} header",
)


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_db(request: Request) -> Database:
    return request.app.state.db


def get_throttle(request: Request) -> LoginThrottle:
    return request.app.state.throttle


def client_ip(request: Request) -> str | None:
    return request.client.host if request.client else None


SettingsDep = Annotated[Settings, Depends(get_settings)]
DbDep = Annotated[Database, Depends(get_db)]
ThrottleDep = Annotated[LoginThrottle, Depends(get_throttle)]


def current_principal(
    request: Request,
    db: DbDep,
    settings: SettingsDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)],
    cookie: Annotated[str | None, Security(_cookie)],
) -> Principal:
    """The signed-in user, by API token (bearer) or session cookie (+ CSRF on writes)."""
    if request.headers.get("authorization"):
        if bearer is None or bearer.scheme.lower() != "bearer":
            raise Unauthorized("Malformed Authorization header; expected 'Bearer <token>'")
        with db.session() as session:
            return sessions.principal_from_token(session, bearer.credentials)
    if not cookie:
        raise Unauthorized("Not signed in")
    with db.session() as session:
        principal = sessions.principal_from_session(session, cookie)
    if request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER, "")
        if not same(sent, csrf_token(settings.effective_secret_key, cookie)):
            raise Forbidden(f"Missing or invalid {CSRF_HEADER} header")
    return principal


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def require_admin(principal: PrincipalDep) -> Principal:
    if not principal.is_admin:
        raise Forbidden("This action needs the admin role")
    return principal


AdminDep = Annotated[Principal, Depends(require_admin)]


_agent_bearer = HTTPBearer(
    auto_error=False, description="The agent's token (STACKYARD_AGENT_TOKEN)"
)


def require_agent_token(
    settings: SettingsDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(_agent_bearer)],
) -> None:
    expected = settings.agent_token
    if not expected or bearer is None or not same(bearer.credentials, expected):
        raise Unauthorized("Missing or invalid agent token")


def get_stacks(request: Request) -> StackService:
    return request.app.state.stacks


StacksDep = Annotated[StackService, Depends(get_stacks)]


def existing_stack(stack_id: str, stacks: StacksDep) -> str:
    """Checked before a streamed response starts, so a bad id is a 404, not a broken stream."""
    stacks.host.store.folder(stack_id)
    return stack_id
