"""The loopback receivers, each checked with the real clients the notifications use
(smtplib, requests, httpx), under `loopback_only` so that nothing leaves the machine."""

from __future__ import annotations

import smtplib
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import quote

import apprise
import httpx
import pytest
import requests

from tests.support.receivers import (
    ConnectProxy,
    HttpReceiver,
    SmtpMode,
    SmtpReceiver,
    TestCA,
    _is_loopback,
    loopback_only,
)
from tests.support.waiting import NotInTime

USER, PASSWORD = "alerts@example.test", "s3cret pass"


@pytest.fixture(autouse=True)
def offline() -> Iterator[list[str]]:
    with loopback_only() as refused:
        yield refused


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    return TestCA(tmp_path_factory.mktemp("ca"))


def _message(subject: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = "Stackyard <stackyard@example.test>"
    message["To"] = "ops@example.test"
    message["Subject"] = subject
    message.set_content("Stack “web” is down.\n")
    return message


def _client(receiver: SmtpReceiver, ca: TestCA) -> smtplib.SMTP:
    """smtplib connected to `receiver` as its mode asks, trusting only `ca`."""
    if receiver.mode == "tls":
        return smtplib.SMTP_SSL(
            "localhost", receiver.port, "localhost", timeout=5, context=ca.client_context()
        )
    client = smtplib.SMTP(receiver.host, receiver.port, "localhost", timeout=5)
    if receiver.mode == "starttls":
        client.starttls(context=ca.client_context())
    return client


@pytest.mark.parametrize("mechanism", [None, "PLAIN", "LOGIN"])
@pytest.mark.parametrize("mode", ["plain", "starttls", "tls"])
def test_smtp_receives_mail_in_every_mode(ca: TestCA, mode: SmtpMode, mechanism: str | None):
    credentials = {"user": USER, "password": PASSWORD} if mechanism else {}
    with SmtpReceiver(mode, ca, **credentials) as receiver, _client(receiver, ca) as client:
        if mechanism:
            client.user, client.password = USER, PASSWORD
            client.ehlo_or_helo_if_needed()
            assert mechanism in client.esmtp_features["auth"].split()
            authenticate = client.auth_plain if mechanism == "PLAIN" else client.auth_login
            client.auth(mechanism, authenticate)
        client.send_message(_message(f"{mode} {mechanism}"), to_addrs=["ops@example.test", "b@x.t"])

        (mail,) = receiver.wait_for(1)
    assert mail.mail_from == "stackyard@example.test"
    assert mail.rcpt_tos == ("ops@example.test", "b@x.t")
    assert mail.message["Subject"] == f"{mode} {mechanism}"
    body = mail.message.get_body()
    assert body is not None and body.get_content() == "Stack “web” is down.\n"
    assert mail.login == (USER if mechanism else None)
    assert mail.tls is (mode != "plain")


def test_smtp_with_a_user_refuses_mail_before_auth_and_a_wrong_password(ca: TestCA):
    with SmtpReceiver("tls", ca, user=USER, password=PASSWORD) as receiver:
        with _client(receiver, ca) as client:
            with pytest.raises(smtplib.SMTPSenderRefused) as refused:
                client.send_message(_message("anonymous"))
            assert refused.value.smtp_code == 530
        with _client(receiver, ca) as client, pytest.raises(smtplib.SMTPAuthenticationError):
            client.login(USER, "wrong")
        assert receiver.mails == []


def test_smtp_starttls_offers_auth_only_after_the_upgrade_and_requires_it(ca: TestCA):
    with (
        SmtpReceiver("starttls", ca, user=USER, password=PASSWORD) as receiver,
        smtplib.SMTP(receiver.host, receiver.port, "localhost", timeout=5) as client,
    ):
        client.ehlo()
        assert client.has_extn("starttls") and not client.has_extn("auth")
        with pytest.raises(smtplib.SMTPSenderRefused) as refused:
            client.sendmail("a@x.t", ["b@x.t"], b"Subject: clear\r\n\r\nno\r\n")
        assert refused.value.smtp_code == 530
        client.starttls(context=ca.client_context())
        client.ehlo()
        assert client.has_extn("auth") and not client.has_extn("starttls")


def test_smtp_certificate_is_checked_by_clients(ca: TestCA, tmp_path: Path):
    stranger = TestCA(tmp_path)
    with SmtpReceiver("tls", ca) as receiver, pytest.raises(ssl.SSLCertVerificationError):
        smtplib.SMTP_SSL(
            "localhost", receiver.port, "localhost", timeout=5, context=stranger.client_context()
        )


def test_smtp_wait_for_fails_in_time_and_clear_forgets():
    with SmtpReceiver() as receiver:
        with pytest.raises(NotInTime, match="1 mail"):
            receiver.wait_for(1, timeout=0.1)
        with smtplib.SMTP(receiver.host, receiver.port, "localhost", timeout=5) as client:
            client.sendmail("a@x.t", ["b@x.t"], b"Subject: one\r\n\r\n1\r\n")
        assert len(receiver.wait_for(1)) == 1
        receiver.clear()
        assert receiver.mails == []


def test_smtp_needs_a_ca_for_tls():
    with pytest.raises(ValueError, match="TestCA"):
        SmtpReceiver("starttls")


def test_http_records_requests_and_answers_200_with_an_empty_object():
    with HttpReceiver() as receiver:
        answer = requests.post(
            f"{receiver.url}/hooks/a?x=1&x=2&empty=",
            json={"text": "hé"},
            headers={"X-Token": "t"},
            timeout=5,
        )
        assert (answer.status_code, answer.json()) == (200, {})
        (received,) = receiver.wait_for(1)
    assert received.method == "POST"
    assert received.path == "/hooks/a"
    assert received.query == {"x": ["1", "2"], "empty": [""]}
    assert received.headers["x-token"] == "t"
    assert received.headers["content-type"] == "application/json"
    assert received.json() == {"text": "hé"}


def test_http_answers_by_path_and_fails_the_next_requests_as_told():
    with HttpReceiver() as receiver:
        receiver.respond(r"^/hooks/", 201, {"id": 7})
        receiver.respond(r"^/hooks/gone$", 404, {"message": "Unknown Webhook"})
        receiver.respond(r"^/empty$", 204)
        receiver.fail_next(2, 503, "busy", headers={"Retry-After": "1"})
        first = requests.post(f"{receiver.url}/hooks/1", data=b"a", timeout=5)
        assert (first.status_code, first.text, first.headers["retry-after"]) == (503, "busy", "1")
        assert requests.get(f"{receiver.url}/other", timeout=5).status_code == 503
        created = requests.post(f"{receiver.url}/hooks/1", data=b"b", timeout=5)
        assert (created.status_code, created.json()) == (201, {"id": 7})
        gone = requests.post(f"{receiver.url}/hooks/gone", timeout=5)
        assert (gone.status_code, gone.json()) == (404, {"message": "Unknown Webhook"})
        empty = requests.delete(f"{receiver.url}/empty", timeout=5)
        assert (empty.status_code, empty.content) == (204, b"")
        assert requests.get(f"{receiver.url}/other", timeout=5).json() == {}
        assert [r.body for r in receiver.wait_for(6)[:3]] == [b"a", b"", b"b"]
        receiver.clear()
        assert receiver.requests == []


def test_http_reads_a_chunked_body():
    with HttpReceiver() as receiver:
        answer = requests.post(receiver.url, data=iter([b"one ", b"two"]), timeout=5)
        assert answer.status_code == 200
        (received,) = receiver.wait_for(1)
    assert received.headers["transfer-encoding"] == "chunked"
    assert received.body == b"one two"


def test_http_delay_makes_a_slow_channel_and_close_does_not_wait_it_out():
    receiver = HttpReceiver()
    receiver.delay = 30
    with pytest.raises(requests.Timeout):
        requests.post(f"{receiver.url}/slow", data=b"x", timeout=0.3)
    assert receiver.wait_for(1)[0].path == "/slow"  # recorded on arrival
    start = time.monotonic()
    receiver.close()
    assert time.monotonic() - start < 2


def _ends_in_time(call: Callable[[], None], timeout: float = 5) -> bool:
    """Whether `call` returns within `timeout` seconds (it goes on in a thread if not)."""
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(timeout)
    return not thread.is_alive()


def test_http_close_ends_idle_and_handshaking_connections(ca: TestCA):
    receiver = HttpReceiver(tls=ca.issue(["localhost"]))
    idle = socket.create_connection(("127.0.0.1", receiver.port))  # never says hello
    try:
        time.sleep(0.05)
        assert _ends_in_time(receiver.close)
    finally:
        idle.close()


def test_https_receiver_is_trusted_through_the_ca(ca: TestCA):
    with HttpReceiver(tls=ca.issue(["localhost"])) as receiver:
        assert receiver.url.startswith("https://127.0.0.1:")
        assert requests.get(f"{receiver.url}/x", verify=str(ca.ca_pem), timeout=5).json() == {}
        local = f"https://localhost:{receiver.port}/y"
        assert httpx.get(local, verify=ca.client_context(), trust_env=False).status_code == 200
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(receiver.url, verify=True, timeout=5)  # the system's CAs
        assert [r.path for r in receiver.wait_for(2)] == ["/x", "/y"]


@pytest.fixture
def discord(ca: TestCA) -> Iterator[tuple[HttpReceiver, ConnectProxy]]:
    with (
        HttpReceiver(tls=ca.issue(["discord.com"])) as receiver,
        ConnectProxy(("127.0.0.1", receiver.port)) as proxy,
    ):
        yield receiver, proxy


HOOK = "https://discord.com/api/webhooks/123/token"


def test_proxy_takes_requests_for_a_public_name_to_the_receiver(
    ca: TestCA, discord: tuple[HttpReceiver, ConnectProxy], offline: list[str]
):
    receiver, proxy = discord
    receiver.respond(r"^/api/webhooks/", 204)
    with requests.Session() as session:
        session.trust_env = False  # no proxy or CA bundle from the environment
        answer = session.post(
            f"{HOOK}?wait=false",
            json={"content": "web is down"},
            proxies={"https": proxy.url},
            verify=str(ca.ca_pem),
            timeout=5,
        )
    assert answer.status_code == 204
    (received,) = receiver.wait_for(1)
    assert (received.path, received.query) == ("/api/webhooks/123/token", {"wait": ["false"]})
    assert received.headers["host"] == "discord.com"
    assert received.json() == {"content": "web is down"}
    assert proxy.asked == ["discord.com:443"]
    assert offline == []


def test_proxy_serves_httpx_too(ca: TestCA, discord: tuple[HttpReceiver, ConnectProxy]):
    receiver, proxy = discord
    with httpx.Client(proxy=proxy.url, verify=ca.client_context(), trust_env=False) as client:
        assert client.post(HOOK, json={"n": 1}).status_code == 200
        assert client.post(HOOK, json={"n": 2}).status_code == 200
    assert [r.json() for r in receiver.wait_for(2)] == [{"n": 1}, {"n": 2}]
    assert proxy.asked == ["discord.com:443", "discord.com:443"]


def test_proxy_leaves_the_certificate_check_to_the_client(
    ca: TestCA, discord: tuple[HttpReceiver, ConnectProxy]
):
    receiver, proxy = discord
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        # another name than the certificate's
        httpx.post(
            "https://example.com/", proxy=proxy.url, verify=ca.client_context(), trust_env=False
        )
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.post(HOOK, proxy=proxy.url, trust_env=False)  # certifi's CAs
    assert proxy.asked == ["example.com:443", "discord.com:443"]
    assert receiver.requests == []


def test_proxy_refuses_anything_but_connect(discord: tuple[HttpReceiver, ConnectProxy]):
    receiver, proxy = discord
    answer = requests.get("http://discord.com/", proxies={"http": proxy.url}, timeout=5)
    assert (answer.status_code, answer.headers["allow"]) == (405, "CONNECT")
    assert proxy.asked == []
    assert receiver.requests == []


def test_proxy_close_ends_open_tunnels(ca: TestCA):
    receiver = HttpReceiver(tls=ca.issue(["discord.com"]))
    proxy = ConnectProxy(("127.0.0.1", receiver.port))
    tunnel = socket.create_connection(("127.0.0.1", proxy.port))
    try:
        tunnel.sendall(b"CONNECT discord.com:443 HTTP/1.1\r\nHost: discord.com:443\r\n\r\n")
        assert tunnel.recv(100).startswith(b"HTTP/1.1 200")
        assert _ends_in_time(proxy.close)
        assert tunnel.recv(100) == b""
    finally:
        tunnel.close()
        receiver.close()


def test_proxy_tunnels_to_loopback_only():
    with pytest.raises(ValueError, match="loopback"):
        ConnectProxy(("10.0.0.1", 443))


def test_loopback_only_refuses_other_hosts(offline: list[str]):
    # In this order: a broken check fails before anything could be sent.
    assert [_is_loopback(h) for h in ("localhost", "127.0.0.1", "127.1.2.3", "::1")] == [True] * 4
    assert not any(_is_loopback(h) for h in ("discord.com", "10.0.0.1", "::ffff:8.8.8.8", ""))
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("discord.com", 443)
    with socket.socket() as sock, pytest.raises(ConnectionRefusedError):
        sock.connect(("192.0.2.1", 443))
    assert offline == ["discord.com", "192.0.2.1"]
    assert socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)


# Apprise loads all its plugins at its first `add` (a second), one of them importing imghdr.
@pytest.mark.filterwarnings("ignore:'imghdr' is deprecated:DeprecationWarning")
def test_apprise_delivers_to_the_receivers(
    ca: TestCA, discord: tuple[HttpReceiver, ConnectProxy], monkeypatch: pytest.MonkeyPatch
):
    """What the notification tests do: Apprise told of the proxy and the CA by the
    environment (requests reads HTTPS_PROXY and REQUESTS_CA_BUNDLE, smtplib's default
    context SSL_CERT_FILE)."""
    receiver, proxy = discord
    receiver.respond(r"^/api/webhooks/", 204)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca.ca_pem))
    monkeypatch.setenv("SSL_CERT_FILE", str(ca.ca_pem))
    for name in ("NO_PROXY", "no_proxy", "https_proxy", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    with SmtpReceiver("starttls", ca, user=USER, password=PASSWORD) as smtp:
        notify = apprise.Apprise()
        assert notify.add("discord://123456/token")
        # Apprise drops recipients whose domain it finds invalid (such as a one-letter TLD).
        user, password = (quote(USER, safe=""), quote(PASSWORD, safe=""))
        assert notify.add(
            f"mailtos://{user}:{password}@localhost:{smtp.port}/ops@example.com"
            "?mode=starttls&from=stackyard@example.com"
        )
        assert notify.notify("web is down", title="Stackyard")
        (mail,) = smtp.wait_for(1)
    (hook,) = receiver.wait_for(1)
    assert hook.path == "/api/webhooks/123456/token"
    assert "web is down" in hook.json()["content"]
    assert proxy.asked == ["discord.com:443"]
    assert (mail.rcpt_tos, mail.login, mail.tls) == (("ops@example.com",), USER, True)
    assert mail.message["Subject"] == "Stackyard"
