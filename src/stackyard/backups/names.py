"""The one function that names backup archives, for every kind of backup (by hand, by a
schedule, downloaded from an agent, pushed by the central service): the stack, the host
it was made on and the time, so that two hosts with a stack of the same name never
overwrite each other's archives."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from stackyard.errors import Invalid
from stackyard.slugs import slugify

SUFFIX = ".tar"
_NAME = re.compile(
    r"^(?P<stack>[a-z0-9][a-z0-9_-]*)--(?P<host>[a-z0-9][a-z0-9_-]*)--(?P<at>\d{8}T\d{6}Z)(?:-(?P<seq>\d+))?\.tar\Z"
)


def host_label(name: str) -> str:
    """A host's name as it goes into archive names (a slug; `host` when it has none)."""
    try:
        return slugify(name)
    except Invalid:
        return "host"


def archive_name(stack_id: str, host: str, at: datetime) -> str:
    """`<stack>--<host>--<UTC time>.tar`, e.g. `web--nas--20261123T150405Z.tar`."""
    stamp = at.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{slugify(stack_id)}--{host_label(host)}--{stamp}{SUFFIX}"


@dataclass(frozen=True)
class ArchiveName:
    """What a name this service gave says: the stack, the host and the time (`seq`: 2
    for `-2`, made in the same second as the name without it)."""

    name: str
    stack: str
    host: str
    at: datetime
    seq: int = 1


def parse_archive_name(name: str) -> ArchiveName | None:
    """The parts of a name this service gave; None for any other name."""
    found = _NAME.match(name)
    if found is None:
        return None
    at = datetime.strptime(found["at"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    return ArchiveName(name, found["stack"], found["host"], at, int(found["seq"] or 1))


def is_archive_name(name: str) -> bool:
    """Whether `name` is one this service gave (what remote listings show, say)."""
    return _NAME.match(name) is not None


def stack_of(name: str) -> str:
    """The stack an archive this service named belongs to (Invalid for any other name)."""
    parsed = parse_archive_name(name)
    if parsed is None:
        raise Invalid(f"{name!r} is not the name of an archive made by Stackyard")
    return parsed.stack
