"""Networks on the engine: their names."""

from __future__ import annotations

from stackyard.docker import sdk
from stackyard.docker.engine import Engine, unreachable


def network_names(client: Engine) -> set[str]:
    try:
        listed = client.api.networks() or []
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc
    return {str(n.get("Name", "")) for n in listed}
