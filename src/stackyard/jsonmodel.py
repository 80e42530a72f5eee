"""What every model that reads a request body shares: JSON types as the schema says them;
and the one parse of JSON from outside (`parse_json`).

A body is read strictly (`0` is not a boolean, `"5"` is not a number), except that an
integer may be written `5.0`: JSON Schema's `integer` allows it, and clients that keep
every number as a float write it so.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def integral(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JsonInt = Annotated[int, BeforeValidator(integral)]
#: A database id in a JSON body, bounds in its schema (the bounds of an item of a list
#: must come before the validator, or the schema shows them as unknown keywords).
JsonId = Annotated[int, Field(ge=1, le=2**31 - 1), BeforeValidator(integral)]


class StrictModel(BaseModel):
    """A model read from JSON: strict types, no unknown fields."""

    model_config = ConfigDict(strict=True, extra="forbid")


def parse_json(raw: str | bytes) -> Any:
    """`json.loads` for what comes from outside (a client, an archive, an agent, a child
    process): ValueError for anything but JSON, a document nested too deeply included
    (the parser would raise RecursionError)."""
    try:
        return json.loads(raw)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc
