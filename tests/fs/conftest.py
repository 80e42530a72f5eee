import pytest

from stackyard.fs import beneath, syscalls


@pytest.fixture(params=["openat2", "walk"])
def resolver(request):
    """Each resolution test runs on the kernel's openat2 and on the fallback walk."""
    if request.param == "openat2" and not syscalls.openat2_available():
        pytest.skip("this kernel has no openat2")
    with beneath.using(request.param):
        yield request.param
