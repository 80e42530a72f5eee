"""`stackyard backup ...`: back up and restore this host's stacks, with a progress bar."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated

import typer

from stackyard.cli import services

if TYPE_CHECKING:
    from stackyard.backups.service import BackupService
    from stackyard.stacks.runs import Run, RunState

app = typer.Typer(no_args_is_help=True, help="Back up and restore stacks on this host.")


def _follow(
    start: Callable[[BackupService], Awaitable[Run]], service: BackupService | None = None
) -> None:
    """Start a backup, a restore or a transfer and draw its progress to its end."""
    from stackyard.cli.progress import draw

    service = service or services.backups()

    async def go() -> RunState | None:
        run = await start(service)
        return await draw(service.stacks.follow(run.stack))

    final = asyncio.run(go())
    if final is not None and final.status == "partial":
        typer.secho("error: done in part only (see the lines above)", err=True, fg=typer.colors.RED)
        raise typer.Exit(1)
    if final is None or final.status != "succeeded":
        errors = "; ".join(final.progress.errors if final else []) or "failed"
        typer.secho(f"error: {errors}", err=True, fg=typer.colors.RED)
        raise typer.Exit(1)
    if final.summary:
        typer.echo(final.summary)


@app.command("create")
def backup_create(
    stack: Annotated[str, typer.Argument(help="The stack id")],
    volume: Annotated[
        list[str] | None, typer.Option("--volume", help="Only these volumes (repeat)")
    ] = None,
    bind: Annotated[
        list[str] | None, typer.Option("--bind", help="Only these binds (repeat)")
    ] = None,
    no_binds: Annotated[bool, typer.Option("--no-binds", help="No bind folders")] = False,
) -> None:
    """Back up a stack: its folder, and its volumes and binds as its inventory selects
    them (or as chosen). A running stack is stopped for the copy and started again."""
    from stackyard.backups.capture import Selection

    selection = Selection(include_binds=not no_binds, binds=bind or None, volumes=volume or None)
    _follow(lambda service: service.create(stack, selection))


@app.command("list")
def backup_list() -> None:
    """The archives kept on this host, newest first."""
    for info in services.backups().store.list():
        if info.error:
            typer.echo(f"{info.name}\t{info.size}\tunreadable: {info.error}")
            continue
        created = info.created_at.isoformat() if info.created_at else "?"
        typer.echo(
            f"{info.name}\t{info.stack_id}\t{info.host}\t{info.size}\t{created}\t"
            f"v{info.format_version}\t{len(info.assets)} volumes and binds"
        )


@app.command("verify")
def backup_verify(name: Annotated[str, typer.Argument(help="The archive's name")]) -> None:
    """Read an archive through: every member's checksum, every entry safe to restore."""
    service = services.backups()
    report = service.store.verify(name)
    manifest = service.manifest(name) if report.ok else None
    kept = {a.member: a.fidelity for a in manifest.assets} if manifest else {}
    if manifest:
        kept[manifest.stack_member] = manifest.stack_fidelity
    for member in report.members:
        typer.echo(f"{member.member}\t{member.bytes} bytes\t{member.files} files\tok")
        if (fidelity := kept.get(member.member)) and fidelity.tool != "gnu-tar":
            typer.echo(f"  read by {fidelity.tool}, not kept: {', '.join(fidelity.not_kept)}")
        for entry in member.special:
            typer.echo(f"  device node, setuid/setgid file or file with capabilities: {entry}")
    if not report.ok:
        typer.secho(f"error: {report.error}", err=True, fg=typer.colors.RED)
        raise typer.Exit(1)
    typer.echo(f"{name}: ok")


@app.command("drill")
def backup_drill(
    name: Annotated[str, typer.Argument(help="The archive's name")],
    settle: Annotated[
        int, typer.Option("--settle", help="Seconds services without a health check must run")
    ] = 30,
) -> None:
    """Prove an archive restores: restored into a scratch clone (its own volumes, no
    network, no published ports, nothing of the original's), compared with the archive,
    started and waited for, then removed."""
    _follow(lambda service: service.drill(name, settle))


@app.command("restore")
def backup_restore(
    name: Annotated[str, typer.Argument(help="The archive's name")],
    as_name: Annotated[str | None, typer.Option("--as", help="Restore as a new stack")] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Over an existing stack (volumes wiped first)")
    ] = False,
    no_binds: Annotated[bool, typer.Option("--no-binds", help="Do not write binds back")] = False,
    asset: Annotated[
        list[str] | None, typer.Option("--asset", help="Only these volumes or binds (repeat)")
    ] = None,
    special_files: Annotated[
        bool,
        typer.Option(
            "--special-files",
            help="Write device nodes and setuid/setgid files outside volumes too",
        ),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", help="Write the paths outside the stack folder unasked")
    ] = False,
) -> None:
    """Restore an archive into its stack (or a new one with --as). The paths it would
    write outside the stack folder are shown first, and written once confirmed."""
    from stackyard.backups.service import RestoreRequest

    request = RestoreRequest(as_name, overwrite, not no_binds, asset or None, special_files)
    service = services.backups()
    path = service.store.path(name)
    preview = asyncio.run(service.preview(path, request))
    for key, why in preview.skipped.items():
        typer.echo(f"not restored: {key.partition(':')[2]} ({why})")
    for write in preview.outside:
        typer.echo(
            f"outside the stack folder: {write.path} ({'replaced' if write.replaced else 'made'})"
        )
    if preview.outside and not yes and not typer.confirm("Write these paths?"):
        raise typer.Exit(1)
    confirmed = dataclasses.replace(request, confirm_paths=[w.path for w in preview.outside])
    _follow(lambda service: service.restore(path, confirmed), service)


@app.command("push")
def backup_push(
    name: Annotated[str, typer.Argument(help="The archive's name")],
    to: Annotated[str, typer.Option("--to", help="The destination's id or name")],
) -> None:
    """Upload an archive of this host to a destination."""
    central = services.central()
    moves = central.transfers
    destination = services.destination_id(moves.destinations, to)

    async def start(_: BackupService) -> Run:
        return moves.push(name, destination)

    _follow(start, central.backups)


@app.command("pull")
def backup_pull(
    source: Annotated[str, typer.Argument(help="The destination's id or name")],
    name: Annotated[str, typer.Argument(help="The archive's name there")],
) -> None:
    """Download an archive from a destination into this host's archives (then restore it
    with `stackyard backup restore`)."""
    central = services.central()
    moves = central.transfers
    destination = services.destination_id(moves.destinations, source)
    _follow(lambda _: moves.pull(destination, name), central.backups)
