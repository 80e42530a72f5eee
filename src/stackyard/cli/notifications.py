"""`stackyard notifications ...`: the channels notifications go to, and a test of one."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from stackyard.cli import services
from stackyard.errors import NotFound

app = typer.Typer(no_args_is_help=True, help="Notification channels.")


@app.command("list")
def channel_list() -> None:
    """id, name, kind, enabled, last success, last error."""
    for view in services.notifications().channels.all():
        success = view.last_success_at.isoformat() if view.last_success_at else "-"
        error = f"{view.last_error_at.isoformat()} {view.last_error}" if view.last_error_at else "-"
        state = "enabled" if view.enabled else "disabled"
        typer.echo(f"{view.id}\t{view.name}\t{view.kind}\t{state}\t{success}\t{error}")


@app.command("test")
def channel_test(
    channel: Annotated[str, typer.Argument(help="The channel's id or name")],
) -> None:
    """Send a test message; exits 1 with what the service answered when it failed."""
    from stackyard.notifications.trials import test_saved

    channels = services.notifications().channels
    found = next((v for v in channels.all() if channel in (str(v.id), v.name)), None)
    if found is None:
        raise NotFound(f"No notification channel {channel!r} (see `stackyard notifications list`)")
    result = asyncio.run(test_saved(channels, found.id))
    typer.echo(result.detail)
    if not result.ok:
        raise typer.Exit(1)
