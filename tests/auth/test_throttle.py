import pytest

from stackyard.auth.throttle import LoginThrottle
from stackyard.errors import TooManyRequests


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_free_attempts_then_doubling_waits():
    clock = Clock()
    throttle = LoginThrottle(free_attempts=3, base_delay=2, clock=clock)
    for _ in range(3):
        throttle.check("bob", "10.0.0.1")
        throttle.failed("bob", "10.0.0.1")
    with pytest.raises(TooManyRequests) as caught:
        throttle.check("bob", "10.0.0.1")
    assert caught.value.retry_after == 2
    clock.now += 2
    throttle.check("bob", "10.0.0.1")
    throttle.failed("bob", "10.0.0.1")
    with pytest.raises(TooManyRequests) as caught:
        throttle.check("bob", "10.0.0.1")
    assert caught.value.retry_after == 4


def test_account_is_throttled_from_any_address_and_success_clears_it():
    clock = Clock()
    throttle = LoginThrottle(free_attempts=2, clock=clock)
    throttle.failed("bob", "10.0.0.1")
    throttle.failed("BOB", "10.0.0.2")
    with pytest.raises(TooManyRequests):
        throttle.check("bob", "10.0.0.3")
    throttle.check("carol", "10.0.0.3")  # other accounts are not affected
    clock.now += 10
    throttle.succeeded("bob")
    throttle.check("bob", "10.0.0.3")


def test_address_spraying_many_accounts_is_throttled():
    throttle = LoginThrottle(free_attempts=2, ip_factor=3, clock=Clock())
    for i in range(6):
        throttle.failed(f"user{i}", "10.0.0.9")
    with pytest.raises(TooManyRequests):
        throttle.check("someone-new", "10.0.0.9")


def test_wait_is_capped_and_memory_is_bounded():
    clock = Clock()
    throttle = LoginThrottle(
        free_attempts=1, base_delay=1, max_delay=60, clock=clock, max_entries=10
    )
    for _ in range(50):
        throttle.failed("bob", None)
    with pytest.raises(TooManyRequests) as caught:
        throttle.check("bob", None)
    assert caught.value.retry_after == 60
    for i in range(100):
        throttle.failed(f"u{i}", None)
    assert len(throttle._failures) <= 10
