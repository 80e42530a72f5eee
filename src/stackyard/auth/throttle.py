"""Slows down guessing of passwords without letting an attacker lock anyone out.

Three counters of failed sign-ins, each with free attempts and then waits that double
(from `base_delay` up to `max_delay`):

- per account *and* address: the guesser is refused (429) from where they guess;
- per address, across accounts (more free attempts): spraying many accounts is refused;
- per account, across addresses: never refused. Once over, each attempt on the account
  waits `account_delay` seconds first, and the attempts from one address run one at a
  time: a distributed guesser gets about one guess per delay per address (each address
  soon refused by its own counters), while the owner, from an address of their own, waits
  only the delay, never behind the guessers' queue.

Every attempt counts as a failure from the moment it begins (`begin`), and is taken back
when it succeeds (`succeeded`): concurrent guesses count at once, so sending many
requests at the same time gets no more guesses than sending them one after another.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from stackyard.errors import TooManyRequests

Key = tuple[str, ...]


@dataclass
class _Failures:
    count: int
    last: float


class LoginThrottle:
    def __init__(
        self,
        free_attempts: int = 5,
        base_delay: float = 1.0,
        max_delay: float = 900.0,
        address_factor: int = 10,
        account_factor: int = 2,
        account_delay: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = 100_000,
    ) -> None:
        self.free_attempts = free_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.address_factor = address_factor
        self.account_factor = account_factor
        self.account_delay = account_delay
        self.clock = clock
        self.max_entries = max_entries
        self._failures: dict[Key, _Failures] = {}
        #: Told (account, failures) when an account's failed sign-ins reach the point where
        #: it is slowed down, once each time (notifications).
        self.attacked: Callable[[str, int], None] | None = None
        self._lock = threading.Lock()
        self._serial: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    @staticmethod
    def _keys(username: str, address: str | None) -> list[Key]:
        name = username.lower()
        keys: list[Key] = [("account", name)]
        if address:
            keys += [("pair", name, address), ("address", address)]
        return keys

    def _free(self, key: Key) -> int:
        factor = {"pair": 1, "address": self.address_factor, "account": self.account_factor}
        return self.free_attempts * factor[key[0]]

    def _wait(self, key: Key, now: float) -> float:
        entry = self._failures.get(key)
        if entry is None or now - entry.last > self.max_delay:
            return 0.0
        over = entry.count - self._free(key)
        if over < 0:
            return 0.0
        delay = min(self.base_delay * 2**over, self.max_delay)
        return float(max(0.0, entry.last + delay - now))

    def begin(self, username: str, address: str | None) -> float:
        """Refuse (TooManyRequests) a guesser's pair or address; otherwise count the
        attempt as failed until `succeeded` takes it back, and return the seconds it must
        wait first (0.0, or `account_delay` for an account under attack)."""
        now = self.clock()
        with self._lock:
            keys = self._keys(username, address)
            refused = max((self._wait(k, now) for k in keys if k[0] != "account"), default=0.0)
            attacked = self._wait(keys[0], now) > 0
            if refused <= 0:
                self._count(keys, now)
            failures = self._failures.get(keys[0])
            newly = failures is not None and failures.count == self._free(keys[0]) + 1
        if newly and failures is not None and self.attacked is not None:
            self.attacked(username, failures.count - 1)
        if refused > 0:
            seconds = math.ceil(refused)
            raise TooManyRequests(
                f"Too many failed sign-ins. Try again in {seconds} "
                f"second{'s' if seconds != 1 else ''}.",
                seconds,
            )
        return self.account_delay if attacked else 0.0

    def serial(self, username: str, address: str | None) -> asyncio.Lock:
        """One attempt at a time per account and address on an account under attack."""
        key = f"{username.lower()}\0{address or ''}"
        lock = self._serial.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._serial[key] = lock
        return lock

    def _count(self, keys: list[Key], now: float) -> None:
        if len(self._failures) >= self.max_entries:
            self._forget_idle(now)
        for key in keys:
            entry = self._failures.setdefault(key, _Failures(0, now))
            entry.count += 1
            entry.last = now

    def succeeded(self, username: str, address: str | None) -> None:
        """The right password: the account's and the pair's failures are forgotten, and
        this attempt no longer counts against the address."""
        name = username.lower()
        with self._lock:
            self._failures.pop(("account", name), None)
            if address:
                self._failures.pop(("pair", name, address), None)
                entry = self._failures.get(("address", address))
                if entry is not None:
                    entry.count = max(0, entry.count - 1)

    def _forget_idle(self, now: float) -> None:
        idle = [k for k, v in self._failures.items() if now - v.last > self.max_delay]
        for key in idle:
            del self._failures[key]
        if len(self._failures) >= self.max_entries:  # under attack: keep the newest half
            oldest = sorted(self._failures, key=lambda k: self._failures[k].last)
            for key in oldest[: len(oldest) // 2]:
                del self._failures[key]
