"""Logging set-up, with a filter that keeps secrets out of every line: the configured
ones, and anything that looks like a credential (an API token, a query parameter or a
header that carries one: the access log writes request lines as they came; the identity
provider's callback carries the authorization `code` and the sign-in's `state`)."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable

from stackyard.auth.tokens import TOKEN_PREFIX

REDACTED = "[redacted]"
#: Credentials by their shape: replaced by REDACTED, what names them kept.
CREDENTIALS = (
    re.compile(
        r"(?i)([?&;](?:token|access_token|id_token_hint|csrf|password|secret|api_key|key|"
        r"signature|code|state|session_state)=)[^&\s\"']+"
    ),
    re.compile(r"(?i)((?:authorization|cookie|x-api-key)[\"']?\s*[:=]\s*[\"']?)[^\"'\r\n]+"),
    re.compile(rf"(){re.escape(TOKEN_PREFIX)}[A-Za-z0-9_\-]{{8,}}"),
)


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        text = self.redact(message)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if text != message:
            record.msg, record.args = text, None
        return True

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        for shape in CREDENTIALS:
            text = shape.sub(rf"\g<1>{REDACTED}", text)
        return text


def setup_logging(level: str, secrets: Iterable[str]) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
