"""`stackyard serve` and `stackyard agent`: run the service."""

from __future__ import annotations

import gc
import secrets
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from stackyard.cli import services

if TYPE_CHECKING:
    from stackyard.settings import Mode, Settings

HostOpt = Annotated[str | None, typer.Option("--host", help="Listen address")]
PortOpt = Annotated[int | None, typer.Option("--port", help="Listen port")]

GRACEFUL_SHUTDOWN_SECONDS = 3
#: How long an idle connection stays open: longer than browsers and proxies keep one
#: (Chromium 300 s, Firefox 115 s, Traefik 90 s, nginx 60 s). uvicorn's default of 5 s
#: closed connections they still meant to use, and a request that crossed the close was
#: lost (a browser does not send a file again: "Cannot reach the Stackyard server").
KEEP_ALIVE_SECONDS = 330

agent_app = typer.Typer(
    help="Run in agent mode (or `stackyard agent token`).", invoke_without_command=True
)


def _run(mode: Mode, host: str | None, port: int | None) -> None:
    # Start-up makes hundreds of thousands of objects that live as long as the service:
    # the collector, which would scan them again and again meanwhile, waits until the
    # warm-up freezes them (stackyard.root.start), 7 % of the start.
    gc.disable()
    # FastAPI asks of each route's types whether they are pydantic.v1 models, importing
    # pydantic.v1 to find out (1.5 MiB of an idle service): none are, and the answer
    # stays no without it.
    sys.modules.setdefault("pydantic.v1", None)  # type: ignore[arg-type]
    import uvicorn

    from stackyard.app import create_app
    from stackyard.logs import setup_logging
    from stackyard.process.tuning import limit_malloc_arenas, raise_open_files_limit

    limit_malloc_arenas()
    raise_open_files_limit()
    settings = services.settings()
    setup_logging(settings.log_level, settings.secrets())
    application = create_app(settings, mode)
    tls: dict[str, str] = {}
    if mode == "agent" and settings.agent_tls:
        tls = _agent_tls(settings)
    uvicorn.run(
        application,
        host=host or settings.host,
        port=port or settings.listen_port(mode),
        log_config=None,
        server_header=False,
        # Forwarded headers are believed only from STACKYARD_TRUSTED_PROXIES (api/deps.py).
        proxy_headers=False,
        # Open event streams (a dashboard, a log view) would hold a stop, and with it an
        # update's recreation, for the engine's whole stop timeout.
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        **tls,  # type: ignore[arg-type]
    )


def _agent_tls(settings: Settings) -> dict[str, str]:
    """The agent's certificate (the given one, or one made on the first start), its
    fingerprint printed for the user to compare with what the central shows."""
    from stackyard.agents import tls

    if settings.agent_tls_cert and settings.agent_tls_key:
        cert, key = settings.agent_tls_cert, settings.agent_tls_key
    else:
        settings.prepare_dirs()
        cert, key = tls.ensure_certificate(settings.data_dir)
    typer.echo(
        f"Agent TLS certificate fingerprint (SHA-256): {tls.certificate_fingerprint(cert)}",
        err=True,
    )
    return {"ssl_certfile": str(cert), "ssl_keyfile": str(key)}


def serve(host: HostOpt = None, port: PortOpt = None) -> None:
    """Run the central service: API under /api, web UI at /."""
    _run("central", host, port)


@agent_app.callback()
def agent(
    ctx: typer.Context,
    host: HostOpt = None,
    port: PortOpt = None,
    connect: Annotated[
        str | None,
        typer.Option(
            "--connect",
            envvar="STACKYARD_CONNECT_URL",
            help="Dial the central at this URL (an agent behind NAT): no port to open here",
        ),
    ] = None,
    enrol: Annotated[
        str | None,
        typer.Option("--enrol", help="The one-time token the central gave (the first start)"),
    ] = None,
) -> None:
    """Run in agent mode on a remote host: /agent routes behind the agent's token; with
    --connect, dialing the central, its routes on loopback only."""
    if ctx.invoked_subcommand is not None:
        return
    if connect:
        _connecting(connect, enrol, port)
        host = "127.0.0.1"
    _run("agent", host, port)


def _connecting(url: str, token: str | None, port: int | None) -> None:
    """An agent that dials its central: enrolled first when it is not (its key made,
    the central's pinned), then its settings for the tunnel: the agent token the
    central gave, plain HTTP on loopback (the tunnel is SSH)."""
    import os

    from stackyard.agents import dialer

    settings = services.settings()
    settings.prepare_dirs()
    found = dialer.identity(settings.data_dir)
    if found is None:
        if not token:
            typer.secho("error: not enrolled yet: give --enrol TOKEN", err=True, fg="red")
            raise typer.Exit(2)
        found = dialer.enrol(settings.data_dir, url, token)
        typer.echo(f"Enrolled with {url} as agent {found.agent_id}", err=True)
    elif token:
        typer.echo(
            f"Already enrolled (agent {found.agent_id}): --enrol is not needed any more; "
            f"remove {settings.data_dir / 'tunnel'} to enrol again",
            err=True,
        )
    os.environ.update(
        STACKYARD_CONNECT_URL=url,
        STACKYARD_AGENT_TOKEN=found.agent_token,
        STACKYARD_AGENT_TLS="false",
    )
    if port is not None:  # (the tunnel's channels go to the port the agent listens on)
        os.environ["STACKYARD_PORT"] = str(port)


@agent_app.command("token")
def agent_token() -> None:
    """Print a new random agent token (for STACKYARD_AGENT_TOKEN)."""
    typer.echo(secrets.token_urlsafe(32))


def health(
    agent: Annotated[bool, typer.Option("--agent", help="Ask the agent, not the central")] = False,
    port: PortOpt = None,
) -> None:
    """Print the version the service running here answers on loopback (with this
    environment's settings); exit status 1 when it does not answer."""
    from stackyard.cli.probe import own_version

    typer.echo(own_version(services.settings(), "agent" if agent else "central", port))


def register(app: typer.Typer) -> None:
    app.command()(serve)
    app.command()(health)
