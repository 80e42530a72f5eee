"""Real receivers on loopback for what Stackyard delivers: mail, webhooks, and HTTPS to a
public name, none of it leaving the machine.

* ``TestCA``: a certificate authority made for the test, and server certificates it
  signs for any names (always with the IP 127.0.0.1): a client trusts a receiver through
  the CA's file (``verify=``, ``REQUESTS_CA_BUNDLE`` for requests and so Apprise,
  ``SSL_CERT_FILE`` for httpx and ``ssl.create_default_context()``).
* ``SmtpReceiver``: aiosmtpd's SMTP server, plain, with STARTTLS or with implicit TLS,
  optionally requiring AUTH (LOGIN or PLAIN) with one user; it keeps every mail.
* ``HttpReceiver``: an HTTP(S) server that records every request and answers as told:
  a status and JSON by path, the next few requests failing, every answer late.
* ``ConnectProxy``: an HTTPS proxy that tunnels every ``CONNECT``, whatever host it
  names, to one loopback receiver: a client that calls ``https://discord.com/...``
  through it reaches an ``HttpReceiver`` holding a ``discord.com`` certificate from the
  ``TestCA``, so a notification to a public service is checked end to end, offline.
* ``loopback_only``: while it is on, this process resolves and connects to loopback
  only (a test whose proxy was not used fails instead of reaching the real service).

Every receiver binds a free port on 127.0.0.1, starts on construction, is a context
manager, and stops on ``close()``, ending its threads and open connections.
"""

from __future__ import annotations

import contextlib
import datetime
import email
import email.policy
import ipaddress
import itertools
import json
import re
import socket
import socketserver
import ssl
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import parse_qs, urlsplit

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.support.waiting import NotInTime

HOST = "127.0.0.1"
#: Seconds a receiver waits, by default, for what it expects to receive.
WAIT = 10.0

T = TypeVar("T")


class _Inbox(Generic[T]):
    """What a receiver received, appended from its server's threads and waited for from
    the test's."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._items: list[T] = []
        self._arrived = threading.Condition()

    def add(self, item: T) -> None:
        with self._arrived:
            self._items.append(item)
            self._arrived.notify_all()

    def items(self) -> list[T]:
        with self._arrived:
            return list(self._items)

    def clear(self) -> None:
        with self._arrived:
            self._items.clear()

    def wait_for(self, count: int, timeout: float) -> list[T]:
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self._items) >= count, timeout):
                raise NotInTime(
                    f"{count} {self._what}: not within {timeout:g} s (got {self._items!r})"
                )
            return list(self._items)


# ---------------------------------------------------------------------------- certificates


class TestCA:
    """A certificate authority of the test's own, its certificate in `ca_pem`; it issues
    server certificates into `directory` (EC P-256 keys: made in a millisecond)."""

    __test__ = False  # pytest: a class, named Test..., imported into test modules

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self._key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Stackyard Test CA")])
        self._name = name
        public = self._key.public_key()
        self._cert = (
            self._builder(name, public)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_key_usage(signs_certificates=True), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.ca_pem = directory / "ca.pem"
        self.ca_pem.write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))
        self._serial = itertools.count(1)

    def _builder(
        self, subject: x509.Name, public: ec.EllipticCurvePublicKey
    ) -> x509.CertificateBuilder:
        now = datetime.datetime.now(datetime.UTC)
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._name)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        )

    def issue(self, names: list[str]) -> tuple[Path, Path]:
        """A server certificate for the DNS names (or IPs) `names` and 127.0.0.1: the
        paths of its PEM certificate and its unencrypted PEM key."""
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0] if names else HOST)])
        alternatives: list[x509.GeneralName] = [
            x509.IPAddress(ipaddress.ip_address(HOST)),
            *(_general_name(name) for name in names if name != HOST),
        ]
        ca_key_id = self._cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
        cert = (
            self._builder(subject, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(signs_certificates=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_key_id.value),
                critical=False,
            )
            .sign(self._key, hashes.SHA256())
        )
        serial = next(self._serial)
        cert_path = self.directory / f"server-{serial}.pem"
        key_path = self.directory / f"server-{serial}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return cert_path, key_path

    def server_context(self, names: list[str]) -> ssl.SSLContext:
        """A server's TLS context presenting a new certificate for `names` (and
        127.0.0.1); it asks no certificate of clients."""
        return _server_context(self.issue(names))

    def client_context(self) -> ssl.SSLContext:
        """A client's TLS context that trusts this CA only (and checks host names)."""
        return ssl.create_default_context(cafile=str(self.ca_pem))


def _key_usage(signs_certificates: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs_certificates,
        crl_sign=signs_certificates,
        encipher_only=False,
        decipher_only=False,
    )


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def _server_context(tls: tuple[Path, Path]) -> ssl.SSLContext:
    # Not ssl.create_default_context(), which loads the system's CAs (to check clients'
    # certificates, never asked for here): 40 ms.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*tls)
    return context


# -------------------------------------------------------------------------------------- SMTP

SmtpMode = Literal["plain", "starttls", "tls"]


@dataclass(frozen=True)
class Mail:
    """One mail as delivered: the envelope, the parsed message, who signed in (None: no
    one) and whether it came over TLS (implicit or after STARTTLS)."""

    mail_from: str
    rcpt_tos: tuple[str, ...]
    message: EmailMessage
    login: str | None
    tls: bool


class _SmtpHandler:
    """aiosmtpd's handler: refuses MAIL before AUTH when a user is required, keeps mail."""

    def __init__(self, receiver: SmtpReceiver) -> None:
        self.receiver = receiver

    async def handle_MAIL(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        # Checked here rather than by aiosmtpd's `auth_required`, which warns (a
        # UserWarning at every connection) unless AUTH also requires STARTTLS.
        if self.receiver.user is not None and not session.authenticated:
            return "530 5.7.0 Authentication required"
        envelope.mail_from = address
        envelope.mail_options.extend(options)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        assert envelope.original_content is not None and envelope.mail_from is not None
        login = session.auth_data.login if isinstance(session.auth_data, LoginPassword) else None
        self.receiver._mails.add(
            Mail(
                mail_from=envelope.mail_from,
                rcpt_tos=tuple(envelope.rcpt_tos),
                # Lines end in CRLF on the wire; in LF as the sender wrote them.
                message=email.message_from_bytes(
                    envelope.original_content.replace(b"\r\n", b"\n"),
                    policy=email.policy.default,
                ),
                login=login.decode() if login is not None else None,
                tls=self.receiver.mode == "tls" or session.ssl is not None,
            )
        )
        return "250 Message accepted for delivery"


class _BoundController(Controller):
    """aiosmtpd's threaded controller on a listening socket bound beforehand: its own
    takes a port number, and a free port found first could be taken by another test
    worker before it binds."""

    def __init__(self, handler: _SmtpHandler, listener: socket.socket, **kwargs: Any) -> None:
        self._listener = listener
        super().__init__(handler, hostname=HOST, port=listener.getsockname()[1], **kwargs)

    def _create_server(self) -> Any:
        return self.loop.create_server(
            self._factory_invoker, sock=self._listener, ssl=self.ssl_context
        )


class SmtpReceiver:
    """An SMTP server on 127.0.0.1 that keeps every mail it is given.

    `mode`: ``"plain"`` (no TLS), ``"starttls"`` (TLS offered by STARTTLS and required
    before MAIL or AUTH: a client that does not upgrade is refused) or ``"tls"``
    (implicit TLS, as on port 465); the TLS modes present a certificate from `ca` for
    `names` and 127.0.0.1. With a `user`, MAIL is refused until the client signs in as
    that user with `password` (AUTH LOGIN or PLAIN); without one, every AUTH fails.
    """

    def __init__(
        self,
        mode: SmtpMode = "plain",
        ca: TestCA | None = None,
        *,
        user: str | None = None,
        password: str | None = None,
        names: tuple[str, ...] = ("localhost",),
    ) -> None:
        if mode != "plain" and ca is None:
            raise ValueError(f"SMTP mode {mode!r} needs a TestCA for its certificate")
        if (user is None) != (password is None):
            raise ValueError("give both a user and a password, or neither")
        self.mode = mode
        self.user = user
        self.password = password
        self.host = HOST
        self._mails: _Inbox[Mail] = _Inbox("mail(s)")
        # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say so (with
        # proto 0, Nagle holds each line of a multi-line reply for the client's ACK: 40 ms).
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        listener.bind((HOST, 0))
        listener.listen()
        self.port: int = listener.getsockname()[1]
        context = ca.server_context(list(names)) if ca is not None else None
        self._controller = _BoundController(
            _SmtpHandler(self),
            listener,
            # The name in the greeting; aiosmtpd's default is socket.getfqdn(), a DNS
            # lookup at every connection.
            server_hostname=names[0] if names else "localhost",
            ssl_context=context if mode == "tls" else None,
            tls_context=context if mode == "starttls" else None,
            require_starttls=mode == "starttls",
            # aiosmtpd counts only STARTTLS as TLS: with True under implicit TLS, it
            # would neither offer AUTH nor accept it.
            auth_require_tls=mode == "starttls",
            authenticator=self._authenticate,
        )
        try:
            self._controller.start()
        except BaseException:
            listener.close()
            raise

    def _authenticate(
        self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        if (
            self.user is not None
            and self.password is not None
            and isinstance(data, LoginPassword)
            and data.login == self.user.encode()
            and data.password == self.password.encode()
        ):
            return AuthResult(success=True, auth_data=data)
        return AuthResult(success=False, handled=False)

    @property
    def mails(self) -> list[Mail]:
        """The mails received so far, oldest first."""
        return self._mails.items()

    def wait_for(self, count: int, timeout: float = WAIT) -> list[Mail]:
        """Every mail received, once there are at least `count` of them."""
        return self._mails.wait_for(count, timeout)

    def clear(self) -> None:
        """Forget the mails received so far."""
        self._mails.clear()

    def close(self) -> None:
        if self._controller.loop.is_running():
            self._controller.stop()

    def __enter__(self) -> SmtpReceiver:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# ------------------------------------------------------------------------- threaded servers


class _Server(socketserver.ThreadingTCPServer):
    """A threaded TCP server on a free loopback port that can be closed while requests
    are under way: it keeps every open connection, so `close` shuts them (waking the
    threads that wait on them) and then joins those threads. With `tls`, each
    connection's handshake happens in its own thread (a client that stalls in it holds
    no one else up)."""

    daemon_threads = False
    block_on_close = True

    def __init__(
        self, handler: type[socketserver.BaseRequestHandler], tls: ssl.SSLContext | None = None
    ) -> None:
        super().__init__((HOST, 0), handler)
        self.port: int = self.server_address[1]
        self.tls = tls
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def track(self, sock: socket.socket) -> bool:
        """Keep `sock` to shut at `close`: False when closing already."""
        with self._lock:
            if self.closing.is_set():
                return False
            self._open.add(sock)
            return True

    def untrack(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)

    def process_request(self, request: Any, client_address: Any) -> None:
        if self.track(request):
            super().process_request(request, client_address)
        else:
            self.shutdown_request(request)

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        with self._lock:  # wrapping detaches `request`: `close` must see the new socket
            if self.closing.is_set():
                return
            tls = self.tls.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
            self._open.discard(request)
            self._open.add(tls)
        try:
            tls.do_handshake()
            super().finish_request(tls, client_address)
        finally:
            self.untrack(tls)
            tls.close()

    def shutdown_request(self, request: Any) -> None:
        self.untrack(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away (gave up on a slow answer, refused the certificate) or
        # a connection cut by `close` is no error of the server's.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)

    def close(self) -> None:
        if self.closing.is_set():
            return
        self.shutdown()  # no more accepting
        with self._lock:
            self.closing.set()
            open_ = list(self._open)
        for sock in open_:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.server_close()  # joins the requests' threads
        self._thread.join()


# -------------------------------------------------------------------------------------- HTTP


@dataclass(frozen=True)
class Received:
    """One request as the receiver read it: `path` without the query, `query` parsed
    (blank values kept), header names in lower case (repeated headers joined by ", ")."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...] = ()


def _json_answer(status: int, body: object | None) -> _Answer:
    return _Answer(status, json.dumps({} if body is None else body).encode(), "application/json")


class _HttpHandler(BaseHTTPRequestHandler):
    server: _HttpServer
    protocol_version = "HTTP/1.1"  # but each connection carries one request (see _serve)
    disable_nagle_algorithm = True  # the head and the body are two writes

    def _serve(self) -> None:
        receiver = self.server.receiver
        body = self._body()
        url = urlsplit(self.path)
        headers: dict[str, str] = {}
        for name, value in self.headers.items():
            name = name.lower()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        received = Received(
            self.command, url.path, parse_qs(url.query, keep_blank_values=True), headers, body
        )
        answer = receiver._answer(received)
        if receiver.delay > 0 and self.server.closing.wait(receiver.delay):
            return
        self.close_connection = True
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value)
        bodiless = answer.status in (204, 304) or answer.status < 200
        if not bodiless:
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if not bodiless and self.command != "HEAD":
            self.wfile.write(answer.body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip(), 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
                pass
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HttpServer(_Server):
    def __init__(self, receiver: HttpReceiver, tls: ssl.SSLContext | None) -> None:
        self.receiver = receiver
        super().__init__(_HttpHandler, tls)


class HttpReceiver:
    """An HTTP server on 127.0.0.1 (HTTPS with `tls`, a certificate and key from
    `TestCA.issue`) that records every request and answers 200 with ``{}`` unless told
    otherwise by `respond`, `fail_next` or `delay` (seconds every answer waits: a slow
    channel; the request is recorded on arrival, before the wait). Each connection
    carries one request (the answer says ``Connection: close``)."""

    def __init__(self, tls: tuple[Path, Path] | None = None) -> None:
        self.delay: float = 0.0
        self._requests: _Inbox[Received] = _Inbox("request(s)")
        self._lock = threading.Lock()
        self._rules: list[tuple[re.Pattern[str], _Answer]] = []
        self._failures: list[_Answer] = []
        self._server = _HttpServer(self, _server_context(tls) if tls is not None else None)
        self.port = self._server.port
        self.url = f"{'https' if tls else 'http'}://{HOST}:{self.port}"

    def stop_failing(self) -> None:
        """Forget the failures `fail_next` arranged and not answered yet."""
        with self._lock:
            self._failures.clear()

    def respond(
        self,
        path_regex: str,
        status: int = 200,
        json_body: object | None = None,
        text: str | None = None,
    ) -> None:
        """Answer requests whose path (without the query) `path_regex` matches
        (`re.search`: anchor it to match the whole path) with `status` and `json_body`
        (None: ``{}``; no body at all with 204 or 304), or the plain `text` when given.
        The latest matching rule wins."""
        answer = (
            _json_answer(status, json_body)
            if text is None
            else _Answer(status, text.encode(), "text/plain; charset=utf-8", ())
        )
        with self._lock:
            self._rules.append((re.compile(path_regex), answer))

    def fail_next(
        self,
        n: int,
        status: int = 500,
        body: str = "failure arranged by the test",
        headers: dict[str, str] | None = None,
    ) -> None:
        """Make the next `n` requests, whatever their path, fail with `status`, the text
        `body` and `headers` (such as Retry-After); then answer as before."""
        answer = _Answer(
            status, body.encode(), "text/plain; charset=utf-8", tuple((headers or {}).items())
        )
        with self._lock:
            self._failures.extend([answer] * n)

    def _answer(self, received: Received) -> _Answer:
        """Record `received` and choose its answer."""
        self._requests.add(received)
        with self._lock:
            if self._failures:
                return self._failures.pop(0)
            for pattern, answer in reversed(self._rules):
                if pattern.search(received.path):
                    return answer
        return _json_answer(200, None)

    @property
    def requests(self) -> list[Received]:
        """The requests received so far, oldest first."""
        return self._requests.items()

    def wait_for(self, count: int, timeout: float = WAIT) -> list[Received]:
        """Every request received, once there are at least `count` of them."""
        return self._requests.wait_for(count, timeout)

    def clear(self) -> None:
        """Forget the requests received so far (the answers set stay)."""
        self._requests.clear()

    def close(self) -> None:
        self._server.close()

    def __enter__(self) -> HttpReceiver:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# ------------------------------------------------------------------------------------- proxy

_HEAD_LIMIT = 64 * 1024


class _ProxyHandler(socketserver.BaseRequestHandler):
    server: _ProxyServer
    request: socket.socket

    def handle(self) -> None:
        head, rest = self._head()
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split()
        if len(parts) != 3 or parts[0].upper() != "CONNECT":
            self.request.sendall(
                b"HTTP/1.1 405 Method Not Allowed\r\nAllow: CONNECT\r\n"
                b"Content-Length: 0\r\nConnection: close\r\n\r\n"
            )
            return
        proxy = self.server.proxy
        with proxy._lock:
            proxy.asked.append(parts[1])
        try:
            upstream = socket.create_connection(proxy.target, timeout=10)
        except OSError:
            self.request.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        with upstream:
            if not self.server.track(upstream):
                return
            try:
                upstream.settimeout(None)
                for sock in (upstream, self.request):  # pass small TLS records on at once
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
                back = threading.Thread(target=_pipe, args=(upstream, self.request))
                back.start()
                _pipe(self.request, upstream)
                back.join()
            finally:
                self.server.untrack(upstream)

    def _head(self) -> tuple[bytes, bytes]:
        """The request's head and whatever the client sent after it."""
        data = b""
        while b"\r\n\r\n" not in data and len(data) < _HEAD_LIMIT:
            chunk = self.request.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        return head, rest


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    """Copy until `source` ends, then end `sink`'s writing half (a half close: the other
    way may still be answering)."""
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


class _ProxyServer(_Server):
    def __init__(self, proxy: ConnectProxy) -> None:
        self.proxy = proxy
        super().__init__(_ProxyHandler)


class ConnectProxy:
    """An HTTPS proxy on 127.0.0.1 that tunnels every ``CONNECT host:port`` to `target`,
    one loopback (host, port), whatever host was asked for, and records each `host:port`
    asked in `asked`. It answers anything else with 405 and connects nowhere else.

    Give a client ``proxies={"https": proxy.url}`` (requests), ``proxy=proxy.url``
    (httpx) or ``HTTPS_PROXY=proxy.url`` and it reaches the receiver at `target` for any
    ``https://`` URL; the receiver's certificate decides which names the client accepts.
    """

    def __init__(self, target: tuple[str, int]) -> None:
        if not _is_loopback(target[0]):
            raise ValueError(f"the proxy tunnels to loopback only, not to {target[0]}")
        self.target = target
        self.asked: list[str] = []
        self._lock = threading.Lock()
        self._server = _ProxyServer(self)
        self.port = self._server.port
        self.url = f"http://{HOST}:{self.port}"

    def close(self) -> None:
        self._server.close()

    def __enter__(self) -> ConnectProxy:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# ------------------------------------------------------------------------------- loopback only


def _is_loopback(host: str) -> bool:
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


@contextlib.contextmanager
def loopback_only() -> Iterator[list[str]]:
    """While on, this process (every thread) resolves and connects to loopback only:
    resolving any other name fails (`socket.gaierror`) and so does connecting to any
    other address (`ConnectionRefusedError`), so nothing is sent to a real host. Yields
    the names and addresses refused so far.

    It patches `socket.getaddrinfo` and `socket.socket.connect`/`connect_ex`: what goes
    around them (uvloop's or C libraries' own sockets, other processes) is not covered."""
    refused: list[str] = []
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and not _is_loopback(str(name)):
            refused.append(str(name))
            raise socket.gaierror(socket.EAI_NONAME, f"{name}: not resolved (loopback only)")
        return real_getaddrinfo(host, *args, **kwargs)

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(str(address[0])):
            refused.append(str(address[0]))
            raise ConnectionRefusedError(f"{address[0]}: not connected (loopback only)")

    def connect(sock: socket.socket, address: Any) -> None:
        check(sock, address)
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        check(sock, address)
        return real_connect_ex(sock, address)

    patches: list[tuple[Any, str, Callable[..., Any]]] = [
        (socket, "getaddrinfo", getaddrinfo),
        (socket.socket, "connect", connect),
        (socket.socket, "connect_ex", connect_ex),
    ]
    # (connect is inherited from _socket.socket: restored by deleting the patch)
    originals = [(owner, name, vars(owner).get(name)) for owner, name, _ in patches]
    for owner, name, patched in patches:
        setattr(owner, name, patched)
    try:
        yield refused
    finally:
        for owner, name, original in originals:
            if original is None:
                delattr(owner, name)
            else:
                setattr(owner, name, original)


__all__ = [
    "ConnectProxy",
    "HttpReceiver",
    "Mail",
    "Received",
    "SmtpMode",
    "SmtpReceiver",
    "TestCA",
    "loopback_only",
]
