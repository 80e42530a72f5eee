"""A real image registry (Debian's ``docker-registry``, distribution 2.8) for tests.

Fixtures (session scope):

* ``registry``: no auth, filesystem storage in a temp dir, deletes enabled, on
  ``127.0.0.1:<free port>`` (the engine treats 127.0.0.0/8 as insecure, so plain HTTP
  pushes work).
* ``token_registry``: the same with ``auth: token``; the fixture serves the token
  endpoint itself (a thread HTTP server on another loopback port) and issues RS256
  JWTs signed with a key whose self-signed certificate is the registry's
  ``rootcertbundle``. Anonymous token requests are granted what they ask for;
  ``token_registry.users`` (name -> password) adds Basic-auth accounts and
  ``token_registry.allow_anonymous = False`` refuses anonymous ones. Every token
  request is recorded in ``token_registry.token_requests``.

Both yield a :class:`Registry` with ``.host`` ("127.0.0.1:PORT"), ``.url`` and
``.push(local_image, repo, tag) -> digest``. Needs the ``docker_client`` fixture
(``tests.support.docker``) and, for ``token_registry``, the ``openssl`` command.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.processes import free_port, stop_process
from tests.support.waiting import wait_until

REGISTRY_BIN = "docker-registry"
TOKEN_SERVICE = "stackyard-test-registry"
TOKEN_ISSUER = "stackyard-test-token-issuer"
MANIFEST_ACCEPT = ", ".join(
    [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.oci.image.manifest.v1+json",
    ]
)


#: Requests of the tests' own that tell when the access log has caught up.
_MARKER = "/v2/stackyard-test-marker/"
_ACCESS = re.compile(r'"(GET|HEAD|PUT|POST|PATCH|DELETE) (\S+) HTTP/[\d.]+"')


def _q(value: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(value)


class Registry:
    """A running ``docker-registry serve`` process."""

    def __init__(self, root: Path, client: Any, auth_yaml: str = "") -> None:
        self.root = root
        self.client = client
        self.auth_yaml = auth_yaml
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = root / "registry.log"
        self._pushed: list[str] = []

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def requests(self) -> list[tuple[str, str]]:
        """(method, path) of every request the registry answered before this call, from its
        access log. Each line is written just after its answer, so a marker request is sent
        and waited for first: once the log holds it, it holds all that came before."""
        marker = f"{_MARKER}{uuid.uuid4().hex}"
        httpx.get(self.url + marker, timeout=30)

        def logged() -> list[tuple[str, str]] | None:
            found = _ACCESS.findall(self.log_path.read_text(errors="replace"))
            return found if ("GET", marker) in found else None

        found = wait_until(logged, what=f"{marker} in the registry's access log")
        return [request for request in found if not request[1].startswith(_MARKER)]

    def _write_config(self) -> Path:
        storage = self.root / "storage"
        storage.mkdir(exist_ok=True)
        config = self.root / "config.yml"
        config.write_text(
            "version: 0.1\n"
            "log:\n"
            "  level: info\n"
            "  formatter: text\n"
            "storage:\n"
            "  filesystem:\n"
            f"    rootdirectory: {_q(str(storage))}\n"
            "  delete:\n"
            "    enabled: true\n"
            "  maintenance:\n"
            "    uploadpurging:\n"
            "      enabled: false\n"
            "http:\n"
            f"  addr: {_q(self.host)}\n"
            f"  secret: {_q(secrets.token_hex(16))}\n"
            "health:\n"
            "  storagedriver:\n"
            "    enabled: false\n" + self.auth_yaml
        )
        return config

    def start(self, timeout: float = 30.0) -> None:
        exe = shutil.which(REGISTRY_BIN)
        if exe is None:
            pytest.fail(
                f"`{REGISTRY_BIN}` not found: run `scripts/setup.sh --test` "
                "(installs Debian's docker-registry)",
                pytrace=False,
            )
        last_error = ""
        for _attempt in range(3):  # a fresh port if another process took ours
            self.port = free_port()
            config = self._write_config()
            log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the process
            self.process = subprocess.Popen(
                [exe, "serve", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.root,
            )
            log.close()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    last_error = f"exited with {self.process.returncode}"
                    break
                try:
                    r = httpx.get(f"{self.url}/v2/", timeout=2)
                    if r.status_code in (200, 401):
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            else:
                last_error = f"GET /v2/ did not answer within {timeout}s"
                self.stop()
                break
        tail = self.log_path.read_text(errors="replace")[-3000:]
        pytest.fail(f"docker-registry did not start: {last_error}\n{tail}", pytrace=False)

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None

    def push(self, local_image: str, repo: str, tag: str) -> str:
        """Tag ``local_image`` as ``HOST/repo:tag``, push it with the engine and return
        the pushed manifest digest (``sha256:...``)."""
        ref = f"{self.host}/{repo}"
        image = self.client.images.get(local_image)
        if not image.tag(ref, tag):
            raise RuntimeError(f"could not tag {local_image} as {ref}:{tag}")
        self._pushed.append(f"{ref}:{tag}")
        digest = None
        for line in self.client.images.push(ref, tag=tag, stream=True, decode=True):
            if line.get("error"):
                raise RuntimeError(f"push of {ref}:{tag} failed: {line['error']}")
            aux = line.get("aux") or {}
            if aux.get("Digest"):
                digest = aux["Digest"]
        if not digest:
            raise RuntimeError(f"push of {ref}:{tag} reported no digest")
        return digest

    def untag_pushed(self) -> None:
        """Drop every local reference to this registry (``HOST/...``): the tags made by
        :meth:`push` and the tags and digest references that pulls from it left."""
        prefix = f"{self.host}/"
        # The listing as the engine gives it: the SDK's `images.list()` inspects each
        # image after listing, and fails when another test process removed one meanwhile.
        for image in self.client.api.images():
            refs = [*(image.get("RepoTags") or []), *(image.get("RepoDigests") or [])]
            for ref in refs:
                if ref.startswith(prefix):
                    with contextlib.suppress(Exception):  # already gone, or in use: fine
                        self.client.images.remove(ref, noprune=True)
        self._pushed.clear()


# ----------------------------------------------------------------- token auth
def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def libtrust_key_id(public_key_der: bytes) -> str:
    """The key id distribution (libtrust) derives from a public key: base32 of the
    first 240 bits of SHA-256 over the DER SubjectPublicKeyInfo, in groups of 4."""
    s = base64.b32encode(hashlib.sha256(public_key_der).digest()[:30]).decode().rstrip("=")
    return ":".join(s[i : i + 4] for i in range(0, len(s), 4))


class TokenIssuer:
    """An RSA key, its self-signed certificate and an RS256 JWT signer, all done with
    the ``openssl`` command (no extra Python dependency)."""

    def __init__(self, directory: Path) -> None:
        self.openssl = shutil.which("openssl")
        if self.openssl is None:
            pytest.fail(
                "token_registry needs the `openssl` command: run `scripts/setup.sh --test`",
                pytrace=False,
            )
        self.key_path = directory / "token-key.pem"
        self.cert_path = directory / "token-root.pem"
        self._openssl(
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-sha256",
            "-keyout",
            str(self.key_path),
            "-out",
            str(self.cert_path),
            "-days",
            "2",
            "-subj",
            f"/CN={TOKEN_ISSUER}",
        )
        der = self._openssl("pkey", "-in", str(self.key_path), "-pubout", "-outform", "DER")
        self.kid = libtrust_key_id(der)

    def _openssl(self, *args: str, data: bytes | None = None) -> bytes:
        proc = subprocess.run(
            [str(self.openssl), *args],
            input=data,
            capture_output=True,
            timeout=60,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"openssl {args[0]} failed: {proc.stderr.decode(errors='replace')}")
        return proc.stdout

    def sign(self, claims: dict[str, Any]) -> str:
        header = {"typ": "JWT", "alg": "RS256", "kid": self.kid}
        signing_input = (
            _b64url(json.dumps(header, separators=(",", ":")).encode())
            + "."
            + _b64url(json.dumps(claims, separators=(",", ":")).encode())
        )
        # RSASSA-PKCS1-v1_5 with SHA-256, i.e. JWS "RS256".
        signature = self._openssl(
            "dgst", "-sha256", "-sign", str(self.key_path), data=signing_input.encode()
        )
        return signing_input + "." + _b64url(signature)


def parse_scope(scope: str) -> dict[str, Any] | None:
    """``repository:name/with:colon?:pull,push`` -> access entry (name may hold ':')."""
    try:
        rtype, rest = scope.split(":", 1)
        name, actions = rest.rsplit(":", 1)
    except ValueError:
        return None
    return {"type": rtype, "name": name, "actions": [a for a in actions.split(",") if a]}


class TokenRegistry(Registry):
    """A registry with ``auth: token`` and the token endpoint that serves it."""

    def __init__(self, root: Path, client: Any) -> None:
        super().__init__(root, client)
        self.issuer = TokenIssuer(root)
        self.users: dict[str, str] = {}
        self.allow_anonymous = True
        self.token_ttl = 300
        self.token_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self.token_port = self._server.server_address[1]
        self.realm = f"http://127.0.0.1:{self.token_port}/token"
        self.service = TOKEN_SERVICE
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="token-endpoint", daemon=True
        )
        self.auth_yaml = (
            "auth:\n"
            "  token:\n"
            f"    realm: {_q(self.realm)}\n"
            f"    service: {_q(self.service)}\n"
            f"    issuer: {_q(TOKEN_ISSUER)}\n"
            f"    rootcertbundle: {_q(str(self.issuer.cert_path))}\n"
        )

    @property
    def token_request_count(self) -> int:
        with self._lock:
            return len(self.token_requests)

    def reset_token_requests(self) -> None:
        with self._lock:
            self.token_requests.clear()

    def start(self, timeout: float = 30.0) -> None:
        self._thread.start()
        super().start(timeout)

    def stop(self) -> None:
        super().stop()
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def issue(self, account: str, scopes: list[str]) -> str:
        now = int(time.time())
        access = [a for a in (parse_scope(s) for s in scopes) if a]
        claims = {
            "iss": TOKEN_ISSUER,
            "sub": account,
            "aud": self.service,
            "exp": now + self.token_ttl,
            "nbf": now - 10,
            "iat": now,
            "jti": uuid.uuid4().hex,
            "access": access,
        }
        return self.issuer.sign(claims)

    def _authorize(self, header: str | None) -> tuple[bool, str]:
        """(allowed, account) for an Authorization header (or None)."""
        if not header:
            return self.allow_anonymous, ""
        if not header.lower().startswith("basic "):
            return False, ""
        try:
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return False, ""
        return self.users.get(user) == password and user in self.users, user

    def _handler_class(self):
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _reply(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 401:
                    self.send_header("WWW-Authenticate", 'Basic realm="stackyard-test"')
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                auth = self.headers.get("Authorization")
                allowed, account = owner._authorize(auth)
                record = {
                    "path": url.path,
                    "service": (query.get("service") or [""])[0],
                    "scopes": query.get("scope", []),
                    "account": account,
                    "authorization": bool(auth),
                    "granted": False,
                }
                # Record before replying: a client that has its answer sees its request.
                if url.path != "/token":
                    status, body = 404, {"errors": [{"code": "NOT_FOUND"}]}
                elif record["service"] != owner.service:
                    status, body = 400, {"errors": [{"code": "UNSUPPORTED", "message": "service"}]}
                elif not allowed:
                    status, body = 401, {"errors": [{"code": "UNAUTHORIZED"}]}
                else:
                    token = owner.issue(account, record["scopes"])
                    record["granted"] = True
                    status, body = (
                        200,
                        {
                            "token": token,
                            "access_token": token,
                            "expires_in": owner.token_ttl,
                            "issued_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        },
                    )
                with owner._lock:
                    owner.token_requests.append(record)
                self._reply(status, body)

        return Handler


def _tempdir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))


@contextlib.contextmanager
def _running(kind: type[Registry], prefix: str, client) -> Iterator[Registry]:
    """A started registry of `kind` in a fresh folder; stopped, untagged, removed after."""
    root = _tempdir(prefix)
    reg = None
    try:
        reg = kind(root, client)
        reg.start()
        yield reg
    finally:
        if reg is not None:
            reg.stop()
            reg.untag_pushed()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def registry(docker_client) -> Iterator[Registry]:
    """A plain registry on 127.0.0.1:<free port>, no auth."""
    with _running(Registry, "stackyard-registry-", docker_client) as reg:
        yield reg


@pytest.fixture(scope="session")
def token_registry(docker_client) -> Iterator[TokenRegistry]:
    """A registry with ``auth: token`` and its own token endpoint (see module doc)."""
    with _running(TokenRegistry, "stackyard-token-registry-", docker_client) as reg:
        yield reg  # type: ignore[misc]
