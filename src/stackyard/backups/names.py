"""The one function that names backup archives, for every kind of backup (by hand, by a
schedule, downloaded from an agent, pushed by the central service): the stack, the host
it was made on and the time, so that two hosts with a stack of the same name never
overwrite each other's archives."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from stackyard.errors import Invalid
from stackyard.slugs import slugify

SUFFIX = ".tar"
_NAME = re.compile(
    r"^(?P<stack>[a-z0-9][a-z0-9_-]*)--(?P<host>[a-z0-9][a-z0-9_-]*)--(?P<at>\d{8}T\d{6}Z)(?:-\d+)?\.tar\Z"
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


def is_archive_name(name: str) -> bool:
    """Whether `name` is one this service gave (what remote listings show, say)."""
    return _NAME.match(name) is not None
