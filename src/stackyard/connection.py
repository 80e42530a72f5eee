"""Why a connection to a peer failed, in words a person acts on ("connection refused at
127.0.0.1:9000: nothing listens there"), from the exception the network library raised:
never Python's own text ("[Errno 111]", "Connect call failed ('127.0.0.1', 9000)").

Each peer's client (agents, notification webhooks) classifies its library's errors where
they enter and asks this module for the words; it reads the causes the library chained
(the OS error under aiohttp's or httpx's), never a message text."""

from __future__ import annotations

import errno
import os
import socket
import ssl

#: OS errors that say the same to a person, by errno.
_UNROUTABLE = frozenset({errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN, errno.ENETDOWN})


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc` and what it was raised from or during, nearest first (each once)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        os_error = getattr(current, "os_error", None)  # aiohttp's ClientConnectorError
        if isinstance(os_error, OSError) and os_error not in seen:
            seen.append(os_error)
        current = current.__cause__ or current.__context__
    return seen


def why_not_connected(exc: BaseException, host: str | None, port: int | None) -> str:
    """The reason a connection to `host`:`port` failed, from `exc` and its causes."""
    where = f"{host}:{port}" if host and port else host or "the server"
    causes = _causes(exc)
    for cause in causes:
        if isinstance(cause, ssl.SSLCertVerificationError):
            said = cause.verify_message or cause.reason or "not trusted"
            return f"the TLS certificate of {where} is not trusted ({said})"
        if isinstance(cause, ssl.SSLError):
            return f"the TLS connection to {where} failed ({cause.reason or 'TLS error'})"
        if isinstance(cause, socket.gaierror):
            return f"the host name {host} does not resolve (no such host, or no DNS)"
        if isinstance(cause, ConnectionRefusedError):
            return f"connection refused at {where}: nothing listens there"
        if isinstance(cause, ConnectionResetError):
            return f"{where} closed the connection"
        if isinstance(cause, TimeoutError):
            return f"no answer from {where} in time"
        if isinstance(cause, OSError) and cause.errno in _UNROUTABLE:
            return f"no route to {where} (the host or its network is down)"
    for cause in causes:
        if isinstance(cause, OSError) and cause.errno is not None:
            return f"cannot connect to {where}: {os.strerror(cause.errno).lower()}"
    return f"cannot connect to {where}"
