import re
import tomllib
from pathlib import Path

import pytest

from stackyard import __version__
from stackyard.version import parse_semver


def test_package_version_is_semver_and_single_sourced():
    parse_semver(__version__)
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert "version" in pyproject["project"]["dynamic"]
    assert "version" not in pyproject["project"]


def test_ordering_follows_semver():
    ordered = [
        "0.9.9",
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.10.0",
        "2.0.0",
    ]
    keys = [parse_semver(v).sort_key() for v in ordered]
    assert keys == sorted(keys)
    assert parse_semver("v1.2.3") == parse_semver("1.2.3")


@pytest.mark.parametrize("text", ["latest", "1.2", "01.2.3", "1.2.3.4", ""])
def test_rejects_non_semver(text):
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        parse_semver(text)
