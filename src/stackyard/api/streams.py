"""The end of a stream its client named: a page that leaves asks for it, and the stream
completes as any answer does (see `auth.streams.StreamEnds`). Served by every host, so
that a stream of an agent's, followed through the central, ends where it is made."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, status

from stackyard.api.deps import PrincipalDep, current_principal
from stackyard.auth.streams import STREAM_ENDS, STREAM_NAME
from stackyard.errors import NotFound

router = APIRouter(prefix="/streams", tags=["streams"], dependencies=[Depends(current_principal)])


@router.post("/{name}/end", operation_id="endStream", status_code=status.HTTP_204_NO_CONTENT)
def end_stream(
    name: Annotated[str, Path(pattern=STREAM_NAME.pattern)], principal: PrincipalDep
) -> None:
    """End the stream you opened with `?stream={name}`: it completes (an event stream
    without its `end` event). 404 when none of yours is open by that name (it ended)."""
    if not STREAM_ENDS.end(name, principal.username):
        raise NotFound("No stream of yours is open by that name (it has ended)")
