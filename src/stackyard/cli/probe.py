"""`stackyard health`: the version the service running in this container answers, asked
on loopback with this container's own settings (port, agent token and certificate). The
self-update helper runs it in the new container (`docker exec`) to know that the new
release serves, and serves as the new version, before it keeps it."""

from __future__ import annotations

import ssl

import httpx

from stackyard.agents.dialer import identity
from stackyard.agents.tls import CERT_NAME, client_context
from stackyard.errors import Unavailable
from stackyard.settings import Mode, Settings

#: Seconds the service has to answer.
TIMEOUT = 4.0


def _address(settings: Settings) -> str:
    return "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host


def own_version(settings: Settings, mode: Mode, port: int | None = None) -> str:
    """The version the service of `mode` beside this process answers (on `port`, else
    where it listens by default); Unavailable when it does not answer (yet), or answers
    anything but its health. An agent that dials its central (enrolled: its identity in
    the data folder) is asked as it serves: plain HTTP on loopback, with the token its
    central gave it."""
    headers: dict[str, str] = {}
    verify: ssl.SSLContext | bool = False
    listening = port or settings.listen_port(mode)
    where = f"{_address(settings)}:{listening}"
    if mode == "central":
        url = f"http://{where}/api/health"
    elif (enrolled := identity(settings.data_dir)) is not None:
        url = f"http://127.0.0.1:{listening}/agent/health"
        headers["Authorization"] = f"Bearer {enrolled.agent_token}"
    else:
        url = f"{'https' if settings.agent_tls else 'http'}://{where}/agent/health"
        headers["Authorization"] = f"Bearer {settings.agent_token or ''}"
    try:
        if url.startswith("https://"):  # an agent's own certificate, pinned
            cert = settings.agent_tls_cert or settings.data_dir / CERT_NAME
            verify = client_context(cert.read_text(), None)
        answer = httpx.get(url, headers=headers, verify=verify, timeout=TIMEOUT)
        answer.raise_for_status()
        version = answer.json()["version"]
    except (httpx.HTTPError, OSError, ValueError, KeyError, TypeError) as exc:
        raise Unavailable(f"{url} did not answer its health: {exc}") from exc
    if not isinstance(version, str):
        raise Unavailable(f"{url} answered no version")
    return version
