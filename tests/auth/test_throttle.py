import asyncio
import contextlib

import pytest

from stackyard.auth.throttle import CodeLimit, LoginThrottle, source
from stackyard.errors import TooManyRequests


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def guess(throttle: LoginThrottle, username: str, address: str | None) -> None:
    """A wrong guess: begun, never taken back (refused ones are not counted)."""
    with contextlib.suppress(TooManyRequests):
        throttle.begin(username, address)


def test_a_guesser_is_refused_from_its_address_with_doubling_waits():
    clock = Clock()
    throttle = LoginThrottle(free_attempts=3, base_delay=2, clock=clock)
    for _ in range(3):
        assert throttle.begin("bob", "10.0.0.1") == 0.0
    with pytest.raises(TooManyRequests) as caught:
        throttle.begin("bob", "10.0.0.1")
    assert caught.value.retry_after == 2
    clock.now += 2
    throttle.begin("bob", "10.0.0.1")
    with pytest.raises(TooManyRequests) as caught:
        throttle.begin("bob", "10.0.0.1")
    assert caught.value.retry_after == 4


def test_attempts_count_when_they_begin_so_concurrent_guesses_gain_nothing():
    """Five attempts in flight at once from one address use up the free ones: the sixth
    is refused before any of them has finished."""
    throttle = LoginThrottle(free_attempts=5, clock=Clock())
    for _ in range(5):
        throttle.begin("bob", "10.0.0.1")  # none has ended yet
    with pytest.raises(TooManyRequests):
        throttle.begin("bob", "10.0.0.1")


def test_a_right_password_takes_its_attempt_back():
    throttle = LoginThrottle(free_attempts=2, address_factor=1, clock=Clock())
    for _ in range(10):
        throttle.begin("bob", "10.0.0.1")
        throttle.succeeded("bob", "10.0.0.1")
    assert throttle.begin("bob", "10.0.0.1") == 0.0  # ten sign-ins are no guessing


def test_the_owner_elsewhere_is_slowed_but_never_locked_out():
    """Guesses against bob from many addresses make each attempt on bob wait a little,
    but bob, from his own address, is not refused."""
    throttle = LoginThrottle(free_attempts=2, account_factor=2, account_delay=1.5, clock=Clock())
    for i in range(20):
        guess(throttle, "bob", f"10.0.0.{i % 4}")
    assert throttle.begin("bob", "192.168.1.5") == 1.5  # delayed, not refused
    assert throttle.begin("carol", "192.168.1.5") == 0.0  # other accounts are not affected
    with pytest.raises(TooManyRequests):
        throttle.begin("bob", "10.0.0.3")  # a guessing address is refused outright
    throttle.succeeded("bob", "192.168.1.5")
    assert throttle.begin("bob", "192.168.1.5") == 0.0


def test_attempts_wait_in_line_per_address_not_per_account():
    throttle = LoginThrottle()
    guesser = throttle.serial("bob", "10.0.0.1")
    assert throttle.serial("bob", "10.0.0.1") is guesser
    assert throttle.serial("BOB", "10.0.0.1") is guesser
    assert throttle.serial("bob", "192.168.1.5") is not guesser

    async def owner_waits_for_nobody() -> bool:
        async with guesser:
            mine = throttle.serial("bob", "192.168.1.5")
            await asyncio.wait_for(mine.acquire(), 1)
            mine.release()
            return True

    assert asyncio.run(owner_waits_for_nobody())


def test_address_spraying_many_accounts_is_refused():
    throttle = LoginThrottle(free_attempts=2, address_factor=3, clock=Clock())
    for i in range(6):
        guess(throttle, f"user{i}", "10.0.0.9")
    with pytest.raises(TooManyRequests):
        throttle.begin("someone-new", "10.0.0.9")
    assert throttle.begin("someone-new", "10.0.0.10") == 0.0


def test_wait_is_capped_and_memory_is_bounded():
    clock = Clock()
    throttle = LoginThrottle(
        free_attempts=1, base_delay=1, max_delay=60, clock=clock, max_entries=10
    )
    for _ in range(50):
        guess(throttle, "bob", "10.0.0.1")
        clock.now += 61  # each guess after the last wait ended
    clock.now -= 61
    with pytest.raises(TooManyRequests) as caught:
        throttle.begin("bob", "10.0.0.1")
    assert caught.value.retry_after == 60
    for i in range(100):
        guess(throttle, f"u{i}", None)
    assert len(throttle._failures) <= 10


def test_an_account_under_attack_is_told_once_each_time_it_comes_under_attack():
    """The account's failures reaching the point where it is slowed are news (a
    notification), once; after a right password, again when it happens again."""
    told: list[tuple[str, int]] = []
    throttle = LoginThrottle(free_attempts=2, account_factor=2, clock=Clock())
    throttle.attacked = lambda account, failures: told.append((account, failures))
    for n in range(8):  # from ever new addresses: only the account's count grows
        guess(throttle, "Bob", f"10.0.0.{n}")
    assert told == [("Bob", 4)]
    throttle.succeeded("bob", "10.0.0.99")
    for n in range(5):
        guess(throttle, "bob", f"10.0.1.{n}")
    assert told == [("Bob", 4), ("bob", 4)]


def test_an_ipv6_address_counts_as_its_64():
    """Whoever holds one IPv6 address holds its /64: guessing from each of its addresses
    in turn is guessing from one place."""
    assert source("2001:db8:1:2::5") == source("2001:db8:1:2:ffff::9") == "2001:db8:1:2::/64"
    assert source("2001:db8:1:3::5") != source("2001:db8:1:2::5")
    assert source("::ffff:10.0.0.1") == "10.0.0.1" and source("10.0.0.1") == "10.0.0.1"
    throttle = LoginThrottle(free_attempts=3, clock=Clock())
    for n in range(3):
        guess(throttle, "bob", f"2001:db8:1:2::{n + 1}")
    with pytest.raises(TooManyRequests):
        throttle.begin("bob", "2001:db8:1:2::abcd")


def test_codes_per_account_go_one_at_a_time_with_growing_waits_whatever_the_address():
    clock = Clock()
    codes = CodeLimit(free_codes=3, base_delay=2, max_delay=16, clock=clock)
    for _ in range(3):  # the free ones, even at once (each counted as it begins)
        codes.begin("bob")
    with pytest.raises(TooManyRequests) as caught:
        codes.begin("BOB")  # from anywhere: the account's limit
    assert caught.value.retry_after == 2 and "recovery code" in caught.value.detail
    for _ in range(3):
        codes.end("bob", right=False)
    waits = []
    for _ in range(5):
        with pytest.raises(TooManyRequests) as caught:
            codes.begin("bob")
        waits.append(caught.value.retry_after)
        clock.now += caught.value.retry_after
        codes.begin("bob")
        with pytest.raises(TooManyRequests):  # one at a time: the next waits for this one
            codes.begin("bob")
        codes.end("bob", right=False)
    assert waits == [2, 4, 8, 16, 16]  # doubling, capped
    assert codes.begin("carol") is None  # other accounts are not affected


def test_a_right_code_or_a_quiet_hour_forgets_the_wrong_ones_and_a_refused_attempt_is_no_code():
    clock = Clock()
    codes = CodeLimit(free_codes=2, base_delay=2, forget_after=3600, clock=clock)
    for _ in range(2):
        codes.begin("bob")
        codes.end("bob", right=False)
    clock.now += 2
    codes.begin("bob")
    codes.end("bob", right=True)  # the owner's code: the account starts afresh
    for _ in range(2):
        codes.begin("bob")
        codes.end("bob", right=False)
    with pytest.raises(TooManyRequests):
        codes.begin("bob")
    clock.now += 3601
    codes.begin("bob")  # after a quiet hour
    codes.end("bob", right=False, checked=False)  # refused before its check: not counted
    codes.begin("bob")
