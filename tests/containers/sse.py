"""Reading a Server-Sent Events stream in tests."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx


def events(response: httpx.Response) -> Iterator[tuple[str, object]]:
    """(event, data) pairs of an open SSE response, as they arrive."""
    name, data = "message", []
    for line in response.iter_lines():
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            data.append(line.split(":", 1)[1].strip())
        elif not line and data:
            yield name, json.loads("\n".join(data))
            name, data = "message", []
