import pytest

from stackyard.auth.throttle import LoginThrottle
from stackyard.errors import TooManyRequests


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_guesser_is_refused_from_its_address_with_doubling_waits():
    clock = Clock()
    throttle = LoginThrottle(free_attempts=3, base_delay=2, clock=clock)
    for _ in range(3):
        assert throttle.check("bob", "10.0.0.1") == 0.0
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


def test_the_owner_elsewhere_is_slowed_but_never_locked_out():
    """Guesses against bob from many addresses make each attempt on bob wait a little
    (one at a time), but bob, from his own address, is not refused."""
    throttle = LoginThrottle(free_attempts=2, account_factor=2, account_delay=1.5, clock=Clock())
    for i in range(20):
        throttle.failed("bob", f"10.0.0.{i % 4}")
    assert throttle.check("bob", "192.168.1.5") == 1.5  # delayed, not refused
    assert throttle.check("carol", "192.168.1.5") == 0.0  # other accounts are not affected
    with pytest.raises(TooManyRequests):
        throttle.check("bob", "10.0.0.3")  # a guessing address is refused outright
    throttle.succeeded("bob", "192.168.1.5")
    assert throttle.check("bob", "192.168.1.5") == 0.0


def test_address_spraying_many_accounts_is_refused():
    throttle = LoginThrottle(free_attempts=2, address_factor=3, clock=Clock())
    for i in range(6):
        throttle.failed(f"user{i}", "10.0.0.9")
    with pytest.raises(TooManyRequests):
        throttle.check("someone-new", "10.0.0.9")
    assert throttle.check("someone-new", "10.0.0.10") == 0.0


def test_wait_is_capped_and_memory_is_bounded():
    clock = Clock()
    throttle = LoginThrottle(
        free_attempts=1, base_delay=1, max_delay=60, clock=clock, max_entries=10
    )
    for _ in range(50):
        throttle.failed("bob", "10.0.0.1")
    with pytest.raises(TooManyRequests) as caught:
        throttle.check("bob", "10.0.0.1")
    assert caught.value.retry_after == 60
    for i in range(100):
        throttle.failed(f"u{i}", None)
    assert len(throttle._failures) <= 10
