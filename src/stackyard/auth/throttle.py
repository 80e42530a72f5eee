"""Slows down repeated failed sign-ins, per account and per client address."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from stackyard.errors import TooManyRequests


@dataclass
class _Failures:
    count: int
    last: float


class LoginThrottle:
    """After `free_attempts` failures, each further attempt must wait twice as long as
    the one before (from `base_delay` up to `max_delay`). A success clears the account.

    Keys are ("user", name) and ("ip", address); an address gets `ip_factor` times more
    free attempts than an account, so one user's typos do not lock out a whole office.
    """

    def __init__(
        self,
        free_attempts: int = 5,
        base_delay: float = 1.0,
        max_delay: float = 900.0,
        ip_factor: int = 4,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = 100_000,
    ) -> None:
        self.free_attempts = free_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.ip_factor = ip_factor
        self.clock = clock
        self.max_entries = max_entries
        self._failures: dict[tuple[str, str], _Failures] = {}
        self._lock = threading.Lock()

    def _keys(self, username: str, client_ip: str | None) -> list[tuple[str, str]]:
        keys = [("user", username.lower())]
        if client_ip:
            keys.append(("ip", client_ip))
        return keys

    def _wait(self, key: tuple[str, str], now: float) -> float:
        entry = self._failures.get(key)
        if entry is None:
            return 0.0
        free = self.free_attempts * (self.ip_factor if key[0] == "ip" else 1)
        over = entry.count - free
        if over < 0:
            return 0.0
        delay = min(self.base_delay * 2**over, self.max_delay)
        return max(0.0, entry.last + delay - now)

    def check(self, username: str, client_ip: str | None) -> None:
        now = self.clock()
        with self._lock:
            wait = max(self._wait(k, now) for k in self._keys(username, client_ip))
        if wait > 0:
            seconds = math.ceil(wait)
            raise TooManyRequests(
                f"Too many failed sign-ins. Try again in {seconds} "
                f"second{'s' if seconds != 1 else ''}.",
                seconds,
            )

    def failed(self, username: str, client_ip: str | None) -> None:
        now = self.clock()
        with self._lock:
            if len(self._failures) >= self.max_entries:
                self._forget_idle(now)
            for key in self._keys(username, client_ip):
                entry = self._failures.setdefault(key, _Failures(0, now))
                entry.count += 1
                entry.last = now

    def succeeded(self, username: str) -> None:
        with self._lock:
            self._failures.pop(("user", username.lower()), None)

    def _forget_idle(self, now: float) -> None:
        idle = [k for k, v in self._failures.items() if now - v.last > self.max_delay]
        for key in idle:
            del self._failures[key]
        if len(self._failures) >= self.max_entries:  # under attack: keep the newest half
            oldest = sorted(self._failures, key=lambda k: self._failures[k].last)
            for key in oldest[: len(oldest) // 2]:
                del self._failures[key]
