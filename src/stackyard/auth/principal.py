"""Who is making a request, and how they proved it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Role(StrEnum):
    admin = "admin"
    user = "user"


@dataclass(frozen=True)
class Principal:
    user_id: int
    username: str
    role: Role
    via: str  # "session" or "token"
    session_secret: str | None = None

    @property
    def is_admin(self) -> bool:
        return self.role is Role.admin
