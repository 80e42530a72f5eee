"""Connects to the engine and converts the SDK's errors at this seam."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

import docker
from docker.errors import DockerException

from stackyard.errors import Unavailable


@dataclass(frozen=True)
class EngineInfo:
    version: str
    api_version: str


def connect(docker_host: str | None = None, timeout: int = 60) -> docker.DockerClient:
    try:
        if docker_host:
            return docker.DockerClient(base_url=docker_host, timeout=timeout)
        return docker.from_env(timeout=timeout)
    except DockerException as exc:
        raise Unavailable(f"Cannot reach the Docker engine: {exc}") from exc


def engine_info(client: docker.DockerClient) -> EngineInfo:
    try:
        version = client.version()
    except DockerException as exc:
        raise Unavailable(f"Cannot reach the Docker engine: {exc}") from exc
    return EngineInfo(
        version=version.get("Version", "?"), api_version=version.get("ApiVersion", "?")
    )


def insecure_registries(client: docker.DockerClient) -> Callable[[str], bool]:
    """The engine's own rule for plain-HTTP registries (its `insecure-registries`, which
    always include 127.0.0.0/8), so Stackyard falls back to HTTP exactly where docker does."""
    try:
        config = client.info().get("RegistryConfig") or {}
    except DockerException as exc:
        raise Unavailable(f"Cannot reach the Docker engine: {exc}") from exc
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
