"""The one slugify every id from outside goes through (stack names, manifest stack ids)."""

from __future__ import annotations

import re

from slugify import slugify as _slugify

from stackyard.errors import Invalid

MAX_LENGTH = 63
#: Also a valid compose project name, so a stack's folder name is its project name.
#: `\Z`, not `$`: "$" also matches before a trailing newline ("web\n" is no slug).
SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]*\Z")


def slugify(name: str) -> str:
    """A safe id for `name`, or Invalid when nothing usable is left (`../..`, `...`)."""
    slug = _slugify(name, max_length=MAX_LENGTH, word_boundary=False, regex_pattern=r"[^a-z0-9_-]+")
    slug = slug.strip("-_")
    if not SLUG.match(slug):
        raise Invalid(f"{name!r} does not make a usable id (use letters, digits, '-' or '_')")
    return slug


def check_slug(stack_id: str) -> str:
    """An id given in a path must already be a slug: no quiet renaming of addresses."""
    if len(stack_id) > MAX_LENGTH or not SLUG.match(stack_id):
        raise Invalid(f"{stack_id!r} is not a valid id")
    return stack_id
