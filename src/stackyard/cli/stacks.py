"""`stackyard stack ...`: stack actions on this host, drawn with a progress bar."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from stackyard.cli import services

app = typer.Typer(no_args_is_help=True, help="Run stack actions on this host.")


AgentOpt = Annotated[
    str | None, typer.Option("--agent", help="On this agent (id or name) instead of this host")
]


@app.command("list")
def stack_list(agent: AgentOpt = None) -> None:
    """List the stacks of this host (or an agent's) with their state."""
    if agent is not None:
        from stackyard.cli.agents import remote_stacks

        for stack in remote_stacks(agent):
            running = sum(1 for s in stack.services if s.running)
            typer.echo(
                f"{stack.id}\t{stack.state}\t{running}/{len(stack.services)} services running"
            )
        return
    stacks = services.stacks()
    for view in stacks.list():
        running = sum(1 for s in view.services if s.running)
        line = f"{view.id}\t{view.state}\t{running}/{len(view.services)} services running"
        last = stacks.machine.runs.last(view.id)
        if last is not None and last.status in ("failed", "interrupted"):
            line += f"\tlast run: {last.action} {last.status}"  # (interrupted: the service stopped)
        typer.echo(line)


def _action(name: str, action: str, agent: str | None) -> None:
    from stackyard.cli.progress import draw
    from stackyard.stacks.runs import RunState

    async def go() -> RunState | None:
        service = services.stacks()
        service.start(name, action)
        return await draw(service.follow(name))

    if agent is None:
        final = asyncio.run(go())
    else:
        from stackyard.cli.agents import remote_action

        final = remote_action(agent, name, action)
    if final is None or final.status != "succeeded":
        errors = "; ".join(final.progress.errors if final else []) or "failed"
        typer.secho(f"error: {action} of {name}: {errors}", err=True, fg=typer.colors.RED)
        raise typer.Exit(1)


def _register_action(command: str, action: str, help_text: str) -> None:
    def command_fn(
        name: Annotated[str, typer.Argument(help="The stack id")], agent: AgentOpt = None
    ) -> None:
        _action(name, action, agent)

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
    summary = asyncio.run(services.stacks().updates.check())
    for stack in summary.stacks:
        states = ", ".join(f"{i.service}: {i.state}" for i in stack.images)
        typer.echo(f"{stack.stack}\t{'UPDATE' if stack.has_update else 'ok'}\t{states}")


#: Colours of the container names, one per container in turn (as `docker compose logs`).
_COLOURS = ["cyan", "yellow", "green", "magenta", "blue", "bright_cyan", "bright_yellow"]


@app.command("logs")
def stack_logs(
    name: Annotated[str, typer.Argument(help="The stack id")],
    service: Annotated[str | None, typer.Argument(help="Only this service")] = None,
    follow: Annotated[bool, typer.Option("-f", "--follow", help="Follow new lines")] = False,
    tail: Annotated[int, typer.Option("--tail", "-n", help="Lines before following")] = 300,
    timestamps: Annotated[bool, typer.Option("-t", "--timestamps", help="Show times")] = False,
) -> None:
    """Show a stack's logs (all its containers, or one service's): the last lines, then
    with -f new ones as they come, also from containers recreated meanwhile. Ctrl-C ends."""
    from stackyard.containers.logs import LogLine

    containers = services.stacks().containers
    colours: dict[str, str] = {}
    width = 0

    def show(line: LogLine) -> None:
        nonlocal width
        colour = colours.setdefault(line.container, _COLOURS[len(colours) % len(_COLOURS)])
        width = max(width, len(line.container))
        prefix = typer.style(f"{line.container:<{width}} |", fg=colour)
        stamp = f"{line.time} " if timestamps else ""
        typer.echo(f"{prefix} {stamp}{line.text}", err=line.stream == "stderr")

    async def go() -> None:
        reader = await containers.log_reader(name, service)
        try:
            async for batch in containers.logs(reader, tail, follow):
                for line in batch:
                    show(line)
        finally:
            await containers.machine.aclose()

    try:
        asyncio.run(go())
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
