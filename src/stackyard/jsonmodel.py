"""What every model that reads a request body shares: JSON types as the schema says them.

A body is read strictly (`0` is not a boolean, `"5"` is not a number), except that an
integer may be written `5.0`: JSON Schema's `integer` allows it, and clients that keep
every number as a float write it so.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict


def _integral(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JsonInt = Annotated[int, BeforeValidator(_integral)]


class StrictModel(BaseModel):
    """A model read from JSON: strict types, no unknown fields."""

    model_config = ConfigDict(strict=True, extra="forbid")
