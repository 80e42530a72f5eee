"""`stackyard stack ...`: stack actions on this host, drawn with a progress bar."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from stackyard.cli import _common

app = typer.Typer(no_args_is_help=True, help="Run stack actions on this host.")


@app.command("list")
def stack_list() -> None:
    """List the stacks of this host with their state."""
    for view in _common.stacks().list():
        running = sum(1 for s in view.status.services if s.running)
        typer.echo(
            f"{view.status.id}\t{view.status.state}\t"
            f"{running}/{len(view.status.services)} services running"
        )


def _action(name: str, action: str) -> None:
    from stackyard.cli.progress import draw
    from stackyard.stacks.runs import RunState

    service = _common.stacks()

    async def go() -> RunState | None:
        service.start(name, action)
        return await draw(service.follow(name))

    final = asyncio.run(go())
    if final is None or final.status != "succeeded":
        errors = "; ".join(final.progress.errors if final else []) or "failed"
        typer.secho(f"error: {action} of {name}: {errors}", err=True, fg=typer.colors.RED)
        raise typer.Exit(1)


def _register_action(command: str, action: str, help_text: str) -> None:
    def command_fn(name: Annotated[str, typer.Argument(help="The stack id")]) -> None:
        _action(name, action)

    command_fn.__doc__ = help_text
    app.command(command)(command_fn)


for _command, _act, _help in [
    ("up", "start", "Start a stack (compose up -d), with progress."),
    ("stop", "stop", "Stop a stack's containers."),
    ("restart", "restart", "Restart a stack's containers."),
    ("down", "down", "Stop and remove a stack's containers and networks."),
    ("pull", "pull", "Pull a stack's images."),
    ("update", "update", "Pull a stack's images, then recreate its containers."),
]:
    _register_action(_command, _act, _help)


@app.command("check")
def stack_check() -> None:
    """Ask the registries for newer image digests now and list the stacks that have one."""
    summary = asyncio.run(_common.stacks().updates.check())
    for stack in summary.stacks:
        states = ", ".join(f"{i.service}: {i.state}" for i in stack.images)
        typer.echo(f"{stack.stack}\t{'UPDATE' if stack.has_update else 'ok'}\t{states}")
