"""Sign-in through an identity provider: what the sign-in page offers, the way to the
provider and back (browser navigations, answered with redirects), and its set-up (admins).
Sign-ins, refusals and role changes are audited here. A refusal sends the browser back to
the sign-in page with a code (`identity.refusals`), never with words."""

from __future__ import annotations

import logging
from asyncio import to_thread
from datetime import timedelta
from typing import Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, Field

from stackyard.api.auth import cookie_secure, public_base, start_session
from stackyard.api.deps import (
    AdminDep,
    DbDep,
    IdentityDep,
    SettingsDep,
    client_ip,
    require_admin,
)
from stackyard.api.models import Body
from stackyard.auth.audit import audited, record
from stackyard.db import Database
from stackyard.errors import StackyardError
from stackyard.identity.accounts import Arrival
from stackyard.identity.config import ProviderConfig
from stackyard.identity.refusals import Refusal, refusal_of
from stackyard.identity.service import SignInFailed, Visit, local_sign_in

log = logging.getLogger(__name__)

public = APIRouter(prefix="/auth", tags=["auth"])
router = APIRouter(
    prefix="/identity-provider", tags=["auth"], dependencies=[Depends(require_admin)]
)
#: Binds a sign-in at the provider to the browser that began it (`identity.flows`).
STATE_COOKIE = "stackyard_oidc_state"
CALLBACK = "/api/auth/oidc/callback"


class ProviderOption(BaseModel):
    name: str
    start_url: str = Field(description="Open this in the browser to sign in there")


class SignInOptions(BaseModel):
    provider: ProviderOption | None
    password_sign_in: Literal["everyone", "admins"]


class ProviderSettings(BaseModel):
    config: ProviderConfig
    client_secret_set: bool
    from_settings_variables: bool = Field(
        description="Set by STACKYARD_OIDC_* variables: read-only here"
    )
    callback_url: str = Field(description="Register this at the provider as the redirect URI")
    post_logout_url: str = Field(
        description="Register this at the provider as the post-logout redirect URI"
    )


class ProviderSettingsIn(Body):
    config: ProviderConfig
    client_secret: str | None = Field(
        None, max_length=1024, description="Write-only; null keeps the one saved"
    )


@public.get("/sign-in-options", operation_id="signInOptions")
def sign_in_options(identity: IdentityDep) -> SignInOptions:
    config = identity.config()
    option = config and ProviderOption(name=config.name, start_url="/api/auth/oidc/start")
    local = local_sign_in(config)
    return SignInOptions(
        provider=option, password_sign_in="admins" if local.admins_only else "everyone"
    )


@public.get(
    "/oidc/start",
    operation_id="startProviderSignIn",
    response_class=RedirectResponse,
    status_code=303,
)
async def start(
    request: Request,
    identity: IdentityDep,
    settings: SettingsDep,
    then: str = Query("/", alias="next", max_length=2000),
) -> RedirectResponse:
    """Redirects to the provider's sign-in page (or back to the sign-in page with the
    reason it cannot, as a code; the words in the service's log)."""
    try:
        url, flow = await identity.start(
            then, public_base(request, settings) + CALLBACK, client_ip(request)
        )
    except StackyardError as exc:
        log.warning("identity provider: a sign-in cannot begin: %s", exc.detail)
        return _back_to_sign_in(refusal_of(exc))
    response = RedirectResponse(url, status_code=303)
    response.set_cookie(
        STATE_COOKIE,
        flow.state,
        max_age=600,
        httponly=True,
        samesite="lax",
        secure=cookie_secure(request, settings),
        path="/api/auth/oidc",
    )
    return response


@public.get(
    "/oidc/callback",
    operation_id="finishProviderSignIn",
    response_class=RedirectResponse,
    status_code=303,
)
async def callback(
    request: Request, identity: IdentityDep, settings: SettingsDep, db: DbDep
) -> RedirectResponse:
    """Where the provider sends the browser back: signed in and on to the page the
    sign-in began from, or back to the sign-in page with the reason's code (its words in
    the audit log)."""
    visit = Visit(
        client_ip(request),
        request.headers.get("user-agent"),
        timedelta(hours=settings.session_ttl_hours),
    )
    try:
        done = await identity.finish(
            dict(request.query_params), request.cookies.get(STATE_COOKIE), visit
        )
    except SignInFailed as exc:
        await to_thread(_audit_refusal, db, exc)
        response = _back_to_sign_in(exc.reason)
    else:
        await to_thread(_audit_arrival, db, done.provider, done.arrival)
        response = RedirectResponse(done.then, status_code=303)
        start_session(request, response, settings, done.session_secret)
    response.delete_cookie(STATE_COOKIE, path="/api/auth/oidc")
    return response


def _audit_arrival(db: Database, provider: str, arrival: Arrival) -> None:
    name = arrival.user.username
    if arrival.role_change:
        revoked = ": sessions and API tokens revoked" if arrival.dropped else ""
        record(db, provider, "auth.role_change", name, "success", arrival.role_change + revoked)
    if arrival.kept_admin:
        kept = f"{arrival.kept_admin} not made: the last admin stays admin (make another first)"
        record(db, provider, "auth.role_change", name, "failure", kept)
    how = ", ".join(filter(None, [provider, arrival.how]))
    record(db, name, "auth.sign_in", name, "success", how)


def _audit_refusal(db: Database, refused: SignInFailed) -> None:
    said = f"{refused.provider}: {refused.detail}"
    record(db, refused.who, "auth.sign_in", refused.who, "failure", said)
    if refused.revoked is not None:
        revoked = "in no group that has a role here: sessions and API tokens revoked"
        record(db, refused.provider, "auth.role_change", refused.revoked, "success", revoked)


def _back_to_sign_in(reason: Refusal) -> RedirectResponse:
    return RedirectResponse(f"/login?error={reason.value}", status_code=303)


@router.get("", operation_id="getIdentityProvider")
def get_provider(
    request: Request, identity: IdentityDep, settings: SettingsDep
) -> ProviderSettings:
    base = public_base(request, settings)
    return ProviderSettings(
        config=identity.settings.config(),
        client_secret_set=identity.settings.secret_set(),
        from_settings_variables=identity.settings.from_env,
        callback_url=base + CALLBACK,
        post_logout_url=base + "/login",
    )


@router.put("", operation_id="setIdentityProvider")
async def set_provider(
    body: ProviderSettingsIn,
    request: Request,
    admin: AdminDep,
    identity: IdentityDep,
    settings: SettingsDep,
    db: DbDep,
) -> ProviderSettings:
    """The client secret is write-only: null keeps the one saved. A provider turned on is
    checked first: 400, with why, when its discovery document cannot be read or used."""
    with audited(db, admin.username, "auth.provider", body.config.issuer or None) as note:
        await identity.save(body.config, body.client_secret)
        note.detail = "on" if body.config.enabled else "off"
    return get_provider(request, identity, settings)


class ProviderTest(BaseModel):
    detail: str = Field(description="What the provider's discovery document names")


@router.post("/test", operation_id="testIdentityProvider")
async def test_provider(body: ProviderSettingsIn, identity: IdentityDep) -> ProviderTest:
    """Read the provider's discovery document as a save would (nothing is saved); 400,
    with why, when it cannot be read or used."""
    return ProviderTest(detail=await identity.test(body.config))
