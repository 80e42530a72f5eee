"""`stackyard destination ...` and `stackyard schedule ...`: the destinations and the
backup schedules of this service."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from stackyard.cli import services
from stackyard.destinations import model

destination_app = typer.Typer(no_args_is_help=True, help="Backup destinations (SFTP, S3, NFS).")
schedule_app = typer.Typer(no_args_is_help=True, help="Backup schedules of this host.")


@destination_app.command("list")
def destination_list() -> None:
    """id, name, type, where, and the pinned SSH host key."""
    for view in services.central().destinations.all():
        settings = view.settings
        where = model.where(settings)
        pinned = view.host_key_fingerprint or (
            "(not pinned yet)" if settings.type == "sftp" else ""
        )
        typer.echo(f"{view.id}\t{view.name}\t{settings.type}\t{where}\t{pinned}".rstrip())


@destination_app.command("test")
def destination_test(
    destination: Annotated[str, typer.Argument(help="The destination's id or name")],
) -> None:
    """Reach the destination, write and remove a small file (pins an SFTP host key)."""
    service = services.central().destinations
    result = asyncio.run(service.test(services.destination_id(service, destination)))
    typer.echo(result.detail)


@destination_app.command("archives")
def destination_archives(
    destination: Annotated[str, typer.Argument(help="The destination's id or name")],
) -> None:
    """The archives Stackyard made that the destination holds, newest first."""
    service = services.central().destinations
    for archive in asyncio.run(service.archives(services.destination_id(service, destination))):
        typer.echo(f"{archive.name}\t{archive.size}\t{archive.modified.isoformat()}")


@schedule_app.command("list")
def schedule_list() -> None:
    """id, name, timetable, stacks, destination, next run, last outcome."""
    for view in services.central().schedules.all():
        stacks = ",".join(view.stacks) if view.stacks else "(every stack)"
        next_run = view.next_run_at.isoformat() if view.next_run_at else "(disabled)"
        typer.echo(
            f"{view.id}\t{view.name}\t{view.cron} {view.timezone}\t{stacks}\t"
            f"{view.destination_id or 'local'}\t{next_run}\t{view.last_status or '-'}"
        )


@schedule_app.command("run")
def schedule_run(
    schedule: Annotated[str, typer.Argument(help="The schedule's id or name")],
) -> None:
    """Run a schedule now, out of its timetable, and report each stack's outcome."""
    central = services.central()
    scheduler = central.scheduler
    found = [v for v in scheduler.store.all() if schedule in (str(v.id), v.name)]
    if not found:
        typer.secho(f"error: no schedule {schedule!r}", err=True, fg=typer.colors.RED)
        raise typer.Exit(1)
    view = found[0]
    agent = central.agents.get(view.agent_id) if view.agent_id is not None else None
    if agent is not None and agent.kind == "tunnel":
        # Its tunnel ends in the running service, which this command is not.
        typer.secho(
            f"error: schedule {view.name!r} runs on agent {agent.name!r}, which dials in: only "
            f"the running service reaches it; run it from the web UI (or POST "
            f"/api/schedules/{view.id}/run)",
            err=True,
            fg=typer.colors.RED,
        )
        raise typer.Exit(1)

    failed = False
    firing = scheduler.fire(view.id, scheduler.claim_now(view.id), False)
    runs = services.run(central, firing)
    for made in runs:
        failed |= made.outcome != "succeeded"
        detail = made.error or f"{made.archive} ({made.size} bytes, {made.pruned} pruned)"
        typer.echo(f"{made.stack_id}\t{made.outcome}\t{detail}")
    if not runs and scheduler.store.get(view.id).last_status == "failed":
        # (before any stack: its host was not reached; the log above says why)
        typer.secho(
            f"error: schedule {view.name!r} failed before it ran any stack",
            err=True,
            fg=typer.colors.RED,
        )
        raise typer.Exit(1)
    if failed:
        raise typer.Exit(1)
