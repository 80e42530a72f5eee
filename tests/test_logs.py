import logging

import httpx

from stackyard.logs import REDACTED, RedactSecrets
from tests.support.service import ADMIN_PASSWORD, sign_in
from tests.support.waiting import wait_until


def test_secrets_are_redacted_from_messages_and_tracebacks():
    secret = "very-secret-token-value-1234567890"
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "token %s used", (secret,), None)
    try:
        raise ValueError(f"bad {secret}")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    assert RedactSecrets([secret]).filter(record)
    assert record.getMessage() == f"token {REDACTED} used"
    assert secret not in record.exc_text and REDACTED in record.exc_text


def test_no_credential_sent_to_the_service_is_in_its_log(server):
    """The access log writes request lines as they came: credentials in query
    parameters (a token for an event stream, the shell's CSRF value) are redacted."""
    with httpx.Client(base_url=server.url, timeout=30) as client:
        sign_in(client, "admin", ADMIN_PASSWORD)
        made = client.post("/api/auth/tokens", json={"name": "log", "password": ADMIN_PASSWORD})
        token = made.json()["token"]
        cookie = next(iter(client.cookies.values()))
        csrf = "csrf-value-0123456789"
        client.get("/api/stacks", params={"token": token})
        client.get("/api/stacks", params={"csrf": csrf, "password": "typed-in-a-url-1"})
        client.get("/api/stacks/app/containers/app-1/shell", params={"csrf": csrf, "token": token})
        client.get("/api/health", params={"marker": "last"})
    wait_until(lambda: "marker=last" in server.log(), what="the last request in the log")
    log = server.log()
    assert "token=[redacted]" in log and "csrf=[redacted]" in log
    for secret in (token, cookie, csrf, "typed-in-a-url-1"):
        assert secret not in log
