"""The fleet payload's last line of defence. It is computed from many parts (every
host's report, agents' answers) and one that fails in a way nobody foresaw must not leave
the dashboard with a bare 500: the failure becomes a `ComputeFailed` whose detail names
the exception and the line of Stackyard's code it came through (the UI shows it, a user
can report it), and its traceback is logged."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stackyard.errors import ComputeFailed, StackyardError

log = logging.getLogger(__name__)
_PACKAGE = Path(__file__).resolve().parents[1]


def origin(exc: BaseException) -> str:
    """`file:line` of the innermost frame of Stackyard's own code (where a library's
    error came from our call: "stackyard/fleet/dashboard.py:42"), else of the innermost
    frame. Our code is the package's folder, not the one that holds it (site-packages,
    once installed, holds the libraries too)."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if Path(f.filename).is_relative_to(_PACKAGE)]
    frame = (ours or frames)[-1]
    path = Path(frame.filename)
    shown = path.relative_to(_PACKAGE.parent) if path.is_relative_to(_PACKAGE) else path
    return f"{shown}:{frame.lineno}"


@contextmanager
def reported(what: str) -> Iterator[None]:
    """Any failure of the block but Stackyard's own errors (which say what went wrong
    already) as a `ComputeFailed`: "`what` could not be computed: ..."."""
    try:
        yield
    except StackyardError:
        raise
    except Exception as exc:
        log.exception("%s could not be computed", what)
        raise ComputeFailed(
            f"{what} could not be computed: {type(exc).__name__}: {exc} ({origin(exc)})"
        ) from exc
