"""Who is making a request, how they proved it, and what their role lets them do."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Role(StrEnum):
    """From most to least powerful. Editing compose files can mount any host path, so
    only admins edit them; operators run actions; viewers read."""

    admin = "admin"
    operator = "operator"
    viewer = "viewer"

    def at_least(self, least: Role) -> bool:
        """Whether this role has what `least` has: each role has what the roles after it
        have (what each may do: `stackyard.auth.permissions`)."""
        return self.rank >= least.rank

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Role.viewer: 0, Role.operator: 1, Role.admin: 2}
#: Headers in which a central names, to its agent, the user it acts for and their role.
AGENT_USER_HEADER = "X-Stackyard-User"
AGENT_ROLE_HEADER = "X-Stackyard-Role"
#: Accounts made before the roles were split had the role `user` (actions and edits).
LEGACY_ROLES = {"user": Role.operator}


@dataclass(frozen=True)
class Principal:
    user_id: int
    username: str
    role: Role
    via: str  # "session", "token", or "agent" (on an agent, vouched for by its token)
    credential_hash: str  # of the session secret or API token that proved it
    session_secret: str | None = None
    #: An admin requires two-factor sign-in and this user has not set it up: until they
    #: do, their session reaches their own account's pages only.
    two_factor_due: bool = False

    @property
    def is_admin(self) -> bool:
        return self.role is Role.admin

    def has(self, role: Role) -> bool:
        """At least `role`."""
        return self.role.at_least(role)
