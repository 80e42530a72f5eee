"""The one slugify every id from outside goes through."""

import pytest

from stackyard.errors import Invalid
from stackyard.slugs import MAX_LENGTH, SLUG, check_slug, slugify


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("web", "web"),
        ("My Stack", "my-stack"),
        ("  Home Assistant  ", "home-assistant"),
        ("under_score-dash", "under_score-dash"),
        ("Crème brûlée", "creme-brulee"),  # transliterated, not dropped
        ("a/../b", "a-b"),
        ("-leading-and-trailing_", "leading-and-trailing"),
        ("UPPER123", "upper123"),
        ("dots.in.name", "dots-in-name"),
    ],
)
def test_names_become_compose_safe_ids(name, slug):
    assert slugify(name) == slug
    assert SLUG.match(slug)


def test_a_trailing_newline_is_no_slug():
    """`$` would match before it: the pattern ends with `\\Z`."""
    assert SLUG.match("web\n") is None


def test_long_names_are_cut_to_the_maximum():
    slug = slugify("x" * 200)
    assert slug == "x" * MAX_LENGTH


@pytest.mark.parametrize("name", ["", "   ", "../..", "...", "/", "---", "__", "\n"])
def test_nothing_usable_left_is_invalid(name):
    with pytest.raises(Invalid, match="usable id"):
        slugify(name)


@pytest.mark.parametrize("stack_id", ["web", "a-b_c", "0day", "x" * MAX_LENGTH])
def test_ids_in_paths_that_are_slugs_pass_as_they_are(stack_id):
    assert check_slug(stack_id) == stack_id


@pytest.mark.parametrize(
    "stack_id",
    ["", "Web", "-web", "_web", "a b", "a/b", "..", "a.b", "x" * (MAX_LENGTH + 1), "web\n"],
)
def test_ids_in_paths_are_never_renamed_quietly(stack_id):
    with pytest.raises(Invalid, match="not a valid id"):
        check_slug(stack_id)


def test_archive_names_tell_hosts_apart():
    """Two hosts with a stack of the same name never write the same archive name."""
    from datetime import UTC, datetime

    from stackyard.backups.names import archive_name, is_archive_name

    at = datetime(2026, 11, 23, 15, 4, 5, tzinfo=UTC)
    first, second = archive_name("web", "nas", at), archive_name("web", "Pi 4", at)
    assert first == "web--nas--20261123T150405Z.tar"
    assert second == "web--pi-4--20261123T150405Z.tar" and first != second
    assert is_archive_name(first) and not is_archive_name("../web.tar")
