"""Sign-in, sign-out, the current user, own password and API tokens."""

from __future__ import annotations

from datetime import datetime, timedelta

from fastapi import APIRouter, Depends, Request, Response, status
from pydantic import BaseModel, Field

from stackyard.api.deps import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    DbDep,
    PrincipalDep,
    SettingsDep,
    ThrottleDep,
    client_ip,
    current_principal,
    first_admin_made,
    request_scheme,
)
from stackyard.api.models import Body, DbId
from stackyard.auth import api_tokens, signin, users
from stackyard.auth.permissions import Permission, permissions_of
from stackyard.auth.principal import Role
from stackyard.auth.tokens import csrf_token
from stackyard.settings import CookieSecure

public = APIRouter(prefix="/auth", tags=["auth"])
router = APIRouter(prefix="/auth", tags=["auth"], dependencies=[Depends(current_principal)])


class LoginIn(Body):
    username: str = Field(max_length=64)
    password: str = Field(max_length=1024)


class UserOut(BaseModel):
    id: int
    username: str
    role: Role


class CurrentUser(UserOut):
    permissions: list[Permission] = Field(
        description="What the role lets this user do (the server refuses the rest)"
    )
    password_change_due: bool = Field(
        description="Signed in with the one-time password printed at first start"
    )


class LoginOut(BaseModel):
    user: UserOut


class PasswordChange(Body):
    current_password: str = Field(max_length=1024)
    new_password: str = Field(max_length=1024)


class TokenIn(Body):
    name: str = Field(max_length=100)
    password: str = Field(max_length=1024, description="Your password, asked again")


class TokenOut(BaseModel):
    id: int
    name: str
    created_at: datetime
    last_used_at: datetime | None


class NewToken(BaseModel):
    id: int
    name: str
    token: str = Field(description="Shown once; store it now")


def _secure(request: Request, setting: CookieSecure) -> bool:
    if setting is CookieSecure.auto:
        return request_scheme(request) == "https"
    return setting is CookieSecure.always


@public.post("/login", operation_id="login", dependencies=[Depends(first_admin_made)])
async def login(
    body: LoginIn,
    request: Request,
    response: Response,
    db: DbDep,
    settings: SettingsDep,
    throttle: ThrottleDep,
) -> LoginOut:
    ttl = timedelta(hours=settings.session_ttl_hours)
    result = await signin.sign_in(
        db,
        throttle,
        body.username,
        body.password,
        ttl,
        client_ip(request),
        request.headers.get("user-agent"),
    )
    secure = _secure(request, settings.cookie_secure)
    max_age = int(ttl.total_seconds())
    response.set_cookie(
        SESSION_COOKIE,
        result.session_secret,
        max_age=max_age,
        httponly=True,
        samesite="lax",
        secure=secure,
        path="/",
    )
    response.set_cookie(
        CSRF_COOKIE,
        csrf_token(settings.effective_secret_key, result.session_secret),
        max_age=max_age,
        httponly=False,
        samesite="strict",
        secure=secure,
        path="/",
    )
    return LoginOut(user=UserOut.model_validate(result.user, from_attributes=True))


@router.post("/logout", operation_id="logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(request: Request, response: Response, db: DbDep) -> None:
    if secret := request.cookies.get(SESSION_COOKIE):
        signin.sign_out(db, secret)
    response.delete_cookie(SESSION_COOKIE, path="/")
    response.delete_cookie(CSRF_COOKIE, path="/")


@router.get("/me", operation_id="me")
def me(principal: PrincipalDep, db: DbDep) -> CurrentUser:
    return CurrentUser(
        id=principal.user_id,
        username=principal.username,
        role=principal.role,
        permissions=permissions_of(principal.role),
        password_change_due=users.password_change_due(db, principal.user_id),
    )


@router.put("/password", operation_id="changePassword", status_code=status.HTTP_204_NO_CONTENT)
def change_password(body: PasswordChange, principal: PrincipalDep, db: DbDep) -> None:
    """Other sign-ins end and every API token of yours is revoked; this one stays."""
    users.change_own_password(
        db,
        principal.user_id,
        body.current_password,
        body.new_password,
        keep_session=principal.session_secret,
    )


@router.get("/tokens", operation_id="listTokens")
def list_tokens(principal: PrincipalDep, db: DbDep) -> list[TokenOut]:
    rows = api_tokens.list_tokens(db, principal.user_id)
    return [TokenOut.model_validate(r, from_attributes=True) for r in rows]


@router.post("/tokens", operation_id="createToken", status_code=status.HTTP_201_CREATED)
def create_token(
    body: TokenIn, request: Request, principal: PrincipalDep, db: DbDep, throttle: ThrottleDep
) -> NewToken:
    """Asks for the password again: a stolen session or token alone cannot mint tokens."""
    signin.reauthenticate(
        db, throttle, principal.user_id, principal.username, body.password, client_ip(request)
    )
    token, secret = api_tokens.create_token(db, principal.user_id, body.name)
    return NewToken(id=token.id, name=token.name, token=secret)


@router.delete(
    "/tokens/{token_id}", operation_id="deleteToken", status_code=status.HTTP_204_NO_CONTENT
)
def delete_token(token_id: DbId, principal: PrincipalDep, db: DbDep) -> None:
    api_tokens.revoke_token(db, principal.user_id, token_id)
