"""What the dashboard shows about this host: engine, compose tool, stacks folder."""

from __future__ import annotations

from dataclasses import dataclass

from stackyard.compose.probe import ComposeTool, compose_tool
from stackyard.docker.engine import EngineInfo, connect, engine_info
from stackyard.errors import Unavailable
from stackyard.settings import Settings


@dataclass(frozen=True)
class HostInfo:
    version: str
    engine: EngineInfo | None
    engine_error: str | None
    compose: ComposeTool
    stacks_dir: str


def host_info(settings: Settings) -> HostInfo:
    engine, error = None, None
    try:
        client = connect(settings.docker_host, timeout=10)
        try:
            engine = engine_info(client)
        finally:
            client.close()
    except Unavailable as exc:
        error = exc.detail
    return HostInfo(
        version=settings.app_version,
        engine=engine,
        engine_error=error,
        compose=compose_tool(),
        stacks_dir=str(settings.stacks_dir.resolve()),
    )
