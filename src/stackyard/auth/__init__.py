"""Users, roles, sign-in sessions, API tokens, failed sign-in throttling, audit log."""
