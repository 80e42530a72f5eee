"""Which agents a central can talk to, and what an agent serves.

The agent routes change only with a major version (a minor one while the version is
0.x, as semver allows): a central talks to every agent of its own line, older or newer.
An agent also lists its capabilities, so that a central shows a missing one as missing
(as Sencho does), not as an error deep inside a page."""

from __future__ import annotations

import functools
from typing import Annotated, Final, Literal, get_args

from pydantic import BeforeValidator

from stackyard.version import SemVer, parse_semver

#: What an agent may serve under /agent (the UI names them from the schema).
Capability = Literal[
    "stacks",
    "updates",
    "logs",
    "shell",
    "usage",
    "files",
    "backups",
    "fleet",
    "containers",
    "events",
    "disk",
]
#: What an agent of this version serves.
CAPABILITIES: Final[tuple[Capability, ...]] = get_args(Capability)


def _known(names: object) -> object:
    """A capability a newer agent lists and this version does not know, it cannot use:
    it is left out (the rest of the answer is still checked)."""
    if isinstance(names, list):
        return [name for name in names if name in CAPABILITIES]
    return names


#: The capabilities a host serves, as served and as read from an agent.
Capabilities = Annotated[list[Capability], BeforeValidator(_known)]


def _line(version: SemVer) -> str:
    return f"{version.major}.x" if version.major else f"0.{version.minor}.x"


@functools.cache  # (asked for every agent at every dashboard: a few versions in all)
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
