import logging

from stackyard.logs import REDACTED, RedactSecrets


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
