"""A fleet payload that fails in a way nobody foresaw (`fleet.failures`): a ComputeFailed
that names the exception and the line of our code it came through; our own errors pass."""

import re

import pytest

from stackyard.errors import ComputeFailed, Unavailable
from stackyard.fleet.dashboard import merge
from stackyard.fleet.failures import reported


def test_an_unforeseen_failure_names_the_exception_and_our_line():
    with pytest.raises(ComputeFailed) as caught, reported("The fleet payload"):
        merge([None])
    detail = caught.value.detail
    assert detail.startswith("The fleet payload could not be computed: AttributeError: ")
    # The innermost frame of Stackyard's code, shown from the package's name.
    assert re.search(r"\(stackyard/fleet/dashboard\.py:\d+\)$", detail), detail
    assert isinstance(caught.value.__cause__, AttributeError)


def test_our_own_errors_pass_as_they_are():
    with pytest.raises(Unavailable, match="engine"), reported("The fleet payload"):
        raise Unavailable("The engine is away")
