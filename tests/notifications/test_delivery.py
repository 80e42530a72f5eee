"""Each kind of channel delivers to its service as that service documents it, checked at
a real receiver on loopback: at its own address where the channel lets one be set (ntfy,
Gotify, Matrix, the webhook, Apprise's json://, SMTP), and for services whose host is
fixed (Discord, Slack, Teams, Telegram, Pushover) at a loopback HTTPS receiver reached
under that host name: the client is sent through a CONNECT proxy of the test's (the
usual HTTPS_PROXY) and trusts a test CA that signed the receiver's certificate for
those names (REQUESTS_CA_BUNDLE). No request leaves the machine: the proxy connects
only to the receiver."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from urllib.parse import parse_qs

import pytest

from stackyard.notifications.channels import FORMS, ChannelKind, secret_words, target
from stackyard.notifications.delivery import DeliveryFailed, Message, deliver
from tests.support.receivers import ConnectProxy, HttpReceiver, SmtpReceiver, TestCA

FIXED_HOSTS = [
    "discord.com",
    "hooks.slack.com",
    "prod-00.westus.logic.azure.com",
    "api.telegram.org",
    "api.pushover.net",
]
MESSAGE = Message(
    "Stackyard: Backup failed",
    "Backup of blog failed: disk full\nhttps://yard.example.com/stacks/blog",
    "failure",
    {"events": [{"name": "backup_failed", "stack": "blog"}]},
)


@pytest.fixture(scope="module")
def ca(tmp_path_factory) -> TestCA:
    return TestCA(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def http() -> Iterator[HttpReceiver]:
    with HttpReceiver() as receiver:
        yield receiver


@pytest.fixture
def fixed_host(
    ca: TestCA, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[HttpReceiver, ConnectProxy]]:
    """A receiver for the services whose host is fixed, and the proxy that leads there."""
    with (
        HttpReceiver(tls=ca.issue(FIXED_HOSTS)) as receiver,
        ConnectProxy(("127.0.0.1", receiver.port)) as proxy,
    ):
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca.ca_pem))
        for name in ("NO_PROXY", "no_proxy", "https_proxy", "CURL_CA_BUNDLE"):
            monkeypatch.delenv(name, raising=False)
        yield receiver, proxy


def send(kind: ChannelKind, values: dict[str, str]) -> None:
    secrets = {f.name for f in FORMS[kind].fields if f.secret}
    deliver(target(kind, values), MESSAGE, secret_words(values, secrets))


def test_ntfy_publishes_json_to_the_server_with_its_token(http: HttpReceiver):
    send("ntfy", {"server": http.url, "topic": "ops", "token": "tk_secret", "priority": "high"})
    (request,) = http.wait_for(1)
    # ntfy's "publish as JSON": POST to the root, the topic in the body.
    assert (request.method, request.path) == ("POST", "/")
    assert request.headers["authorization"] == "Bearer tk_secret"
    body = request.json()
    assert body["topic"] == "ops"
    assert body["title"] == MESSAGE.title
    assert "Backup of blog failed" in body["message"]
    assert request.headers["x-priority"] == "high"


def test_gotify_posts_a_message_with_the_application_token(http: HttpReceiver):
    send("gotify", {"server": http.url, "token": "AppToken123"})
    (request,) = http.wait_for(1)
    assert (request.method, request.path) == ("POST", "/message")
    assert request.headers["x-gotify-key"] == "AppToken123"
    assert request.json()["title"] == MESSAGE.title
    assert request.json()["message"].startswith("Backup of blog failed")


def test_matrix_joins_the_room_and_sends_a_text_message(http: HttpReceiver):
    http.respond(r"/join/", 200, {"room_id": "!abc:example.org"})
    send("matrix", {"server": http.url, "room": "!abc:example.org", "token": "syt_token"})
    requests = http.wait_for(3)
    assert all(r.headers["authorization"] == "Bearer syt_token" for r in requests)
    sent = [r for r in requests if r.method == "PUT"]
    assert len(sent) == 1
    assert "/rooms/%21abc%3Aexample.org/send/m.room.message/" in sent[0].path
    assert sent[0].json()["msgtype"] == "m.text"
    assert "Backup of blog failed" in sent[0].json()["body"]


def test_any_apprise_url_is_delivered(http: HttpReceiver):
    send("apprise", {"url": f"json://127.0.0.1:{http.port}/hook"})
    (request,) = http.wait_for(1)
    body = request.json()
    assert request.path == "/hook"
    assert (body["title"], body["type"]) == (MESSAGE.title, "failure")
    assert body["message"].startswith("Backup of blog failed")


def test_the_webhook_is_signed_as_the_readme_says(http: HttpReceiver):
    send("webhook", {"url": f"{http.url}/hook", "signing_key": "s3cret"})
    (request,) = http.wait_for(1)
    timestamp = request.headers["x-stackyard-timestamp"]
    expected = hmac.new(b"s3cret", timestamp.encode() + b"." + request.body, hashlib.sha256)
    assert request.headers["x-stackyard-signature"] == f"sha256={expected.hexdigest()}"
    body = json.loads(request.body)
    assert body["title"] == MESSAGE.title
    assert body["events"] == MESSAGE.payload["events"]


def test_an_unsigned_webhook_has_no_signature(http: HttpReceiver):
    send("webhook", {"url": f"{http.url}/hook"})
    (request,) = http.wait_for(1)
    assert "x-stackyard-signature" not in request.headers


@pytest.mark.parametrize("security", ["starttls", "tls", "none"])
def test_email_is_sent_over_smtp(security: str, ca: TestCA, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(ca.ca_pem))  # (smtplib's default context)
    mode = {"starttls": "starttls", "tls": "tls", "none": "plain"}[security]
    with SmtpReceiver(mode, ca, user="alerts", password="p@ss word") as smtp:  # type: ignore[arg-type]
        send(
            "email",
            {
                "host": "localhost",
                "port": str(smtp.port),
                "security": security,
                "username": "alerts",
                "password": "p@ss word",
                "sender": "stackyard@example.com",
                "recipients": "ops@example.com, oncall@example.org",
            },
        )
        mails = smtp.wait_for(2)
    # One mail for each recipient (Apprise's way: no recipient sees the others).
    assert sorted(m.rcpt_tos for m in mails) == [("oncall@example.org",), ("ops@example.com",)]
    mail = mails[0]
    assert mail.login == "alerts"
    assert mail.tls is (security != "none")
    assert mail.message["Subject"] == MESSAGE.title
    assert "stackyard@example.com" in mail.message["From"]
    assert "Backup of blog failed" in mail.message.get_body(("plain", "html")).get_content()


def test_discord(fixed_host: tuple[HttpReceiver, ConnectProxy]):
    receiver, proxy = fixed_host
    receiver.respond(r"^/api/webhooks/", 204)
    send("discord", {"webhook_url": "https://discord.com/api/webhooks/123456/tokenABC"})
    (request,) = receiver.wait_for(1)
    assert (request.method, request.path) == ("POST", "/api/webhooks/123456/tokenABC")
    assert "Backup of blog failed" in request.json()["content"]
    assert proxy.asked == ["discord.com:443"]


def test_slack(fixed_host: tuple[HttpReceiver, ConnectProxy]):
    receiver, proxy = fixed_host
    receiver.respond(r"^/services/", 200, text="ok")  # (Slack's webhooks answer "ok")
    url = "https://hooks.slack.com/services/T1ABCDEFG/B1ABCDEFG/abcdefghijklmnopqrstuvwx"
    send("slack", {"webhook_url": url})
    (request,) = receiver.wait_for(1)
    assert request.path == "/services/T1ABCDEFG/B1ABCDEFG/abcdefghijklmnopqrstuvwx"
    (attachment,) = request.json()["attachments"]
    assert attachment["title"] == MESSAGE.title
    assert attachment["text"].startswith("Backup of blog failed")
    assert proxy.asked == ["hooks.slack.com:443"]


def test_teams_workflow(fixed_host: tuple[HttpReceiver, ConnectProxy]):
    receiver, proxy = fixed_host
    url = (
        "https://prod-00.westus.logic.azure.com:443/workflows/abc123/triggers/manual/paths/"
        "invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=xyz"
    )
    send("teams", {"workflow_url": url})
    (request,) = receiver.wait_for(1)
    assert request.path == "/workflows/abc123/triggers/manual/paths/invoke"
    assert request.query["sig"] == ["xyz"]
    (card,) = request.json()["attachments"]
    assert card["contentType"] == "application/vnd.microsoft.card.adaptive"
    assert "Backup of blog failed" in json.dumps(card["content"])
    assert proxy.asked == ["prod-00.westus.logic.azure.com:443"]


def test_telegram(fixed_host: tuple[HttpReceiver, ConnectProxy]):
    receiver, proxy = fixed_host
    receiver.respond(r"/sendMessage$", 200, {"ok": True, "result": {}})
    send(
        "telegram", {"bot_token": "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ", "chat_id": "4242"}
    )
    (request,) = receiver.wait_for(1)
    assert request.path == "/bot123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ/sendMessage"
    assert request.json()["chat_id"] == 4242
    assert "Backup of blog failed" in request.json()["text"]
    assert proxy.asked == ["api.telegram.org:443"]


def test_pushover(fixed_host: tuple[HttpReceiver, ConnectProxy]):
    receiver, proxy = fixed_host
    receiver.respond(r"/messages.json$", 200, {"status": 1, "request": "r1"})
    user, token = "uQiRzpo4DXghDmr9QzzfQu27cmVRsG", "azGDORePK8gMaC0QOYAMyEEuzJnyUi"
    send("pushover", {"user_key": user, "app_token": token})
    (request,) = receiver.wait_for(1)
    form = parse_qs(request.body.decode())
    assert request.path == "/1/messages.json"
    assert (form["user"], form["token"], form["title"]) == ([user], [token], [MESSAGE.title])
    assert proxy.asked == ["api.pushover.net:443"]


def test_a_refusal_says_what_the_service_answered_without_the_channels_secrets(
    fixed_host: tuple[HttpReceiver, ConnectProxy],
):
    receiver, _ = fixed_host
    receiver.fail_next(1, 404, '{"message": "Unknown Webhook tokenABC", "code": 10015}')
    with pytest.raises(DeliveryFailed) as failed:
        send("discord", {"webhook_url": "https://discord.com/api/webhooks/123456/tokenABC"})
    detail = failed.value.detail
    assert "error=404" in detail
    assert '"message": "Unknown Webhook [redacted]"' in detail  # its own words, no secret
    assert "tokenABC" not in detail


def test_a_webhook_refusal_and_a_closed_port_say_why(http: HttpReceiver):
    http.fail_next(1, 401, "bad signature")
    with pytest.raises(DeliveryFailed, match="Answered 401: bad signature"):
        send("webhook", {"url": f"{http.url}/hook"})
    http.close()
    with pytest.raises(DeliveryFailed) as closed:
        send("webhook", {"url": f"{http.url}/hook"})
    # In words, with where: never Python's "[Errno 111]".
    where = http.url.removeprefix("http://")
    assert (
        closed.value.detail
        == f"Cannot be reached: connection refused at {where}: nothing listens there"
    )


def test_a_silent_service_fails_within_the_read_limit(http: HttpReceiver, monkeypatch):
    from stackyard.notifications import delivery

    monkeypatch.setattr(delivery, "READ_TIMEOUT", 0.5)
    http.delay = 3
    with pytest.raises(DeliveryFailed, match=r"No answer within 0\.5 s"):
        send("webhook", {"url": f"{http.url}/hook"})
    with pytest.raises(DeliveryFailed):
        send("apprise", {"url": f"json://127.0.0.1:{http.port}/hook"})
