"""Which agents a central can talk to, and what an agent serves.

The agent routes change only with a major version (a minor one while the version is
0.x, as semver allows): a central talks to every agent of its own line, older or newer.
An agent also lists its capabilities, so that a central shows a missing one as missing
(as Sencho does), not as an error deep inside a page."""

from __future__ import annotations

from stackyard.version import SemVer, parse_semver

#: What an agent of this version serves under /agent.
CAPABILITIES = ("stacks", "updates", "logs", "shell", "usage", "files", "backups", "fleet")


def _line(version: SemVer) -> str:
    return f"{version.major}.x" if version.major else f"0.{version.minor}.x"


def incompatibility(central: str, agent: str) -> str | None:
    """Why a central of version `central` cannot talk to an agent of version `agent`, or
    None when it can."""
    try:
        ours, theirs = parse_semver(central), parse_semver(agent)
    except ValueError:
        return f"The agent reports version {agent!r}, which is not a semantic version"
    if _line(ours) == _line(theirs):
        return None
    return (
        f"The agent runs version {agent}; this central ({central}) talks to agents "
        f"{_line(ours)}: update the {'agent' if theirs.sort_key() < ours.sort_key() else 'central'}"
    )
