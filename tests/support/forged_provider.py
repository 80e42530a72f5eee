"""A hostile OpenID Connect provider on loopback: it speaks the protocol (discovery, keys,
authorization, token, userinfo) but hands out the ID tokens a test tells it to forge: a
wrong audience or issuer, expired, signed by a key it does not publish, a nonce from an
earlier sign-in. The real provider (`oidc_provider`) never does; an attacker who stands
in for one, or a provider set up wrong, does."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey

#: Changes the claims of the next ID token (they are passed in and returned).
Tamper = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class ForgedProvider:
    client_id: str = "stackyard"
    client_secret: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    key: RSAKey = field(default_factory=lambda: RSAKey.generate_key(2048, {"kid": "good"}))
    #: What the next ID tokens look like: their claims changed, signed by another key.
    tamper: Tamper = lambda claims: claims
    sign_with: RSAKey | OctKey | None = None
    algorithm: str = "RS256"
    #: Every ID token handed out, oldest first.
    issued: list[str] = field(default_factory=list)
    nonces: dict[str, str] = field(default_factory=dict)  # code -> nonce
    #: Changes to its discovery document (another issuer, endpoints elsewhere).
    discovery: dict[str, str] = field(default_factory=dict)
    server: ThreadingHTTPServer | None = None

    @property
    def issuer(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def id_token(self, nonce: str) -> str:
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": "mallory-1",
            "aud": self.client_id,
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
            "preferred_username": "mallory",
            "groups": ["admins"],
        }
        key = self.sign_with or self.key
        header = {"alg": self.algorithm, "kid": key.kid or "none"}
        token = jwt.encode(header, self.tamper(claims), key, algorithms=[self.algorithm])
        self.issued.append(token)
        return token


def _handler(provider: ForgedProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _json(self, doc: dict[str, Any], status: int = 200) -> None:
            body = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            base = provider.issuer
            if url.path == "/.well-known/openid-configuration":
                self._json(
                    {
                        "issuer": base,
                        "authorization_endpoint": f"{base}/authorize",
                        "token_endpoint": f"{base}/token",
                        "jwks_uri": f"{base}/jwks",
                        "userinfo_endpoint": f"{base}/userinfo",
                    }
                    | provider.discovery
                )
            elif url.path == "/huge":  # an answer no key set needs
                self._json({"keys": [], "padding": "x" * (2 * 1024 * 1024)})
            elif url.path == "/jwks":
                self._json({"keys": [provider.key.as_dict(private=False)]})
            elif url.path == "/authorize":  # signed in at once: no page
                code = secrets.token_urlsafe(12)
                provider.nonces[code] = query["nonce"]
                back = urlencode({"code": code, "state": query["state"]})
                self.send_response(303)
                self.send_header("Location", f"{query['redirect_uri']}?{back}")
                self.end_headers()
            elif url.path == "/userinfo":
                self._json({"sub": "mallory-1", "groups": ["admins"]})
            else:
                self._json({"error": "not_found"}, 404)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            nonce = provider.nonces.pop(form.get("code", ""), None)
            if nonce is None:
                self._json({"error": "invalid_grant"}, 400)
                return
            token = provider.id_token(nonce)
            self._json({"access_token": "at", "token_type": "Bearer", "id_token": token})

    return Handler


@pytest.fixture(scope="module")
def forged_provider() -> Iterator[ForgedProvider]:
    """One per module: a test sets `tamper`, `sign_with` and `algorithm` for itself."""
    provider = ForgedProvider()
    provider.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(provider))
    thread = threading.Thread(target=provider.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        provider.server.shutdown()
        provider.server.server_close()
