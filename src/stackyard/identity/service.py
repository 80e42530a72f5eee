"""Sign-in through an OpenID Connect provider: the authorization code flow with PKCE,
`state` and `nonce` (RFC 6749, 7636; OpenID Connect Core), the ID token checked
(`idtoken`), the user's claims from the userinfo endpoint too, the account and its role
(`accounts`), and sign-out at the provider (RP-initiated logout).

The way there is anonymous: sign-ins begun from one address are limited as failed
sign-ins are (`throttle.LoginThrottle.begin_from`, taken back when one finishes), what
waits is bounded per address (`flows`), and the discovery document is kept a minute
(`peer`)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from stackyard.auth import api_tokens, sessions
from stackyard.auth.signin import LocalSignIn
from stackyard.auth.throttle import LoginThrottle
from stackyard.clock import utcnow
from stackyard.db import Database
from stackyard.errors import (
    Invalid,
    NotFound,
    ProviderDeclined,
    ProviderError,
    SignInRefused,
    StackyardError,
)
from stackyard.identity import accounts
from stackyard.identity.accounts import Arrival
from stackyard.identity.config import IdentitySettings, ProviderConfig
from stackyard.identity.flows import Flow, PendingFlows
from stackyard.identity.peer import Endpoints, Peer
from stackyard.identity.refusals import Refusal, refusal_of
from stackyard.sealing import Sealer

#: Sign-ins one address may begin without finishing before it waits (1 s, doubling).
FREE_STARTS = 20


class SignInFailed(StackyardError):
    """A sign-in at the provider that did not end signed in; `who` is the provider's
    user when the ID token was good (for the audit log), else "unknown"; `provider` the
    provider's name; `reason` the code the browser is told (`refusals`); `revoked` the
    account whose sessions and API tokens this refusal ended (in no group any more)."""

    def __init__(
        self, error: StackyardError, who: str, provider: str, revoked: str | None = None
    ) -> None:
        super().__init__(error.detail)
        self.who = who
        self.provider = provider
        self.reason: Refusal = refusal_of(error)
        self.revoked = revoked


@dataclass(frozen=True)
class ProviderSignIn:
    arrival: Arrival
    session_secret: str
    then: str
    provider: str  # its name


@dataclass(frozen=True)
class Visit:
    """Where this sign-in's browser is, for the session row."""

    client_ip: str | None
    user_agent: str | None
    ttl: timedelta


class IdentityService:
    def __init__(self, db: Database, settings: IdentitySettings, secret_key: str) -> None:
        self.settings = settings
        self._db = db
        self._peer = Peer()
        self._flows = PendingFlows()
        self._starts = LoginThrottle(free_attempts=FREE_STARTS, address_factor=1)
        self._keys: dict[str, dict[str, Any]] = {}
        self._sealer = Sealer(secret_key, "id-tokens")

    async def aclose(self) -> None:
        await self._peer.aclose()

    def config(self) -> ProviderConfig | None:
        """The provider's configuration when it is on."""
        config = self.settings.config()
        return config if config.enabled else None

    async def save(self, config: ProviderConfig, client_secret: str | None) -> None:
        """An admin's set-up (`IdentitySettings.save`). A provider turned on is checked
        first: its discovery document must be there and name its endpoints (Invalid, with
        why, else: a set-up that cannot sign anyone in is not saved). Its document is then
        fetched anew for sign-ins."""
        await asyncio.to_thread(self.settings.check, config, client_secret)
        if config.enabled:
            await self.test(config)
        await asyncio.to_thread(self.settings.save, config, client_secret)
        self._peer.forget()

    async def test(self, config: ProviderConfig) -> str:
        """What the provider's discovery document says, in a sentence; Invalid with why when
        it cannot be read or used."""
        if not config.issuer:
            raise Invalid("Give the provider's issuer URL")
        where = f"{config.issuer.rstrip('/')}/.well-known/openid-configuration"
        try:
            endpoints = await self._peer.check(config.issuer)
        except ProviderError as exc:
            raise Invalid(
                f"The discovery document at {where} cannot be used: {exc.detail}"
            ) from exc
        return (
            f"The discovery document at {where} names the sign-in at {endpoints.authorization} "
            f"and the token endpoint at {endpoints.token}"
        )

    # -- the way there --------------------------------------------------------------------
    async def start(self, then: str, redirect_uri: str, address: str | None) -> tuple[str, Flow]:
        """The provider's authorization URL for a new sign-in begun from `address`, and
        the sign-in; TooManyRequests when that address began too many."""
        from authlib.oauth2.rfc7636 import create_s256_code_challenge

        config = self.settings.config()
        _must_be_on(config)
        self._starts.begin_from(address)
        endpoints = await self._peer.discover(config.issuer)
        flow = self._flows.begin(_local_path(then), redirect_uri, address)
        query = urlencode(
            {
                "response_type": "code",
                "client_id": config.client_id,
                "redirect_uri": redirect_uri,
                "scope": " ".join(config.scopes),
                "state": flow.state,
                "nonce": flow.nonce,
                "code_challenge": create_s256_code_challenge(flow.verifier),
                "code_challenge_method": "S256",
            }
        )
        joiner = "&" if "?" in endpoints.authorization else "?"
        return f"{endpoints.authorization}{joiner}{query}", flow

    # -- the way back ---------------------------------------------------------------------
    async def finish(
        self, params: Mapping[str, str], browser_state: str | None, visit: Visit
    ) -> ProviderSignIn:
        """The callback: the sign-in signed in, or SignInFailed saying why."""
        who, subject = "unknown", None
        config = self.settings.config()
        try:
            flow = self._flows.take(params.get("state"), browser_state)
            if "error" in params:
                said = params.get("error_description") or params["error"]
                raise ProviderDeclined(f"the provider did not sign you in: {said[:300]}")
            code = params.get("code")
            if not code:
                raise Invalid("The provider's answer has no code: start the sign-in again")
            _must_be_on(config)
            endpoints = await self._peer.discover(config.issuer)
            secret = self.settings.client_secret()  # (SecretUnreadable: said as the reason)
            tokens = await self._peer.exchange(
                endpoints, config.client_id, secret, code, flow.verifier, flow.redirect_uri
            )
            id_token = tokens.get("id_token")
            if not isinstance(id_token, str):
                raise ProviderError("the provider's token answer has no ID token")
            claims = await self._verified(endpoints, config, id_token, flow.nonce)
            who = _who(claims, config)
            claims = await self._with_userinfo(endpoints, tokens, claims)
            who = _who(claims, config)
            sealed = self._sealer.encode(id_token.encode()).decode()
            subject = f"{config.issuer} {claims['sub']}"
            arrival, secret_out = await asyncio.to_thread(
                self._arrive, config, subject, claims, sealed, visit
            )
        except SignInRefused as exc:
            revoked = None
            if exc.reason == Refusal.no_role and subject is not None:
                revoked = await asyncio.to_thread(self._shut_out, subject)
            raise SignInFailed(exc, who, config.name, revoked) from exc
        except StackyardError as exc:
            raise SignInFailed(exc, who, config.name) from exc
        self._starts.succeeded_from(flow.address)
        return ProviderSignIn(arrival, secret_out, flow.then, config.name)

    def _shut_out(self, subject: str) -> str | None:
        with self._db.session() as session:
            return accounts.shut_out(session, subject)

    def _arrive(
        self,
        config: ProviderConfig,
        subject: str,
        claims: dict[str, Any],
        sealed_id_token: str,
        visit: Visit,
    ) -> tuple[Arrival, str]:
        with self._db.session() as session:
            arrival = accounts.arrive(session, config, subject, claims)
            secret = sessions.open_session(
                session, arrival.user, visit.ttl, visit.client_ip, visit.user_agent, sealed_id_token
            )
            api_tokens.renew_at_provider(session, arrival.user, utcnow() + visit.ttl)
        return arrival, secret

    async def _verified(
        self, endpoints: Endpoints, config: ProviderConfig, token: str, nonce: str
    ) -> dict[str, Any]:
        """The ID token's claims; the key set is fetched again when the token names a key
        it does not hold (the provider rotated its keys)."""
        from stackyard.identity import idtoken  # (JOSE loads cryptography: at first use)

        jwks = self._keys.get(endpoints.jwks_uri)
        if jwks is None or idtoken.key_id(token) not in idtoken.kids(jwks):
            jwks = await self._peer.keys(endpoints)
            self._keys[endpoints.jwks_uri] = jwks
        return idtoken.verify(token, jwks, config.issuer, config.client_id, nonce)

    async def _with_userinfo(
        self, endpoints: Endpoints, tokens: dict[str, Any], claims: dict[str, Any]
    ) -> dict[str, Any]:
        """Many providers send groups, names and email only from the userinfo endpoint.
        Its answer must be about the same subject; the ID token's claims win."""
        access_token = tokens.get("access_token")
        if endpoints.userinfo is None or not isinstance(access_token, str):
            return claims
        info = await self._peer.userinfo(endpoints, access_token)
        if info.get("sub") != claims["sub"]:
            raise ProviderError("the provider's userinfo is about another user")
        return info | claims

    # -- sign-out -------------------------------------------------------------------------
    async def end_session_url(self, sealed_id_token: str | None, then: str) -> str | None:
        """Where the browser goes to sign out at the provider too (None when the session
        was not begun there, or the provider offers no sign-out, or cannot be reached:
        the session here is over either way)."""
        config = self.config()
        if sealed_id_token is None or config is None:
            return None
        try:
            endpoints = await self._peer.discover(config.issuer)
        except StackyardError:
            return None
        if endpoints.end_session is None:
            return None
        try:
            hint = self._sealer.decode(sealed_id_token.encode()).decode()
        except ValueError:  # sealed under another secret key
            return None
        query = urlencode(
            {"id_token_hint": hint, "client_id": config.client_id, "post_logout_redirect_uri": then}
        )
        joiner = "&" if "?" in endpoints.end_session else "?"
        return f"{endpoints.end_session}{joiner}{query}"


def _must_be_on(config: ProviderConfig) -> None:
    if not config.enabled:
        raise NotFound("Sign-in through an identity provider is not set up")


def local_sign_in(config: ProviderConfig | None) -> LocalSignIn:
    """Who may sign in with a password while `config` (None: no provider) is in force."""
    if config is None:
        return LocalSignIn()
    return LocalSignIn(config.password_sign_in == "admins", config.name)


def _who(claims: dict[str, Any], config: ProviderConfig) -> str:
    said = accounts.claim_values(claims, config.username_claim)
    return f"{(said[0] if said else claims.get('sub', 'unknown'))[:60]} ({config.name})"


def _local_path(then: str) -> str:
    """Only a path of this service: never another site (an open redirect)."""
    if then.startswith("/") and not then.startswith(("//", "/\\")) and "\\" not in then:
        return then
    return "/"
