"""`stackyard user ...`: user accounts."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from stackyard.auth.principal import Role
from stackyard.cli import services

app = typer.Typer(no_args_is_help=True, help="Manage user accounts.")

PasswordStdin = Annotated[
    bool, typer.Option("--password-stdin", help="Read the password from standard input")
]


def _read_password(password_stdin: bool) -> str:
    if password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    password: str = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    return password


@app.command("create")
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
    from stackyard.auth.audit import audited
    from stackyard.auth.users import create_user

    role = Role.admin if admin else role
    db = services.database()
    with audited(db, "cli", "user.create", name) as note:
        note.detail = f"role={role}"
        create_user(db, name, _read_password(password_stdin), role)
    typer.echo(f"Created user {name!r} ({role})")


@app.command("passwd")
def user_passwd(name: str, password_stdin: PasswordStdin = False) -> None:
    """Set a user's password (their sessions end)."""
    from stackyard.auth.audit import audited
    from stackyard.auth.users import set_password

    db = services.database()
    with audited(db, "cli", "user.set_password", name):
        set_password(db, name, _read_password(password_stdin))
    typer.echo(f"Password of {name!r} changed")


@app.command("list")
def user_list() -> None:
    """List users and their roles."""
    from stackyard.auth.users import list_users

    for user in list_users(services.database()):
        typer.echo(f"{user.username}\t{user.role}")


@app.command("reset-two-factor")
def user_reset_two_factor(name: str) -> None:
    """Turn a user's two-factor sign-in off (a lost phone; also for the last admin, who
    has nobody to ask): their sessions end and their API tokens are revoked."""
    from stackyard.auth.audit import audited
    from stackyard.auth.totp import Totp

    db = services.database()
    with audited(db, "cli", "auth.two_factor.reset", name):
        Totp(db, services.settings().effective_secret_key).reset(name)
    typer.echo(f"Two-factor sign-in of {name!r} is off; they can set it up again")
