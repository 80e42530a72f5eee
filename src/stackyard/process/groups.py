"""Signals to a whole process group: a child and everything it started (each child runs in
a session of its own, so its group id is its pid). Shared by `children`, which stops its
children, and `request_scope`, which kills those of a request whose client went away."""

from __future__ import annotations

import os


def signal_group(pgid: int, sig: int) -> bool:
    """Signal a whole group; False when it has no process left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # not ours (any more): leave it alone
        return False
    return True
