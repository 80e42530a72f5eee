"""A git stack's `.env`: the host's file, with the repository's `.env` as its template.
The keys the host's file lacks are added from the repository's (under a comment that
says where they come from); a key the host's file sets keeps the host's value, so that
secrets stay out of git and an edit here is never overwritten by a push."""

from __future__ import annotations

import re

_KEY = re.compile(rb"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=")
MARK = b"# From the repository's .env (set a key above to change it here):"


def _keys(text: bytes) -> set[bytes]:
    return {m.group(1) for line in text.splitlines() if (m := _KEY.match(line))}


def layered_env(repository: bytes | None, here: bytes | None) -> bytes | None:
    """The stack's `.env`: `here` (the host's, its repository part taken off) with the
    repository's lines for the keys it does not set; None when neither has one."""
    own = (here or b"").split(b"\n" + MARK, 1)[0].split(MARK, 1)[0].rstrip(b"\n")
    if repository is None:
        return None if here is None else own + b"\n" if own else b""
    mine = _keys(own)
    added = [
        line
        for line in repository.splitlines()
        if (m := _KEY.match(line)) is not None and m.group(1) not in mine
    ]
    if not added:
        return own + b"\n" if own else b""
    head = own + b"\n\n" if own else b""
    return head + MARK + b"\n" + b"\n".join(added) + b"\n"
