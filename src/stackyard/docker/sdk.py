"""The Docker SDK as the rest of `stackyard.docker` uses it, loaded when first used.

The SDK brings requests, urllib3 and charset-normalizer with it (0.07 s): a start of the
service does not wait for them, since its first call to the engine is made by the
warm-up that follows. The names are the SDK's own (`sdk.DockerException`, ...)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docker import DockerClient as DockerClient
    from docker import from_env as from_env
    from docker.errors import APIError as APIError
    from docker.errors import DockerException as DockerException
    from docker.errors import ImageNotFound as ImageNotFound
    from docker.errors import NotFound as NotFound
    from docker.types import LogConfig as LogConfig
    from docker.types import Mount as Mount
    from docker.utils import parse_repository_tag as parse_repository_tag
    from requests import RequestException as RequestException

_MODULE_OF = {
    "DockerClient": "docker",
    "from_env": "docker",
    "APIError": "docker.errors",
    "DockerException": "docker.errors",
    "ImageNotFound": "docker.errors",
    "NotFound": "docker.errors",
    "LogConfig": "docker.types",
    "Mount": "docker.types",
    "parse_repository_tag": "docker.utils",
    "RequestException": "requests",
}


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value  # found directly from now on
    return value
