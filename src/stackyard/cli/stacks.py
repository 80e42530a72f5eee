"""`stackyard stack ...`: stack actions on this host, drawn with a progress bar."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated

import typer

from stackyard.cli import services

if TYPE_CHECKING:
    from stackyard.stacks.updates import ImageUpdate

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
    """Ask the registries for newer images now and list the stacks that have one: the new
    version tag and how big a step it is, and what was rolled back before."""
    summary = asyncio.run(services.stacks().updates.check())
    for stack in summary.stacks:
        states = ", ".join(_image_line(i) for i in stack.images)
        typer.echo(f"{stack.stack}\t{'UPDATE' if stack.has_update else 'ok'}\t{states}")
        last = stack.last_update
        if last is not None and last.outcome in ("rolled_back", "rollback_failed"):
            typer.echo(f"\tlast update {last.outcome.replace('_', ' ')}: {last.detail}")


def _image_line(image: ImageUpdate) -> str:
    line = f"{image.service}: {image.state}"
    if image.new_tag:
        line += f" -> {image.new_tag}"
    version = image.release.version if image.release else None
    if version and not image.new_tag:
        line += f" -> {version}"
    if image.jump:
        line += f" ({image.jump})"
    if image.rolled_back:
        line += " [rolled back before]"
    return line


@app.command("policy")
def stack_policy(
    name: Annotated[str, typer.Argument(help="The stack id")],
    mode: Annotated[str | None, typer.Option(help="off, notify or auto")] = None,
    track: Annotated[str | None, typer.Option(help="digest, patch, minor or major")] = None,
    prereleases: Annotated[
        bool | None, typer.Option("--prereleases/--no-prereleases", help="Count pre-releases")
    ] = None,
    health_timeout: Annotated[int | None, typer.Option(help="Seconds to be healthy")] = None,
    settle: Annotated[int | None, typer.Option(help="Seconds without a healthcheck")] = None,
    cooldown_hours: Annotated[int | None, typer.Option(help="Minimum age of an image")] = None,
    window: Annotated[str | None, typer.Option(help="Cron of the maintenance window")] = None,
    window_minutes: Annotated[int | None, typer.Option(help="Its length")] = None,
    timezone: Annotated[str | None, typer.Option(help="Its zone")] = None,
    inherit: Annotated[bool, typer.Option(help="Follow this host's default again")] = False,
) -> None:
    """Show a stack's update policy, or change it (the options given; the rest stay)."""
    from pydantic import ValidationError

    from stackyard.errors import Invalid
    from stackyard.stacks.policy import UpdatePolicy

    stacks = services.stacks()
    stacks.machine.store.folder(name)
    if inherit:
        stacks.set_policy(name, None)
    asked = {
        "mode": mode,
        "track": track,
        "prereleases": prereleases,
        "health_timeout": health_timeout,
        "settle": settle,
        "cooldown_hours": cooldown_hours,
        "window": window,
        "window_minutes": window_minutes,
        "timezone": timezone,
    }
    changes = {key: value for key, value in asked.items() if value is not None}
    if changes:
        current = stacks.machine.prefs.policy(name).model_dump()
        try:
            policy = UpdatePolicy.model_validate(current | changes)
        except ValidationError as exc:  # said by the one error handler, as every refusal
            why = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise Invalid(why) from None
        stacks.set_policy(name, policy)
    own = stacks.machine.prefs.get(name).policy is not None
    typer.echo(f"{name}: {'its own policy' if own else 'the host default'}")
    for key, value in stacks.machine.prefs.policy(name).model_dump().items():
        typer.echo(f"  {key}: {value}")


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
    from stackyard.containers.logs import LogLine, log_batches

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
            async for batch in log_batches(reader, tail, follow):
                for line in batch:
                    show(line)
        finally:
            await containers.machine.aclose()

    try:
        asyncio.run(go())
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
