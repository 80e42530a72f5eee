"""Connects to the engine and converts the SDK's errors at this seam."""

from __future__ import annotations

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
