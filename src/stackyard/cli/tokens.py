"""`stackyard token ...`: API tokens."""

from __future__ import annotations

from typing import Annotated

import typer

from stackyard.cli import services

app = typer.Typer(no_args_is_help=True, help="Manage API tokens.")


@app.command("create")
def token_create(
    name: str,
    label: Annotated[str, typer.Option("--label", help="What the token is for")] = "cli",
) -> None:
    """Print a new API token for user NAME (send it as `Authorization: Bearer ...`)."""
    from stackyard.auth.api_tokens import create_token
    from stackyard.auth.users import get_user

    db = services.database()
    with db.session() as session:
        user_id = get_user(session, name).id
    _, secret = create_token(db, user_id, label)
    typer.echo(secret)
