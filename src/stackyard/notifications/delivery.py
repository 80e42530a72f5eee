"""The one module that talks to notification services: a message goes out through
Apprise (which knows each service's API) or Stackyard's own signed webhook, within one
set of time limits, and a failure is a `DeliveryFailed` saying what the service said.

Blocking (Apprise uses `requests`): call it in a thread."""

from __future__ import annotations

import ast
import functools
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from stackyard.connection import why_not_connected
from stackyard.errors import StackyardError
from stackyard.logs import RedactSecrets
from stackyard.notifications.channels import AppriseTarget, Target

#: Seconds to connect to a service, and to wait for its answer.
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 10.0
#: The longest error kept from a service's answer.
ERROR_LENGTH = 500
#: The port of an address that names none.
_PORTS = {"http": 80, "https": 443}

if TYPE_CHECKING:
    import httpx

NotifyType = Literal["info", "success", "warning", "failure"]


class DeliveryFailed(StackyardError):
    """The service refused or could not be reached; `detail` says what it answered."""


@dataclass(frozen=True)
class Message:
    title: str
    body: str
    type: NotifyType
    #: What the webhook sends besides the text: the events, typed.
    payload: dict[str, Any]


def deliver(target: Target, message: Message, secrets: Iterable[str] = ()) -> None:
    """Send `message`; a `DeliveryFailed` when it was not taken, its detail cleared of
    `secrets` (the channel's own: a webhook URL holds its token)."""
    try:
        if isinstance(target, AppriseTarget):
            _apprise(target.url, message)
        else:
            _webhook(target.url, target.key, message)
    except DeliveryFailed as exc:
        text = RedactSecrets(secrets).redact(exc.detail)
        raise DeliveryFailed(
            text if len(text) <= ERROR_LENGTH else f"{text[: ERROR_LENGTH - 1]}…"
        ) from exc.__cause__


@functools.cache
def _apprise_logs() -> None:
    """Apprise's log records, debug ones too, are for each call's result only (where a
    service's answer is at debug level): the service logs a failed delivery itself, in
    its words, with the channel's secrets left out."""
    logger = logging.getLogger("apprise")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False


def _apprise(url: str, message: Message) -> None:
    import apprise  # 1 s and 20 MiB: loaded with the first message, not at start-up

    _apprise_logs()
    sender = apprise.Apprise()
    if not sender.add(url):
        raise DeliveryFailed("Apprise does not accept this URL (see its list of services)")
    for service in sender:
        service.socket_connect_timeout = CONNECT_TIMEOUT
        service.socket_read_timeout = READ_TIMEOUT
    with sender.notify(
        body=message.body,
        title=message.title,
        notify_type=message.type,
        log_level=logging.DEBUG,  # (the service's answer is logged at debug level)
    ) as result:
        if result:
            return
        entries = list(result.logs())
    said = [e.message for e in entries if e.level in ("WARNING", "ERROR", "CRITICAL")]
    answers = [_answer(e.message) for e in entries if e.message.startswith("Response Details")]
    if answers and answers[-1]:
        said.append(f"the service answered: {answers[-1]}")
    raise DeliveryFailed("; ".join(said) or "The service did not accept the message")


def _answer(logged: str) -> str:
    """The body a plugin logged (`Response Details:\r\n b'...'`) as text."""
    shown = logged.partition("\n")[2].strip()
    try:
        raw = ast.literal_eval(shown)
    except (ValueError, SyntaxError):
        return shown
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    return " ".join(text.split())


@functools.cache
def _client() -> httpx.Client:
    """One client for every webhook (its connections and TLS set-up kept: a new one per
    message cost 38 ms); it honours the usual proxy and CA variables, as Apprise does."""
    import httpx

    return httpx.Client()


def signature(key: str, timestamp: str, body: bytes) -> str:
    """The webhook's `X-Stackyard-Signature` of `body` sent at `timestamp`."""
    mac = hmac.new(key.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def _webhook(url: str, key: str | None, message: Message) -> None:
    body = json.dumps(
        {"title": message.title, "text": message.body, "type": message.type, **message.payload},
        separators=(",", ":"),
    ).encode()
    timestamp = str(int(time.time()))
    headers = {"content-type": "application/json", "x-stackyard-timestamp": timestamp}
    if key:
        headers["x-stackyard-signature"] = signature(key, timestamp, body)
    import httpx  # (loaded with the first webhook, not at start-up)

    try:
        timeout = httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT)
        answer = _client().post(url, content=body, headers=headers, timeout=timeout)
    except httpx.TimeoutException as exc:
        raise DeliveryFailed(f"No answer within {READ_TIMEOUT:g} s ({type(exc).__name__})") from exc
    except httpx.TransportError as exc:
        where = httpx.URL(url)
        port = where.port or _PORTS.get(where.scheme)
        raise DeliveryFailed(
            f"Cannot be reached: {why_not_connected(exc, where.host, port)}"
        ) from exc
    except httpx.HTTPError as exc:
        raise DeliveryFailed(f"Cannot be reached: {exc}") from exc
    if not answer.is_success:
        raise DeliveryFailed(f"Answered {answer.status_code}: {answer.text.strip()[:ERROR_LENGTH]}")
