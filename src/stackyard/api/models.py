"""What every request body and parameter shares."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict

#: Database ids fit a 32-bit signed integer on every supported database.
MAX_ID = 2**31 - 1


class Body(BaseModel):
    """A request body: values must have the JSON type the schema says (`0` is not a
    boolean, `"5"` is not a number)."""

    model_config = ConfigDict(strict=True)


DbId = Annotated[int, Path(ge=1, le=MAX_ID)]
Offset = Annotated[int, Query(ge=0, le=MAX_ID)]
