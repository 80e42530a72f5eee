"""The `stackyard` command: thin wrappers over the capability packages."""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Annotated

import typer

from stackyard import __version__
from stackyard.auth.principal import Role
from stackyard.errors import StackyardError

app = typer.Typer(
    no_args_is_help=True, add_completion=False, help="Stackyard: compose stacks, managed."
)
user_app = typer.Typer(no_args_is_help=True, help="Manage user accounts.")
token_app = typer.Typer(no_args_is_help=True, help="Manage API tokens.")
stack_app = typer.Typer(no_args_is_help=True, help="Run stack actions on this host.")
agent_app = typer.Typer(
    help="Run in agent mode (or `stackyard agent token`).", invoke_without_command=True
)
app.add_typer(user_app, name="user")
app.add_typer(token_app, name="token")
app.add_typer(agent_app, name="agent")
app.add_typer(stack_app, name="stack")

HostOpt = Annotated[str | None, typer.Option("--host", help="Listen address")]
PortOpt = Annotated[int | None, typer.Option("--port", help="Listen port")]


def _settings():
    from stackyard.settings import Settings

    return Settings()


def _database():
    from stackyard.db import Database

    settings = _settings()
    settings.prepare_dirs()
    db = Database(settings.effective_database_url)
    db.reconcile()
    return db


def _fail(error: StackyardError) -> None:
    typer.secho(f"error: {error.detail}", err=True, fg=typer.colors.RED)
    raise typer.Exit(1)


def _run(mode: str, host: str | None, port: int | None, default_port: int) -> None:
    import uvicorn

    from stackyard.app import create_app
    from stackyard.logs import setup_logging

    settings = _settings()
    setup_logging(settings.log_level, settings.secrets())
    try:
        application = create_app(settings, mode)  # type: ignore[arg-type]
    except StackyardError as exc:
        _fail(exc)
    uvicorn.run(
        application,
        host=host or settings.host,
        port=port or (settings.port if mode == "central" else default_port),
        log_config=None,
        server_header=False,
        # Forwarded headers are believed only from STACKYARD_TRUSTED_PROXIES (api/deps.py).
        proxy_headers=False,
    )


@app.command()
def serve(host: HostOpt = None, port: PortOpt = None) -> None:
    """Run the central service: API under /api, web UI at /."""
    _run("central", host, port, 8080)


@agent_app.callback()
def agent(ctx: typer.Context, host: HostOpt = None, port: PortOpt = None) -> None:
    """Run in agent mode on a remote host: /agent routes behind the agent's token."""
    if ctx.invoked_subcommand is None:
        _run("agent", host, port, 8081)


@agent_app.command("token")
def agent_token() -> None:
    """Print a new random agent token (for STACKYARD_AGENT_TOKEN)."""
    typer.echo(secrets.token_urlsafe(32))


def _read_password(password_stdin: bool) -> str:
    if password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    return typer.prompt("Password", hide_input=True, confirmation_prompt=True)


PasswordStdin = Annotated[
    bool, typer.Option("--password-stdin", help="Read the password from standard input")
]


@user_app.command("create")
def user_create(
    name: str,
    role: Annotated[
        Role,
        typer.Option("--role", help="admin, operator (runs actions) or viewer (reads only)"),
    ] = Role.viewer,
    admin: Annotated[bool, typer.Option("--admin", help="Same as --role admin")] = False,
    password_stdin: PasswordStdin = False,
) -> None:
    """Create a user (role `viewer` unless --role or --admin says otherwise)."""
    from stackyard.auth.users import create_user

    role = Role.admin if admin else role
    try:
        create_user(_database(), "cli", name, _read_password(password_stdin), role)
    except StackyardError as exc:
        _fail(exc)
    typer.echo(f"Created user {name!r} ({role})")


@user_app.command("passwd")
def user_passwd(name: str, password_stdin: PasswordStdin = False) -> None:
    """Set a user's password (their sessions end)."""
    from stackyard.auth.users import set_password

    try:
        set_password(_database(), "cli", name, _read_password(password_stdin))
    except StackyardError as exc:
        _fail(exc)
    typer.echo(f"Password of {name!r} changed")


@user_app.command("list")
def user_list() -> None:
    """List users and their roles."""
    from stackyard.auth.users import list_users

    for user in list_users(_database()):
        typer.echo(f"{user.username}\t{user.role}")


@token_app.command("create")
def token_create(
    name: str,
    label: Annotated[str, typer.Option("--label", help="What the token is for")] = "cli",
) -> None:
    """Print a new API token for user NAME (send it as `Authorization: Bearer ...`)."""
    from stackyard.auth.api_tokens import create_token
    from stackyard.auth.users import get_user

    db = _database()
    try:
        with db.session() as session:
            user_id = get_user(session, name).id
        _, secret = create_token(db, user_id, label)
    except StackyardError as exc:
        _fail(exc)
    typer.echo(secret)


def _stacks():
    from stackyard.stacks.host import Host
    from stackyard.stacks.service import StackService

    settings = _settings()
    settings.prepare_dirs()
    return StackService(Host(settings))


@stack_app.command("list")
def stack_list() -> None:
    """List the stacks of this host with their state."""
    try:
        views = _stacks().list()
    except StackyardError as exc:
        _fail(exc)
    for view in views:
        running = sum(1 for s in view.status.services if s.running)
        typer.echo(
            f"{view.status.id}\t{view.status.state}\t"
            f"{running}/{len(view.status.services)} services running"
        )


def _action(name: str, action: str) -> None:
    import asyncio

    from stackyard.cli_progress import draw

    service = _stacks()

    async def go() -> dict:
        service.start(name, action)
        return await draw(service.follow(name))

    try:
        final = asyncio.run(go())
    except StackyardError as exc:
        _fail(exc)
    if final.get("status") != "succeeded":
        errors = "; ".join(final.get("progress", {}).get("errors", [])) or "failed"
        typer.secho(f"error: {action} of {name}: {errors}", err=True, fg=typer.colors.RED)
        raise typer.Exit(1)


def _register_action(command: str, action: str, help_text: str) -> None:
    def command_fn(name: Annotated[str, typer.Argument(help="The stack id")]) -> None:
        _action(name, action)

    command_fn.__doc__ = help_text
    stack_app.command(command)(command_fn)


for _command, _act, _help in [
    ("up", "start", "Start a stack (compose up -d), with progress."),
    ("stop", "stop", "Stop a stack's containers."),
    ("restart", "restart", "Restart a stack's containers."),
    ("down", "down", "Stop and remove a stack's containers and networks."),
    ("pull", "pull", "Pull a stack's images."),
    ("update", "update", "Pull a stack's images, then recreate its containers."),
]:
    _register_action(_command, _act, _help)


@stack_app.command("check")
def stack_check() -> None:
    """Ask the registries for newer image digests now and list the stacks that have one."""
    import asyncio

    try:
        summary = asyncio.run(_stacks().updates.check())
    except StackyardError as exc:
        _fail(exc)
    for stack in summary.stacks:
        states = ", ".join(f"{i.service}: {i.state}" for i in stack.images)
        typer.echo(f"{stack.stack}\t{'UPDATE' if stack.has_update else 'ok'}\t{states}")


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
