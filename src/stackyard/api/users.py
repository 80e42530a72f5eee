"""User administration (admin only, audited)."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Depends, status
from pydantic import BaseModel, Field

from stackyard.api.deps import AdminDep, DbDep, require_admin
from stackyard.auth import users
from stackyard.auth.principal import Role

router = APIRouter(prefix="/users", tags=["users"], dependencies=[Depends(require_admin)])


class UserIn(BaseModel):
    username: str = Field(max_length=64)
    password: str = Field(max_length=1024)
    role: Role = Role.user


class PasswordIn(BaseModel):
    password: str = Field(max_length=1024)


class UserRow(BaseModel):
    id: int
    username: str
    role: Role
    created_at: datetime


@router.get("", operation_id="listUsers")
def list_users(db: DbDep) -> list[UserRow]:
    return [UserRow.model_validate(u, from_attributes=True) for u in users.list_users(db)]


@router.post("", operation_id="createUser", status_code=status.HTTP_201_CREATED)
def create_user(body: UserIn, admin: AdminDep, db: DbDep) -> UserRow:
    user = users.create_user(db, admin.username, body.username, body.password, body.role)
    return UserRow.model_validate(user, from_attributes=True)


@router.put(
    "/{username}/password", operation_id="setUserPassword", status_code=status.HTTP_204_NO_CONTENT
)
def set_password(username: str, body: PasswordIn, admin: AdminDep, db: DbDep) -> None:
    users.set_password(db, admin.username, username, body.password)


@router.delete("/{username}", operation_id="deleteUser", status_code=status.HTTP_204_NO_CONTENT)
def delete_user(username: str, admin: AdminDep, db: DbDep) -> None:
    users.delete_user(db, admin.username, username)
