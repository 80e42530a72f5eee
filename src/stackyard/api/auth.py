"""Sign-in, sign-out, the current user, own password, two-factor sign-in and API tokens.
Every sign-in (also a failed one), sign-out and change of two-factor is audited here."""

from __future__ import annotations

from asyncio import to_thread
from datetime import datetime, timedelta

from fastapi import APIRouter, Depends, Request, Response, status
from pydantic import BaseModel, Field

from stackyard.api.deps import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    DbDep,
    IdentityDep,
    PrincipalDep,
    SettingsDep,
    ThrottleDep,
    TotpDep,
    client_ip,
    current_principal,
    first_admin_made,
    request_scheme,
)
from stackyard.api.models import Body, DbId
from stackyard.auth import api_tokens, signin, totp, users
from stackyard.auth.audit import audited, record
from stackyard.auth.permissions import Permission, permissions_of
from stackyard.auth.principal import Role
from stackyard.auth.tokens import csrf_token
from stackyard.errors import StackyardError, TooManyRequests
from stackyard.identity.service import local_sign_in
from stackyard.settings import CookieSecure, Settings

public = APIRouter(prefix="/auth", tags=["auth"])
router = APIRouter(prefix="/auth", tags=["auth"], dependencies=[Depends(current_principal)])


class LoginIn(Body):
    username: str = Field(max_length=64)
    password: str = Field(max_length=1024)
    code: str | None = Field(
        None,
        max_length=32,
        description="The code from the authenticator app, or a recovery code, when the "
        "account has two-factor sign-in",
    )


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
    two_factor: bool = Field(description="Two-factor sign-in is on")
    two_factor_due: bool = Field(
        description="An admin requires two-factor sign-in and it is not set up yet: "
        "everything but this account's pages is refused until it is"
    )
    recovery_codes_left: int
    has_password: bool = Field(
        description="False for an account made by the identity provider: it signs in there"
    )


class LoginOut(BaseModel):
    user: UserOut | None = Field(description="Signed in; null when the code is needed")
    code_needed: bool = Field(
        False,
        description="The account has two-factor sign-in: send the same again with `code`. "
        "Said whatever the password was: the password is judged together with the code",
    )


class LogoutOut(BaseModel):
    provider_logout_url: str | None = Field(
        description="Go here to sign out at the identity provider too"
    )


class PasswordIn(Body):
    password: str = Field(max_length=1024, description="Your password, asked again")


class CodeIn(Body):
    code: str = Field(max_length=32)


class TwoFactorSetup(BaseModel):
    secret: str = Field(description="For apps that cannot scan: type it in")
    uri: str = Field(description="The otpauth:// address the QR code holds")
    qr_svg: str = Field(description="The QR code to scan, as SVG")


class RecoveryCodes(BaseModel):
    recovery_codes: list[str] = Field(description="Shown once: each works once")


class PasswordChange(Body):
    current_password: str = Field(max_length=1024)
    new_password: str = Field(max_length=1024)


class TokenIn(Body):
    name: str = Field(max_length=100)
    password: str = Field(
        "",
        max_length=1024,
        description="Your password, asked again (an account of the identity provider has "
        "none, and while password sign-in is kept for admins nobody else's counts: a "
        "sign-in at the provider in the last 15 minutes instead)",
    )


class TokenOut(BaseModel):
    id: int
    name: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None = Field(
        description="A token minted on a sign-in at the identity provider ends with it, "
        "and each later sign-in there moves its end on; null: until revoked"
    )


class NewToken(BaseModel):
    id: int
    name: str
    token: str = Field(description="Shown once; store it now")


def cookie_secure(request: Request, settings: Settings) -> bool:
    if settings.cookie_secure is CookieSecure.auto:
        return request_scheme(request) == "https"
    return settings.cookie_secure is CookieSecure.always


def start_session(
    request: Request, response: Response, settings: Settings, session_secret: str
) -> None:
    """The session and CSRF cookies of a sign-in (by password or at the provider)."""
    secure = cookie_secure(request, settings)
    max_age = settings.session_ttl_hours * 3600
    response.set_cookie(
        SESSION_COOKIE,
        session_secret,
        max_age=max_age,
        httponly=True,
        samesite="lax",
        secure=secure,
        path="/",
    )
    response.set_cookie(
        CSRF_COOKIE,
        csrf_token(settings.effective_secret_key, session_secret),
        max_age=max_age,
        httponly=False,
        samesite="strict",
        secure=secure,
        path="/",
    )


@public.post("/login", operation_id="login", dependencies=[Depends(first_admin_made)])
async def login(
    body: LoginIn,
    request: Request,
    response: Response,
    db: DbDep,
    settings: SettingsDep,
    throttle: ThrottleDep,
    totp_: TotpDep,
    identity: IdentityDep,
) -> LoginOut:
    """A wrong two-factor code counts as a failed sign-in, like a wrong password."""
    attempt = signin.Attempt(
        body.username,
        body.password,
        body.code,
        client_ip(request),
        request.headers.get("user-agent"),
    )
    ttl = timedelta(hours=settings.session_ttl_hours)
    try:
        result = await signin.sign_in(
            db, throttle, totp_, attempt, ttl, local_sign_in(identity.config())
        )
    except TooManyRequests:
        raise  # refused before any check: the throttle's notification tells of it
    except StackyardError as exc:
        await to_thread(
            record, db, body.username, "auth.sign_in", body.username, "failure", exc.detail
        )
        raise
    if isinstance(result, signin.CodeNeeded):
        return LoginOut(user=None, code_needed=True)
    name = result.user.username
    await to_thread(record, db, name, "auth.sign_in", name, "success", result.how)
    start_session(request, response, settings, result.session_secret)
    return LoginOut(user=UserOut.model_validate(result.user, from_attributes=True))


@router.post("/logout", operation_id="logout")
async def logout(
    request: Request,
    response: Response,
    principal: PrincipalDep,
    db: DbDep,
    identity: IdentityDep,
    settings: SettingsDep,
) -> LogoutOut:
    """Ends this session; for one begun at the identity provider, also says where to
    sign out there."""
    sealed = None
    if secret := request.cookies.get(SESSION_COOKIE):
        sealed = await to_thread(signin.sign_out, db, secret)
    response.delete_cookie(SESSION_COOKIE, path="/")
    response.delete_cookie(CSRF_COOKIE, path="/")
    name = principal.username
    await to_thread(record, db, name, "auth.sign_out", name, "success", None)
    then = f"{public_base(request, settings)}/login"
    return LogoutOut(provider_logout_url=await identity.end_session_url(sealed, then))


def public_base(request: Request, settings: Settings) -> str:
    """This service's address as users open it: the setting, else as this request came."""
    if settings.public_url:
        return settings.public_url
    return f"{request_scheme(request)}://{request.headers.get('host', 'localhost')}"


@router.get("/me", operation_id="me")
def me(principal: PrincipalDep, db: DbDep) -> CurrentUser:
    user = users.get_by_id(db, principal.user_id)
    on, left = totp.status(user)
    return CurrentUser(
        id=principal.user_id,
        username=principal.username,
        role=principal.role,
        permissions=permissions_of(principal.role),
        password_change_due=user.password_change_due,
        two_factor=on,
        two_factor_due=principal.two_factor_due,
        recovery_codes_left=left,
        has_password=users.has_password(user),
    )


@router.post("/two-factor/setup", operation_id="beginTwoFactor")
def begin_two_factor(
    body: PasswordIn,
    request: Request,
    principal: PrincipalDep,
    db: DbDep,
    throttle: ThrottleDep,
    totp_: TotpDep,
) -> TwoFactorSetup:
    """A new secret and its QR code; two-factor is on once `confirmTwoFactor` sees a
    code from the app. Asks for the password again."""
    signin.reauthenticate(
        db, throttle, principal.user_id, principal.username, body.password, client_ip(request)
    )
    enrolment = totp_.begin(principal.user_id)
    return TwoFactorSetup(secret=enrolment.secret, uri=enrolment.uri, qr_svg=enrolment.qr_svg)


@router.post("/two-factor/confirm", operation_id="confirmTwoFactor")
def confirm_two_factor(
    body: CodeIn, principal: PrincipalDep, db: DbDep, totp_: TotpDep
) -> RecoveryCodes:
    with audited(db, principal.username, "auth.two_factor.enrol", principal.username):
        codes = totp_.confirm(principal.user_id, body.code)
    return RecoveryCodes(recovery_codes=codes)


@router.post(
    "/two-factor/off", operation_id="turnOffTwoFactor", status_code=status.HTTP_204_NO_CONTENT
)
def turn_off_two_factor(
    body: PasswordIn,
    request: Request,
    principal: PrincipalDep,
    db: DbDep,
    throttle: ThrottleDep,
    totp_: TotpDep,
) -> None:
    """Asks for the password again; refused while an admin requires two-factor."""
    signin.reauthenticate(
        db, throttle, principal.user_id, principal.username, body.password, client_ip(request)
    )
    with audited(db, principal.username, "auth.two_factor.off", principal.username):
        totp_.turn_off(principal.user_id)


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
    body: TokenIn,
    request: Request,
    principal: PrincipalDep,
    db: DbDep,
    throttle: ThrottleDep,
    identity: IdentityDep,
) -> NewToken:
    """Asks for the password again (or a fresh sign-in at the identity provider): a
    stolen session or token alone cannot mint tokens."""
    local = local_sign_in(identity.config())
    ends = signin.token_grant(db, throttle, principal, body.password, client_ip(request), local)
    token, secret = api_tokens.create_token(db, principal.user_id, body.name, ends)
    return NewToken(id=token.id, name=token.name, token=secret)


@router.delete(
    "/tokens/{token_id}", operation_id="deleteToken", status_code=status.HTTP_204_NO_CONTENT
)
def delete_token(token_id: DbId, principal: PrincipalDep, db: DbDep) -> None:
    api_tokens.revoke_token(db, principal.user_id, token_id)
