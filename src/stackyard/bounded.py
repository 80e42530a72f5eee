"""Reading a peer's answer without trusting its size."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx


async def read_at_most(response: httpx.Response, limit: int) -> bytes | None:
    """The (decoded) body of a streamed answer, closed after; None as soon as it passes
    `limit` bytes, without reading the rest."""
    try:
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                return None
        return bytes(body)
    finally:
        await response.aclose()
