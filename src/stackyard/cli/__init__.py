"""The `stackyard` command: thin wrappers over the capability packages.

One module per command group (`serve`: serve and agent; `users`; `tokens`; `stacks`),
the services they build in `services`, and one error handler for all of them
(`_ReportErrors`): a `StackyardError` from any command becomes `error: <detail>` on
stderr and exit status 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer import _click  # typer >= 0.22 vendors click: its Context is the base
from typer.core import TyperGroup

from stackyard import __version__
from stackyard.errors import StackyardError

__all__ = ["app", "main"]


class _ReportErrors(TyperGroup):
    """The top-level group: every command (nested ones too) runs inside its `invoke`."""

    def invoke(self, ctx: _click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except StackyardError as exc:
            typer.secho(f"error: {exc.detail}", err=True, fg=typer.colors.RED)
            raise typer.Exit(1) from exc


app = typer.Typer(
    cls=_ReportErrors,
    no_args_is_help=True,
    add_completion=False,
    help="Stackyard: compose stacks, managed.",
)


def _register() -> None:
    from stackyard.cli import (
        agents,
        backups,
        destinations,
        notifications,
        serve,
        stacks,
        tokens,
        users,
    )

    serve.register(app)
    app.add_typer(users.app, name="user")
    app.add_typer(tokens.app, name="token")
    app.add_typer(serve.agent_app, name="agent")
    app.add_typer(agents.app, name="agents")
    app.command("fleet")(agents.fleet)
    app.add_typer(stacks.app, name="stack")
    app.add_typer(backups.app, name="backup")
    app.add_typer(destinations.destination_app, name="destination")
    app.add_typer(destinations.schedule_app, name="schedule")
    app.add_typer(notifications.app, name="notifications")


_register()


@app.command()
def openapi(
    out: Annotated[Path | None, typer.Option("--out", help="Write to this file")] = None,
) -> None:
    """Print the OpenAPI schema of the central service."""
    from stackyard.app import openapi_text

    text = openapi_text()
    if out:
        out.write_text(text)
    else:
        typer.echo(text, nl=False)


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    app()
