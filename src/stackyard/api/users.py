"""User administration (admin only). Every change is audited here, where the actor is
known (`stackyard.auth.audit`): capability code never audits."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Depends, status
from pydantic import BaseModel, Field

from stackyard.api.auth import TokenOut
from stackyard.api.deps import AdminDep, DbDep, TotpDep, require_admin
from stackyard.api.models import Body, DbId
from stackyard.auth import api_tokens, users
from stackyard.auth.audit import audited
from stackyard.auth.principal import Role
from stackyard.db.models import User

router = APIRouter(prefix="/users", tags=["users"], dependencies=[Depends(require_admin)])

_ROLE_HELP = (
    "admin: everything, including editing compose files and `.env` (which can mount any "
    "host path); operator: start, stop, restart, pull and update stacks, read status; "
    "viewer: read only"
)


class UserIn(Body):
    username: str = Field(max_length=64)
    password: str = Field(max_length=1024)
    role: Role = Field(Role.viewer, strict=False, description=_ROLE_HELP)


class UserChange(Body):
    role: Role | None = Field(None, strict=False, description=_ROLE_HELP)
    disabled: bool | None = Field(
        None, description="A disabled account cannot sign in; its sessions and tokens end"
    )
    email: str | None = Field(
        None,
        max_length=255,
        description="What an identity provider's verified email links this account by "
        "(when the admin allowed linking); empty clears it",
    )
    two_factor_required: bool | None = Field(
        None,
        description="The user must set up two-factor sign-in at their next sign-in "
        "(password sign-in only; API tokens are not affected)",
    )


class PasswordIn(Body):
    password: str = Field(max_length=1024)


class UserRow(BaseModel):
    id: int
    username: str
    role: Role
    disabled: bool
    created_at: datetime
    email: str | None
    two_factor: bool = Field(description="Two-factor sign-in is on")
    two_factor_required: bool
    provider_account: bool = Field(description="Signs in through the identity provider")

    @classmethod
    def of(cls, user: User) -> UserRow:
        return cls(
            id=user.id,
            username=user.username,
            role=Role(user.role),
            disabled=user.disabled,
            created_at=user.created_at,
            email=user.email,
            two_factor=user.totp_secret is not None,
            two_factor_required=user.totp_required,
            provider_account=user.oidc_subject is not None,
        )


@router.get("", operation_id="listUsers")
def list_users(db: DbDep) -> list[UserRow]:
    return [UserRow.of(u) for u in users.list_users(db)]


@router.post("", operation_id="createUser", status_code=status.HTTP_201_CREATED)
def create_user(body: UserIn, admin: AdminDep, db: DbDep) -> UserRow:
    with audited(db, admin.username, "user.create", body.username) as note:
        note.detail = f"role={body.role}"
        user = users.create_user(db, body.username, body.password, body.role)
    return UserRow.of(user)


@router.patch("/{username}", operation_id="updateUser")
def update_user(username: str, body: UserChange, admin: AdminDep, db: DbDep) -> UserRow:
    """Change the role or disable the account; either ends the user's sessions and
    revokes their API tokens."""
    with audited(db, admin.username, "user.update", username) as note:
        user, note.detail = users.update_user(
            db,
            admin.username,
            username,
            body.role,
            body.disabled,
            body.email,
            body.two_factor_required,
        )
    return UserRow.of(user)


@router.put(
    "/{username}/password", operation_id="setUserPassword", status_code=status.HTTP_204_NO_CONTENT
)
def set_password(username: str, body: PasswordIn, admin: AdminDep, db: DbDep) -> None:
    """Their sessions end and their API tokens are revoked."""
    with audited(db, admin.username, "user.set_password", username):
        users.set_password(db, username, body.password)


@router.post(
    "/{username}/two-factor/reset",
    operation_id="resetUserTwoFactor",
    status_code=status.HTTP_204_NO_CONTENT,
)
def reset_two_factor(username: str, admin: AdminDep, db: DbDep, totp: TotpDep) -> None:
    """Turns the user's two-factor sign-in off (a lost phone); their sessions end and
    their API tokens are revoked. If it is required they set it up at their next sign-in."""
    with audited(db, admin.username, "auth.two_factor.reset", username):
        totp.reset(username)


@router.delete("/{username}", operation_id="deleteUser", status_code=status.HTTP_204_NO_CONTENT)
def delete_user(username: str, admin: AdminDep, db: DbDep) -> None:
    with audited(db, admin.username, "user.delete", username):
        users.delete_user(db, admin.username, username)


@router.get("/{username}/tokens", operation_id="listUserTokens")
def list_user_tokens(username: str, db: DbDep) -> list[TokenOut]:
    rows = api_tokens.tokens_of(db, username)
    return [TokenOut.model_validate(r, from_attributes=True) for r in rows]


@router.delete(
    "/{username}/tokens/{token_id}",
    operation_id="revokeUserToken",
    status_code=status.HTTP_204_NO_CONTENT,
)
def revoke_user_token(username: str, token_id: DbId, admin: AdminDep, db: DbDep) -> None:
    with audited(db, admin.username, "token.revoke", f"{username}/{token_id}"):
        api_tokens.revoke_token_of(db, username, token_id)
