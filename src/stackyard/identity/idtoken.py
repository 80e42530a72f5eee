"""The checks an ID token must pass (OpenID Connect Core 3.1.3.7), with joserfc (the
JOSE library of Authlib's author; Authlib's own `jose` module is deprecated for it): a
signature by one of the provider's keys with an asymmetric algorithm (never `none`, never
a shared-secret algorithm that a key confusion could forge), `iss` exactly the issuer,
`aud` naming this client (and `azp` this client when there are several), `exp` not past,
`iat` not in the future nor too old, and `nonce` the one this sign-in sent."""

from __future__ import annotations

import time
from typing import Any

from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from stackyard.errors import ProviderError

#: Clocks may differ by this many seconds between this host and the provider.
LEEWAY = 60
#: An ID token issued longer ago than this is refused (a sign-in takes a moment).
MAX_AGE = 600
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"]


def key_id(token: str) -> str | None:
    """The `kid` the token's header names (to know whether the key set must be fetched
    again after a rotation); None when it names none or cannot be read."""
    try:
        header = jws.extract_compact(token.encode()).protected
    except (JoseError, ValueError):
        return None
    kid = header.get("kid")
    return kid if isinstance(kid, str) else None


def kids(jwks: dict[str, Any]) -> set[str]:
    keys = [k for k in jwks.get("keys", []) if isinstance(k, dict)]
    return {k["kid"] for k in keys if isinstance(k.get("kid"), str)}


def verify(
    token: str, jwks: dict[str, Any], issuer: str, client_id: str, nonce: str
) -> dict[str, Any]:
    """The token's claims, or ProviderError saying which check failed."""
    try:
        keys = KeySet.import_key_set(jwks)  # type: ignore[arg-type]
    except (JoseError, ValueError, TypeError) as exc:
        raise ProviderError(f"the provider's key set cannot be read: {exc}") from exc
    try:
        decoded = jwt.decode(token, keys, algorithms=ALGORITHMS)
    except (JoseError, ValueError) as exc:
        raise ProviderError(f"the ID token's signature does not verify: {_said(exc)}") from exc
    claims = decoded.claims
    registry = jwt.JWTClaimsRegistry(
        leeway=LEEWAY,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": client_id},
        sub={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
        nonce={"essential": True, "value": nonce},
    )
    try:
        registry.validate(claims)
    except JoseError as exc:
        raise ProviderError(f"the ID token is refused: {_said(exc)}") from exc
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if len(audiences) > 1 and claims.get("azp") != client_id:
        raise ProviderError("the ID token is refused: it was issued to another client (azp)")
    if claims["iat"] < time.time() - MAX_AGE - LEEWAY:
        raise ProviderError("the ID token is refused: it was issued too long ago")
    if not isinstance(claims["sub"], str) or not 0 < len(claims["sub"]) <= 255:
        raise ProviderError("the ID token is refused: its subject is not a short string")
    return dict(claims)


def _said(exc: Exception) -> str:
    return (getattr(exc, "description", None) or str(exc) or type(exc).__name__)[:200]
