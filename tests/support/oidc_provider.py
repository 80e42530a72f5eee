"""A real OpenID Connect provider for tests: oidc-provider 9 (Node) on loopback, from
tests/support/oidc/ (its node_modules come from ``scripts/setup.sh --test``).

* :class:`OidcProvider`: one confidential client (``client_id``/``client_secret``,
  generated), the authorization code flow with PKCE (S256, required), ``client_secret_basic``
  (or ``client_secret_post``) at the token endpoint, scopes ``openid profile email groups``,
  RP-initiated logout. The ID token's only user claim is ``sub`` (beside ``iss``, ``aud``,
  ``nonce``, ``iat``, ``exp``): profile, email and groups come from the userinfo endpoint. Accounts
  (:meth:`~OidcProvider.set_account`) are read again at every lookup, so a change shows at
  the next sign-in or userinfo call without a restart. The provider keeps its sessions and
  codes in memory: a restart (:meth:`~OidcProvider.restart`, :meth:`~OidcProvider.rotate_keys`)
  signs everyone out of it.
* The ``relying_party`` and ``registered_provider`` fixtures (per module): a server of its
  own and a started provider with its addresses registered; :func:`use_provider` sets the
  server up to sign in through it.
* :func:`sign_in_through_provider` and :func:`sign_out_at_provider`: a user signing in
  and out with an ``httpx.Client`` through the provider's own pages. In a browser the
  pages are the same: the login page (title "Sign-in") has a text field ``login``
  (placeholder "Enter any login", no label), a password field ``password`` ("and password")
  and a button "Sign-in"; the logout page asks "Do you want to sign-out from
  127.0.0.1:PORT?" with the buttons "Yes, sign me out" and "No, stay signed in".

The provider's cookies (``_session``, ``_interaction``...) and the relying party's share the
host 127.0.0.1 (cookies ignore ports), in a browser as in an httpx client.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from joserfc.jwk import RSAKey

from tests.support.processes import free_port, stop_process
from tests.support.service import ServerProcess, service_env, start_server

OIDC_DIR = Path(__file__).parent / "oidc"
START_LIMIT = 20.0  # seconds for `ready`; the provider takes well under one
#: Redirects and pages one sign-in or sign-out may pass through before giving up.
MAX_STEPS = 20
PASSWORD = "any password"  # the dev login form accepts any password
_DERIVE: Any = object()  # a claim's default: derived from the account id


def _new_key() -> dict[str, Any]:
    """A private RSA signing key as a JWK, with a kid of its own. (joserfc rather than
    authlib.jose, which authlib 1.9 deprecates in its favour.)"""
    key = RSAKey.generate_key(
        2048,
        parameters={"kid": f"test-{secrets.token_hex(6)}", "alg": "RS256", "use": "sig"},
        private=True,
    )
    return key.as_dict(private=True)


def _write_json(path: Path, value: Any) -> None:
    """Whole or not at all: the provider may read the file at any moment."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(value, indent=2))
    os.replace(partial, path)


class OidcProvider:
    """A ``node provider.mjs`` process; its files (config, accounts, keys, log) in ``workdir``."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = port
        self.client_id = f"stackyard-{secrets.token_hex(4)}"
        self.client_secret = secrets.token_urlsafe(32)
        self.redirect_uris: list[str] = []
        self.post_logout_redirect_uris: list[str] = []
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / "provider.log"
        self._accounts: dict[str, dict[str, Any]] = {}
        self._keys = [_new_key()]
        _write_json(workdir / "accounts.json", self._accounts)

    @property
    def issuer(self) -> str:
        if self.port is None:
            raise RuntimeError("the provider has no port before its first start")
        return f"http://127.0.0.1:{self.port}"

    @property
    def kids(self) -> list[str]:
        return [key["kid"] for key in self._keys]

    def set_redirects(
        self, redirect_uris: Iterable[str], post_logout_redirect_uris: Iterable[str] = ()
    ) -> None:
        """The client's registered URIs: set before `start`, or follow with `restart`."""
        self.redirect_uris = list(redirect_uris)
        self.post_logout_redirect_uris = list(post_logout_redirect_uris)

    def set_account(
        self,
        account_id: str,
        groups: Iterable[str] = (),
        email: str | None = _DERIVE,
        email_verified: bool = True,
        name: str | None = _DERIVE,
        preferred_username: str | None = _DERIVE,
    ) -> None:
        """Add or change an account (its id is the ``sub``); effective at once. Unset claims
        are derived from the id (``ID@example.com``, ``Id``, ``ID``); None leaves one out."""
        claims = {
            "email": f"{account_id}@example.com" if email is _DERIVE else email,
            "email_verified": email_verified,
            "name": account_id.capitalize() if name is _DERIVE else name,
            "preferred_username": account_id
            if preferred_username is _DERIVE
            else preferred_username,
            "groups": list(groups),
        }
        self._accounts[account_id] = {k: v for k, v in claims.items() if v is not None}
        _write_json(self.workdir / "accounts.json", self._accounts)

    def remove_account(self, account_id: str) -> None:
        """The account no longer exists: its sign-in is refused, its userinfo fails."""
        del self._accounts[account_id]
        _write_json(self.workdir / "accounts.json", self._accounts)

    def rotate_keys(self) -> None:
        """Sign with a new key (new kid) from now on; the old one leaves the JWKS."""
        self._keys = [_new_key()]
        if self.process is not None:
            self.restart()

    def start(self) -> None:
        node = shutil.which("node")
        if node is None or not (OIDC_DIR / "node_modules" / "oidc-provider").is_dir():
            pytest.fail(
                "node or tests/support/oidc/node_modules is missing: run `scripts/setup.sh --test`",
                pytrace=False,
            )
        if self.port is None:
            self.port = free_port()
        client = {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "redirect_uris": self.redirect_uris,
            "post_logout_redirect_uris": self.post_logout_redirect_uris,
        }
        _write_json(self.workdir / "jwks.json", {"keys": self._keys})
        config = {
            "port": self.port,
            "issuer": self.issuer,
            "clients": [client],
            "accounts_file": str(self.workdir / "accounts.json"),
            "jwks_file": str(self.workdir / "jwks.json"),
        }
        _write_json(self.workdir / "config.json", config)
        # Files rather than pipes: nothing has to keep reading them while the test runs.
        ready_path = self.workdir / "provider.out"
        with open(ready_path, "wb") as out, open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [node, "provider.mjs", str(self.workdir / "config.json")],
                cwd=OIDC_DIR,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=log,
            )
        deadline = time.monotonic() + START_LIMIT
        while ready_path.read_text() != "ready\n":
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                tail = self.log_path.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the OIDC provider did not start on {self.issuer}:\n{tail}")
            time.sleep(0.05)

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None

    def restart(self) -> None:
        """Stop and start again on the same port (with the current redirects and keys)."""
        self.stop()
        self.start()


@pytest.fixture(scope="module")
def relying_party(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A `stackyard serve` of its own for a module of sign-in tests (its sign-in page
    offers the provider once one is set up)."""
    tmp_path = tmp_path_factory.mktemp("rp")
    (tmp_path / "stacks").mkdir()
    server = start_server(tmp_path, env=service_env(tmp_path))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def registered_provider(
    tmp_path_factory: pytest.TempPathFactory, relying_party: ServerProcess
) -> Iterator[OidcProvider]:
    """A started provider with the relying party's callback and post-logout addresses
    registered (no accounts yet; the relying party is not set up to use it yet)."""
    provider = OidcProvider(tmp_path_factory.mktemp("op"))
    url = relying_party.url
    provider.set_redirects([f"{url}/api/auth/oidc/callback"], [f"{url}/login"])
    provider.start()
    yield provider
    provider.stop()


#: The groups the tests' relying party maps to roles.
ROLES = [
    {"value": "stackyard-admins", "role": "admin"},
    {"value": "ops", "role": "operator"},
    {"value": "readers", "role": "viewer"},
]


def use_provider(admin: httpx.Client, provider: OidcProvider, **changes: Any) -> None:
    """Set the relying party up (through `admin`, signed in as an admin) to sign in
    through `provider`, named "Keycloak", with `ROLES`; `changes` to its settings."""
    config = {
        "enabled": True,
        "name": "Keycloak",
        "issuer": provider.issuer,
        "client_id": provider.client_id,
        "scopes": ["openid", "profile", "email", "groups"],
        "roles": ROLES,
        **changes,
    }
    body = {"config": config, "client_secret": provider.client_secret}
    answer = admin.put(
        "/api/identity-provider",
        json=body,
        headers={"X-CSRF-Token": admin.cookies["stackyard_csrf"]},
    )
    assert answer.status_code == 200, answer.text


# ------------------------------------------------------------- a user at the provider
class _Forms(HTMLParser):
    """The forms of a page: their action and fields, and the submit buttons that name them
    (the logout page's buttons sit outside its form, tied to it by ``form="..."``)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []
        self._open: dict[str, Any] | None = None
        self._buttons: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self._open = {"id": a.get("id"), "action": a.get("action") or "", "fields": []}
            self.forms.append(self._open)
        elif tag == "input" and a.get("name") and self._open is not None:
            self._open["fields"].append((a["name"], a.get("type") or "text", a.get("value")))
        elif tag == "button":
            self._buttons.append({**a, "inside": self._open["id"] if self._open else None})

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = None

    def buttons_of(self, form: dict[str, Any]) -> list[dict[str, str | None]]:
        return [b for b in self._buttons if form["id"] in (b.get("form"), b["inside"])]


def _forms(response: httpx.Response) -> _Forms:
    parser = _Forms()
    parser.feed(response.text)
    return parser


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def _next_url(response: httpx.Response) -> httpx.URL:
    return response.url.join(response.headers["location"])


def _unexpected(response: httpx.Response, doing: str) -> AssertionError:
    return AssertionError(
        f"{doing}: unexpected {response.status_code} at {response.url}:\n{response.text[:1500]}"
    )


def sign_in_through_provider(
    client: httpx.Client, start_url: str, account_id: str, first: httpx.Response | None = None
) -> httpx.Response:
    """Sign `account_id` in as a browser would, in `client` (whose cookies carry the
    session): GET `start_url` (the relying party's, redirecting to the provider; `first`:
    its answer, when the test asked for it itself and goes on from there later), fill in
    the provider's login form when it shows one (a session at the provider skips it), and
    follow the provider's redirects up to the first URL off the provider: the relying
    party's callback. Returns the response of that callback request, with
    ``follow_redirects=False`` semantics: its own redirect is not followed, so its Location
    and Set-Cookie are there to inspect. Fails if the provider shows anything else (an
    error page, or the login form again: an unknown account)."""
    response = first or client.get(start_url, follow_redirects=False)
    provider: tuple[str, str, int | None] | None = None  # the first origin not the RP's
    signed_in = False
    for _ in range(MAX_STEPS):
        if response.is_redirect:
            url = _next_url(response)
            if provider is None and _origin(url) != _origin(httpx.URL(start_url)):
                provider = _origin(url)
            if provider is not None and _origin(url) != provider:
                return client.get(url, follow_redirects=False)
            response = client.get(url, follow_redirects=False)
            continue
        forms = _forms(response)
        login = next(
            (f for f in forms.forms if any(t == "password" for _, t, _ in f["fields"])), None
        )
        if provider is None or response.status_code != 200 or login is None:
            raise _unexpected(response, f"signing {account_id!r} in")
        if signed_in:
            raise AssertionError(f"the provider refused the sign-in of {account_id!r}")
        values = {"text": account_id, "password": PASSWORD}
        data = {name: values.get(kind, value or "") for name, kind, value in login["fields"]}
        response = client.post(
            response.url.join(login["action"]), data=data, follow_redirects=False
        )
        signed_in = True
    raise AssertionError(f"signing {account_id!r} in: more than {MAX_STEPS} steps")


def sign_out_at_provider(client: httpx.Client, end_session_url: str) -> httpx.Response:
    """End the session at the provider as a browser would: GET `end_session_url` (the
    provider's end_session_endpoint with the relying party's parameters), answer "Yes, sign
    me out" on the provider's logout page, and return the provider's redirect to the
    ``post_logout_redirect_uri``, not followed (``follow_redirects=False`` semantics).
    oidc-provider drops a ``post_logout_redirect_uri`` sent without ``client_id`` or
    ``id_token_hint``, and then ends on its own "Sign-out Success" page: that fails here."""
    provider = _origin(httpx.URL(end_session_url))
    response = client.get(end_session_url, follow_redirects=False)
    for _ in range(MAX_STEPS):
        if response.is_redirect:
            if _origin(_next_url(response)) != provider:
                return response
            response = client.get(_next_url(response), follow_redirects=False)
            continue
        forms = _forms(response)
        if response.status_code != 200 or len(forms.forms) != 1:
            raise _unexpected(response, "signing out")
        # The logout page (or, with no session there, a page that posts itself at once).
        form = forms.forms[0]
        data = {name: value or "" for name, _, value in form["fields"]}
        for button in forms.buttons_of(form):
            if button.get("name") == "logout" and button.get("value") == "yes":
                data["logout"] = "yes"
        response = client.post(response.url.join(form["action"]), data=data, follow_redirects=False)
    raise AssertionError(f"signing out: more than {MAX_STEPS} steps")
