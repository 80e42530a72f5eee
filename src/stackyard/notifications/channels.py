"""The kinds of channel: each a form of its own fields (what the UI draws, what the API
checks) and how those fields become where a message goes: an Apprise URL built from
them, or Stackyard's own signed webhook. Secret fields are sealed at rest and never
sent back."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, get_args
from urllib.parse import quote, unquote, urlencode, urlsplit

from stackyard.errors import Invalid

ChannelKind = Literal[
    "ntfy",
    "gotify",
    "discord",
    "slack",
    "teams",
    "telegram",
    "matrix",
    "pushover",
    "email",
    "webhook",
    "apprise",
]
CHANNEL_KINDS: Final[tuple[ChannelKind, ...]] = get_args(ChannelKind)
FieldType = Literal["text", "url", "number", "select", "email", "emails"]
#: The longest value a field takes.
VALUE_LENGTH = 2000


@dataclass(frozen=True)
class FieldSpec:
    name: str
    label: str
    type: FieldType = "text"
    secret: bool = False
    required: bool = True
    choices: tuple[str, ...] = ()
    default: str | None = None
    help: str | None = None


@dataclass(frozen=True)
class AppriseTarget:
    url: str


@dataclass(frozen=True)
class WebhookTarget:
    url: str
    key: str | None  # the HMAC-SHA256 key the body is signed with


Target = AppriseTarget | WebhookTarget
Values = Mapping[str, str]


@dataclass(frozen=True)
class KindSpec:
    kind: ChannelKind
    label: str
    fields: tuple[FieldSpec, ...]
    build: Callable[[Values], Target]


def _server(values: Values, plain: str, secure: str) -> tuple[str, str]:
    """(scheme, host[:port][/path]) of a server URL field."""
    parts = urlsplit(values["server"])
    scheme = secure if parts.scheme == "https" else plain
    return scheme, f"{parts.netloc}{parts.path.rstrip('/')}"


def _q(value: str) -> str:
    return quote(value, safe="")


def _ntfy(v: Values) -> Target:
    scheme, where = _server(v, "ntfy", "ntfys")
    query = {"priority": v.get("priority") or "default"}
    if v.get("token"):
        query["token"] = v["token"]
    return AppriseTarget(f"{scheme}://{where}/{_q(v['topic'])}?{urlencode(query)}")


def _gotify(v: Values) -> Target:
    scheme, where = _server(v, "gotify", "gotifys")
    return AppriseTarget(f"{scheme}://{where}/{_q(v['token'])}")


def _matrix(v: Values) -> Target:
    scheme, where = _server(v, "matrix", "matrixs")
    return AppriseTarget(f"{scheme}://{_q(v['token'])}@{where}/{_q(v['room'])}")


def _native(pattern: str, field: str, what: str) -> Callable[[Values], Target]:
    """A service whose own webhook URL Apprise reads as it is (its host fixed)."""
    matcher = re.compile(pattern, re.IGNORECASE)

    def build(v: Values) -> Target:
        if not matcher.match(v[field]):
            raise Invalid(f"Not a {what}: it starts with {pattern.lstrip('^')!r}".replace("\\", ""))
        return AppriseTarget(v[field])

    return build


def _telegram(v: Values) -> Target:
    return AppriseTarget(f"tgram://{_q(v['bot_token'])}/{_q(v['chat_id'])}")


def _pushover(v: Values) -> Target:
    device = f"/{_q(v['device'])}" if v.get("device") else ""
    return AppriseTarget(f"pover://{_q(v['user_key'])}@{_q(v['app_token'])}{device}")


def _email(v: Values) -> Target:
    security = v.get("security") or "starttls"
    scheme = "mailto" if security == "none" else "mailtos"
    mode = {"starttls": "starttls", "tls": "ssl", "none": "insecure"}[security]
    user = v.get("username") or ""
    credentials = f"{_q(user)}:{_q(v.get('password') or '')}@" if user else ""
    recipients = "/".join(_q(a.strip()) for a in v["recipients"].split(",") if a.strip())
    query = {"smtp": v["host"], "mode": mode, "from": v["sender"]}
    return AppriseTarget(
        f"{scheme}://{credentials}{v['host']}:{v.get('port') or 587}/{recipients}"
        f"?{urlencode(query)}"
    )


def secret_words(values: Values, secret_names: set[str]) -> list[str]:
    """What a service's answer must not repeat of a channel's secrets: each value, and of
    a URL (a webhook's, which holds its token) each longer part of its path and query."""
    words: list[str] = []
    for name in secret_names:
        value = values.get(name) or ""
        words.append(value)
        if "://" in value:
            parts = urlsplit(value)
            pieces = parts.path.split("/") + [p.partition("=")[2] for p in parts.query.split("&")]
            words += [unquote(p) for p in pieces if len(p) >= 6]
    return [w for w in words if w]


def _webhook(v: Values) -> Target:
    return WebhookTarget(v["url"], v.get("signing_key") or None)


def _apprise(v: Values) -> Target:
    return AppriseTarget(v["url"])


_SERVER_HELP = "Its address, as in the browser (https://...)"
FORMS: Final[dict[ChannelKind, KindSpec]] = {
    spec.kind: spec
    for spec in (
        KindSpec(
            "ntfy",
            "ntfy",
            (
                FieldSpec("server", "Server", "url", default="https://ntfy.sh", help=_SERVER_HELP),
                FieldSpec("topic", "Topic"),
                FieldSpec("token", "Access token", secret=True, required=False),
                FieldSpec(
                    "priority",
                    "Priority",
                    "select",
                    required=False,
                    choices=("min", "low", "default", "high", "max"),
                    default="default",
                ),
            ),
            _ntfy,
        ),
        KindSpec(
            "gotify",
            "Gotify",
            (
                FieldSpec("server", "Server", "url", help=_SERVER_HELP),
                FieldSpec("token", "Application token", secret=True),
            ),
            _gotify,
        ),
        KindSpec(
            "discord",
            "Discord",
            (
                FieldSpec(
                    "webhook_url",
                    "Webhook URL",
                    "url",
                    secret=True,
                    help="Server settings > Integrations > Webhooks > Copy Webhook URL",
                ),
            ),
            _native(
                r"^https://(discord|discordapp)\.com/api/webhooks/",
                "webhook_url",
                "Discord webhook URL",
            ),
        ),
        KindSpec(
            "slack",
            "Slack",
            (FieldSpec("webhook_url", "Incoming webhook URL", "url", secret=True),),
            _native(
                r"^https://hooks\.slack\.com/services/", "webhook_url", "Slack incoming webhook URL"
            ),
        ),
        KindSpec(
            "teams",
            "Microsoft Teams",
            (
                FieldSpec(
                    "workflow_url",
                    "Workflow URL",
                    "url",
                    secret=True,
                    help="The URL of a Teams workflow 'Post to a channel when a webhook "
                    "request is received'",
                ),
            ),
            _native(
                r"^https://[a-z0-9_.-]+\.(logic\.azure\.[a-z]+|"
                r"(power|apps)platform(\.[a-z0-9-]+)+)(:[0-9]+)?/",
                "workflow_url",
                "Teams workflow URL",
            ),
        ),
        KindSpec(
            "telegram",
            "Telegram",
            (
                FieldSpec("bot_token", "Bot token", secret=True, help="From @BotFather"),
                FieldSpec("chat_id", "Chat id"),
            ),
            _telegram,
        ),
        KindSpec(
            "matrix",
            "Matrix",
            (
                FieldSpec("server", "Homeserver", "url", help=_SERVER_HELP),
                FieldSpec("room", "Room", help="!id:server or #alias:server"),
                FieldSpec("token", "Access token", secret=True),
            ),
            _matrix,
        ),
        KindSpec(
            "pushover",
            "Pushover",
            (
                FieldSpec("user_key", "User key", secret=True),
                FieldSpec("app_token", "Application token", secret=True),
                FieldSpec("device", "Device", required=False),
            ),
            _pushover,
        ),
        KindSpec(
            "email",
            "Email (SMTP)",
            (
                FieldSpec("host", "SMTP server"),
                FieldSpec("port", "Port", "number", default="587"),
                FieldSpec(
                    "security",
                    "Security",
                    "select",
                    choices=("starttls", "tls", "none"),
                    default="starttls",
                ),
                FieldSpec("username", "User name", required=False),
                FieldSpec("password", "Password", secret=True, required=False),
                FieldSpec("sender", "From", "email"),
                FieldSpec("recipients", "To", "emails", help="One or more, separated by commas"),
            ),
            _email,
        ),
        KindSpec(
            "webhook",
            "Webhook",
            (
                # A secret: such a URL holds its token (in its path or query).
                FieldSpec("url", "URL", "url", secret=True),
                FieldSpec(
                    "signing_key",
                    "Signing key",
                    secret=True,
                    required=False,
                    help="Signs each body: X-Stackyard-Signature: sha256=HMAC(key, "
                    "timestamp + '.' + body)",
                ),
            ),
            _webhook,
        ),
        KindSpec(
            "apprise",
            "Any Apprise URL",
            (
                FieldSpec(
                    "url",
                    "Apprise URL",
                    secret=True,
                    help="Any of Apprise's services, e.g. pushbullet://token",
                ),
            ),
            _apprise,
        ),
    )
}

_EMAIL = re.compile(r"^[^@\s,]+@[^@\s,]+\.[^@\s,]+$")


def _check(spec: FieldSpec, value: str) -> str:
    value = value.strip()
    if len(value) > VALUE_LENGTH or "\x00" in value or "\n" in value:
        raise Invalid(f"{spec.label}: at most {VALUE_LENGTH} characters on one line")
    if spec.type == "url":
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Invalid(f"{spec.label}: an http:// or https:// address")
    elif spec.type == "number" and not (value.isdigit() and 0 < int(value) < 65536):
        raise Invalid(f"{spec.label}: a number from 1 to 65535")
    elif spec.type == "select" and value not in spec.choices:
        raise Invalid(f"{spec.label}: one of {', '.join(spec.choices)}")
    elif spec.type == "email" and not _EMAIL.match(value):
        raise Invalid(f"{spec.label}: an email address")
    elif spec.type == "emails":
        addresses = [a.strip() for a in value.split(",") if a.strip()]
        if not addresses or not all(_EMAIL.match(a) for a in addresses):
            raise Invalid(f"{spec.label}: email addresses separated by commas")
        value = ",".join(addresses)
    return value


def split_values(
    kind: ChannelKind, config: Mapping[str, str], secrets: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The settings and secrets of a channel form, checked: unknown fields, a secret sent
    as a setting (or the other way) and bad values are refused. Empty values are left
    out (an empty secret: removed)."""
    spec = FORMS[kind]
    fields = {f.name: f for f in spec.fields}
    out: tuple[dict[str, str], dict[str, str]] = ({}, {})
    for given, secret in ((config, False), (secrets, True)):
        for name, value in given.items():
            field = fields.get(name)
            if field is not None and field.secret and not secret:
                raise Invalid(f"{spec.label}: {field.label} is a secret: send it in secrets")
            if field is None or field.secret != secret:
                where = "secrets" if secret else "settings"
                raise Invalid(f"{spec.label} has no {where} field {name!r}")
            if value.strip():
                out[secret][name] = _check(field, value)
    return out


def secret_fields(kind: ChannelKind) -> frozenset[str]:
    """The names of the kind's secret fields."""
    return frozenset(f.name for f in FORMS[kind].fields if f.secret)


def target(kind: ChannelKind, values: Values) -> Target:
    """Where a channel's messages go; Invalid naming the first field missing."""
    spec = FORMS[kind]
    filled = {f.name: f.default for f in spec.fields if f.default} | dict(values)
    for field in spec.fields:
        if field.required and not filled.get(field.name):
            raise Invalid(f"{spec.label}: {field.label} is required")
    return spec.build(filled)


def channel_kind(text: str) -> ChannelKind:
    """A kind read back from the database (Invalid when it is no kind)."""
    found = next((k for k in CHANNEL_KINDS if k == text), None)
    if found is None:
        raise Invalid(f"Unknown kind of channel {text!r}")
    return found
