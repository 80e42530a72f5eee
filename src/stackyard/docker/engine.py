"""Connects to the engine, says what it is, and converts the SDK's errors at this seam.

`Engine` is the handle other packages hold and pass to the functions of this package;
they never call it themselves, so that only `stackyard.docker` speaks the SDK."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from stackyard.docker import sdk
from stackyard.errors import Unavailable

Engine: TypeAlias = "sdk.DockerClient"


@dataclass(frozen=True)
class EngineInfo:
    version: str
    api_version: str


@dataclass(frozen=True)
class EngineState:
    """What the engine says of its host (the defaults: nothing known)."""

    name: str = ""  # the host's name
    root_dir: str | None = None  # where the engine keeps its data
    containers_running: int = 0
    containers_total: int = 0


def explain(exc: sdk.DockerException) -> str:
    """The engine's own words for a refusal, else the SDK's."""
    if isinstance(exc, sdk.APIError):
        return str(exc.explanation or exc)
    return str(exc)


def unreachable(exc: sdk.DockerException) -> Unavailable:
    return Unavailable(f"Cannot reach the Docker engine: {exc}")


def connect(docker_host: str | None = None, timeout: int = 60) -> Engine:
    try:
        if docker_host:
            return sdk.DockerClient(base_url=docker_host, timeout=timeout)
        return sdk.from_env(timeout=timeout)
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc


def disconnect(client: Engine) -> None:
    client.close()


def ping(client: Engine) -> None:
    try:
        client.ping()
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc


def engine_info(client: Engine) -> EngineInfo:
    try:
        version = client.version()
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc
    return EngineInfo(
        version=version.get("Version", "?"), api_version=version.get("ApiVersion", "?")
    )


def engine_state(client: Engine) -> EngineState:
    try:
        info = client.info()
    except sdk.DockerException as exc:
        raise Unavailable(f"The Docker engine cannot be reached: {exc}") from exc
    root = info.get("DockerRootDir")
    return EngineState(
        name=str(info.get("Name") or ""),
        root_dir=root if isinstance(root, str) else None,
        containers_running=int(str(info.get("ContainersRunning", 0))),
        containers_total=int(str(info.get("Containers", 0))),
    )


def insecure_registries(client: Engine) -> Callable[[str], bool]:
    """The engine's own rule for plain-HTTP registries (its `insecure-registries`, which
    always include 127.0.0.0/8), so Stackyard falls back to HTTP exactly where docker does."""
    try:
        config = client.info().get("RegistryConfig") or {}
    except sdk.DockerException as exc:
        raise unreachable(exc) from exc
    networks = [
        ipaddress.ip_network(c, strict=False) for c in config.get("InsecureRegistryCIDRs") or []
    ]
    insecure_names = {
        name
        for name, index in (config.get("IndexConfigs") or {}).items()
        if not index.get("Secure", True)
    }

    def is_insecure(host: str) -> bool:
        if host in insecure_names:
            return True
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        name = "127.0.0.1" if name == "localhost" else name.strip("[]")
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return False
        return any(address in network for network in networks)

    return is_insecure
